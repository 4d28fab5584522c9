/**
 * Temperature scaling (Guo et al., 2017): one T per question type, chosen to minimise the mean
 * negative log-likelihood of softmax(logits / T) on the fit records.
 *
 * In β = 1/T the objective f(β) = mean[logsumexp(β·z) − β·z_label] is convex (f'' is a mean of
 * variances), so in log T it is unimodal: golden-section search over log T ∈ [log 0.05, log 20]
 * finds the basin without derivatives, then Newton steps in β (exact f', f'') polish it.
 * Everything is deterministic: no random restarts, a fixed iteration budget.
 */
import { inputError } from './errors.js';
import { logSumExp, scaledSoftmax } from './softmax.js';
import { MAX_TEMPERATURE, MIN_TEMPERATURE } from './types.js';

export interface LabelledLogits {
  logits: ArrayLike<number>;
  label: number;
}

export interface TemperatureFit {
  temperature: number;
  /** Mean NLL at the fitted temperature (nats). */
  nll: number;
  /** True when the optimum lies on the search range's edge (the data wanted a T beyond it). */
  atBound: boolean;
}

/** Mean −log softmax(logits / T)[label], float64, stable log-sum-exp. */
export function meanNll(records: readonly LabelledLogits[], temperature: number): number {
  let total = 0;
  for (const { logits, label } of records) {
    total += logSumExp(logits, temperature) - (logits[label] as number) / temperature;
  }
  return total / records.length;
}

/** f(β), f'(β), f''(β) of the mean NLL in β = 1/T. */
function derivativesInBeta(records: readonly LabelledLogits[], beta: number) {
  let value = 0;
  let first = 0;
  let second = 0;
  for (const { logits, label } of records) {
    const p = scaledSoftmax(logits, 1 / beta);
    let mean = 0;
    for (let i = 0; i < logits.length; i++) mean += (p[i] as number) * (logits[i] as number);
    let variance = 0;
    for (let i = 0; i < logits.length; i++) {
      const d = (logits[i] as number) - mean;
      variance += (p[i] as number) * d * d;
    }
    const zLabel = logits[label] as number;
    value += logSumExp(logits, 1 / beta) - beta * zLabel;
    first += mean - zLabel;
    second += variance;
  }
  const n = records.length;
  return { value: value / n, first: first / n, second: second / n };
}

const GOLDEN = (Math.sqrt(5) - 1) / 2;
/** Golden-section stops when the log T bracket is this narrow (T known to ~1e-6 relative). */
const LOG_T_TOLERANCE = 1e-6;
const NEWTON_STEPS = 6;

/** True when no record's logits differ: every T gives the same likelihood. */
function allFlat(records: readonly LabelledLogits[]): boolean {
  return records.every(({ logits }) => {
    for (let i = 1; i < logits.length; i++) if (logits[i] !== logits[0]) return false;
    return true;
  });
}

function checkRecords(records: readonly LabelledLogits[]): void {
  if (records.length === 0) throw inputError('fitTemperature: no records');
  records.forEach(({ logits, label }, k) => {
    if (logits.length < 2) throw inputError(`record ${k}: needs at least 2 logits`);
    if (!Number.isInteger(label) || label < 0 || label >= logits.length) {
      throw inputError(`record ${k}: label ${label} is not an index into ${logits.length} logits`);
    }
    for (let i = 0; i < logits.length; i++) {
      if (!Number.isFinite(logits[i])) throw inputError(`record ${k}: logit ${i} is not finite`);
    }
  });
}

/** The likelihood-optimal temperature in [MIN_TEMPERATURE, MAX_TEMPERATURE]. */
export function fitTemperature(records: readonly LabelledLogits[]): TemperatureFit {
  checkRecords(records);
  if (allFlat(records)) return { temperature: 1, nll: meanNll(records, 1), atBound: false };

  const objective = (logT: number) => meanNll(records, Math.exp(logT));
  let lo = Math.log(MIN_TEMPERATURE);
  let hi = Math.log(MAX_TEMPERATURE);
  let a = hi - GOLDEN * (hi - lo);
  let b = lo + GOLDEN * (hi - lo);
  let fa = objective(a);
  let fb = objective(b);
  while (hi - lo > LOG_T_TOLERANCE) {
    if (fa <= fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - GOLDEN * (hi - lo);
      fa = objective(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + GOLDEN * (hi - lo);
      fb = objective(b);
    }
  }

  // Newton in β, kept inside the range and only while it lowers the objective.
  const betaMin = 1 / MAX_TEMPERATURE;
  const betaMax = 1 / MIN_TEMPERATURE;
  let beta = Math.exp(-(lo + hi) / 2);
  let current = derivativesInBeta(records, beta);
  for (let step = 0; step < NEWTON_STEPS && current.second > 1e-300; step++) {
    const next = Math.min(betaMax, Math.max(betaMin, beta - current.first / current.second));
    if (next === beta) break;
    const candidate = derivativesInBeta(records, next);
    if (!(candidate.value <= current.value)) break;
    beta = next;
    current = candidate;
  }
  // Clamped: 1 / (1 / 20) may land an ulp outside the range the file parser accepts.
  const temperature = Math.min(MAX_TEMPERATURE, Math.max(MIN_TEMPERATURE, 1 / beta));
  const edge = 1e-5;
  const atBound =
    temperature <= MIN_TEMPERATURE * (1 + edge) || temperature >= MAX_TEMPERATURE * (1 - edge);
  return { temperature, nll: current.value, atBound };
}
