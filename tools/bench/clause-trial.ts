/**
 * A trial of a design, not the product (dev only): pooling clause by clause. Can a model that
 * weighs each clause's evidence on its own tell "delete prod, keep temp" from "delete temp, keep
 * prod", where a bag of the same four words cannot?
 *
 *   npx tsx tools/bench/clause-trial.ts [--tasks failing,gate,urgency] [--label NAME]
 *     [--with-pairs] [--clinc-draws N [--clinc-seed 1]] [--probe TEXT]...
 *     [--kinds bag,clause,prefix,pointer,both,heads,shared] [--split every|first]
 *     [--augment K --background OPTION]
 *
 * (`--with-pairs` adds each task's optional contrasting lines to its training, as
 * train-small.ts does; `--clinc-draws` adds train-small.ts's CLINC150 draws: 6 intents and
 * `other`, 40 training queries each; each `--probe` is a text every model is asked, its answer
 * printed and kept in the results; `--split first` ends only the first clause at a break, so a
 * state has at most two, as the flag layer's clause head marks them; `--augment` trains on the
 * file's own lines joined two by two as well, labelled by the line that is not the background
 * option's: see `augmented` below.)
 *
 * Word-level softmax regressions on the project's small tasks (data/tasks), fitted on the
 * training file and judged on its test files with the figures train-small.ts reports:
 *
 *   bag:     logit_c = b_c + Σ_t W[c, w_t] / n
 *   clause:  logit_c = b_c + Σ_k a_kc · E_kc,   E_kc = Σ_{t in clause k} W[c, w_t] / n,
 *            a_·c = softmax over the clauses k of β · E_kc
 *   prefix:  the causal form, each word weighted by its clause's evidence so far (prefixObjective)
 *   heads:   the form a Clef release can compute (headsObjective): per pooling head, each
 *            clause's mean, then a softmax over the clauses keyed by a query the head learns
 *   shared:  `heads` with one set of word vectors for every head
 *
 * over the state's n words outside a negation's scope (the trainer's scope layer, scope.ts, on
 * words), where a clause ends at a break as the scope layer reads one (punctuation, a spaced
 * dash, "but", "while", …). A state of one clause gets the bag's logits; in a state of several,
 * each option takes its evidence mostly from the clause that speaks for it most, so the words of
 * one clause add up with each other and not with another clause's: "delete prod" is strong
 * evidence for `deny` where "delete temp" and "keep prod" are weak. Every model chooses the scope
 * reading (none, every, nominal) and λ, the clause models also β, by 5-fold cross-fitting, by
 * out-of-fold cross-entropy, as `clef-web train` does. The gradient is checked against finite
 * differences on every run before any fit.
 *
 * The product's model has character features, pooling weights and a cosine read-out, so these
 * figures sit below it; the trial measures what pooling by clause adds to a bag, not the product.
 */
import { parseArgs } from 'node:util';
import { Rng } from '../../src/calibrate/prng.js';
import { minimize } from '../../src/build/train/lbfgs.js';
import {
  SCOPE_CUE,
  SCOPE_READINGS,
  SCOPE_STOP,
  scopeMark,
  type ScopeCues,
} from '../../src/build/train/scope.js';
import { loadClincDraw, loadTask, summarise, type Scored, type Task } from './small-tasks.js';
import { writeResults } from './results-file.js';
import {
  addPenalty,
  crossEntropy,
  FUNCTION_WORDS,
  gradientError,
  misses,
  outOfFold,
  probabilities,
  softmaxStep,
  tokens,
  top,
  wordSetup,
} from './word-model.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'failing,gate,urgency' },
    label: { type: 'string', default: 'clause-trial' },
    'with-pairs': { type: 'boolean', default: false },
    'clinc-draws': { type: 'string', default: '0' },
    'clinc-seed': { type: 'string', default: '1' },
    probe: { type: 'string', multiple: true, default: [] },
    kinds: { type: 'string', default: 'bag,clause,prefix' },
    split: { type: 'string', default: 'every' },
    augment: { type: 'string', default: '0' },
    background: { type: 'string', default: '' },
  },
});

/**
 * `--augment K --background OPTION`: each training line of another option joined with K lines of
 * the background option (in either order, by ", ", " but " or ", and "), labelled as the line; each
 * background line joined with K others of its own. Built from the fit's own training part only
 * (each fold's from that fold's), so the out-of-fold figures judge the file's own lines.
 */
const AUGMENT = Number(values.augment);
const JOINERS = [', ', ' but ', ', and '];
function augmented<L extends { text: string; label: string }>(lines: readonly L[], seed: number) {
  if (AUGMENT === 0) return [...lines];
  const rng = new Rng(seed);
  const background = lines.filter((l) => l.label === values.background);
  if (background.length === 0) throw new Error(`no line of the background ${values.background}`);
  const out: Array<{ text: string; label: string }> = [...lines];
  for (const line of lines)
    for (let k = 0; k < AUGMENT; k++) {
      const other = background[rng.int(background.length)] as L;
      if (other === line) continue;
      const joiner = JOINERS[rng.int(JOINERS.length)] as string;
      const [a, b] = rng.int(2) === 0 ? [line, other] : [other, line];
      out.push({ text: `${a.text}${joiner}${b.text}`, label: line.label });
    }
  return out;
}

const LAMBDAS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2];
const BETAS = [1, 3, 10, 30];
/** The pointer's penalty on γ, as pointer-trial.ts's grid. */
const MUS = [1e-4, 1e-3, 1e-2, 1e-1];
const FOLDS = 5;

/**
 * A text as its words outside a negation's scope, each with its clause's number and the word it
 * points at (the last content word before it in its clause, as pointer-trial.ts reads it).
 */
interface Encoded {
  words: string[];
  clauses: number[];
  pointers: Array<string | null>;
}

function encode(text: string, reading: ScopeCues | null): Encoded {
  const words: string[] = [];
  const clauses: number[] = [];
  const pointers: Array<string | null> = [];
  let open = false;
  let clause = 0;
  let last: string | null = null;
  const push = (word: string, pointer: string | null): void => {
    words.push(word);
    clauses.push(clause);
    pointers.push(pointer);
  };
  for (const token of tokens(text)) {
    const mark = scopeMark(token, reading ?? 'every');
    const word = token.trim();
    if (mark === SCOPE_STOP) {
      // A break belongs to the clause it ends, and points at nothing.
      open = false;
      last = null;
      push(word, null);
      // With `--split first`, a state has at most two clauses: up to its first break, and after.
      if (values.split !== 'first' || clause === 0) clause += 1;
      continue;
    }
    if (open) continue;
    push(word, last);
    if (mark === SCOPE_CUE) open = reading !== null;
    else if (!FUNCTION_WORDS.has(word)) last = word;
  }
  return { words, clauses, pointers };
}

/** One row per text: known word ids, their clauses numbered 0..K-1, and n (every word kept). */
interface Row {
  word: Int32Array;
  clause: Int32Array;
  /** The id of the word each word points at, or −1. */
  pointer: Int32Array;
  clauseCount: number;
  n: number;
}

function rows(texts: readonly Encoded[], vocab: Map<string, number>): Row[] {
  return texts.map(({ words, clauses, pointers }) => {
    const ids: number[] = [];
    const of: number[] = [];
    const to: number[] = [];
    const renumber = new Map<number, number>();
    words.forEach((w, i) => {
      const id = vocab.get(w);
      if (id === undefined) return;
      const k = clauses[i] as number;
      if (!renumber.has(k)) renumber.set(k, renumber.size);
      ids.push(id);
      of.push(renumber.get(k) as number);
      const p = pointers[i];
      to.push(p === null || p === undefined ? -1 : (vocab.get(p) ?? -1));
    });
    return {
      word: Int32Array.from(ids),
      clause: Int32Array.from(of),
      pointer: Int32Array.from(to),
      clauseCount: Math.max(renumber.size, 1),
      n: Math.max(words.length, 1),
    };
  });
}

/**
 * Parameters: W [C, V], then b [C], then γ [V] where `mu` is given (the pointer: each word adds
 * γ[w_t] · W[c, p(t)], the evidence of the word it points at, to its clause, as in
 * pointer-trial.ts). β = 0 is the bag (every clause's evidence summed); β > 0 the clause model.
 * Returns the logits (with the clauses' evidence E and weights a for the backward pass) and the
 * objective with its gradient.
 */
function objective(
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  lambda: number,
  beta: number,
  mu?: number,
) {
  const G = C * V + C;
  const forward = (x: Float64Array, row: Row) => {
    const K = row.clauseCount;
    const E = new Float64Array(K * C);
    for (let i = 0; i < row.word.length; i++) {
      const w = row.word[i] as number;
      const k = row.clause[i] as number;
      const p = mu === undefined ? -1 : (row.pointer[i] as number);
      const g = p >= 0 ? (x[G + w] as number) : 0;
      for (let c = 0; c < C; c++) {
        const pointed = p >= 0 ? g * (x[c * V + p] as number) : 0;
        E[k * C + c] = (E[k * C + c] as number) + ((x[c * V + w] as number) + pointed) / row.n;
      }
    }
    const a = new Float64Array(K * C);
    const z = new Float64Array(C);
    for (let c = 0; c < C; c++) {
      let max = -Infinity;
      for (let k = 0; k < K; k++) max = Math.max(max, beta * (E[k * C + c] as number));
      let sum = 0;
      for (let k = 0; k < K; k++) sum += Math.exp(beta * (E[k * C + c] as number) - max);
      let pooled = 0;
      for (let k = 0; k < K; k++) {
        // β = 0: every clause weighs 1, so the pool is the bag's sum.
        const weight = beta === 0 ? 1 : Math.exp(beta * (E[k * C + c] as number) - max) / sum;
        a[k * C + c] = weight;
        pooled += weight * (E[k * C + c] as number);
      }
      z[c] = (x[C * V + c] as number) + pooled;
    }
    return { z, E, a };
  };
  const evaluate = (x: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    data.forEach((row, r) => {
      const { z, E, a } = forward(x, row);
      const label = y[r] as number;
      loss += crossEntropy(z, label);
      const d = softmaxStep(z, label, data.length);
      // ∂pooled_c / ∂E_kc = a_kc (1 + β (E_kc − pooled_c)).
      const dE = new Float64Array(E.length);
      for (let c = 0; c < C; c++) {
        grad[C * V + c] = (grad[C * V + c] as number) + (d[c] as number);
        const pooled = (z[c] as number) - (x[C * V + c] as number);
        for (let k = 0; k < row.clauseCount; k++) {
          const e = E[k * C + c] as number;
          const ak = a[k * C + c] as number;
          dE[k * C + c] = (d[c] as number) * (beta === 0 ? 1 : ak * (1 + beta * (e - pooled)));
        }
      }
      for (let i = 0; i < row.word.length; i++) {
        const w = row.word[i] as number;
        const k = row.clause[i] as number;
        const p = mu === undefined ? -1 : (row.pointer[i] as number);
        const g = p >= 0 ? (x[G + w] as number) : 0;
        for (let c = 0; c < C; c++) {
          const d = (dE[k * C + c] as number) / row.n;
          grad[c * V + w] = (grad[c * V + w] as number) + d;
          if (p >= 0) {
            grad[c * V + p] = (grad[c * V + p] as number) + d * g;
            grad[G + w] = (grad[G + w] as number) + d * (x[c * V + p] as number);
          }
        }
      }
    });
    loss = addPenalty(loss / data.length, x, grad, 0, C * V, lambda);
    return mu === undefined ? loss : addPenalty(loss, x, grad, G, G + V, mu);
  };
  return { forward, evaluate, size: G + (mu === undefined ? 0 : V) };
}

/**
 * The causal form (`prefix`): each option pools the words themselves, weighted by a softmax over
 * the words of β times the evidence of its clause so far, P_tc = Σ_{s ≤ t in t's clause} W[c, w_s] / n:
 *
 *   logit_c = b_c + Σ_t a_tc · W[c, w_t],   a_·c = softmax_t(β P_tc)
 *
 * (β = 0: the bag). A layer that reads only the words before it (a Clef layer) can give a word
 * that weight; the clause's whole evidence it can give only at the clause's end.
 */
function prefixObjective(
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  lambda: number,
  beta: number,
) {
  const forward = (x: Float64Array, row: Row) => {
    const T = row.word.length;
    const a = new Float64Array(T * C);
    const z = new Float64Array(C);
    for (let c = 0; c < C; c++) {
      const prefix = new Float64Array(T);
      let running = 0;
      for (let t = 0; t < T; t++) {
        if (t > 0 && row.clause[t] !== row.clause[t - 1]) running = 0;
        running += (x[c * V + (row.word[t] as number)] as number) / row.n;
        prefix[t] = running;
      }
      let max = -Infinity;
      for (let t = 0; t < T; t++) max = Math.max(max, beta * (prefix[t] as number));
      let sum = 0;
      for (let t = 0; t < T; t++) sum += Math.exp(beta * (prefix[t] as number) - max);
      let pooled = 0;
      for (let t = 0; t < T; t++) {
        const weight = Math.exp(beta * (prefix[t] as number) - max) / sum;
        a[t * C + c] = weight;
        pooled += weight * (x[c * V + (row.word[t] as number)] as number);
      }
      z[c] = (x[C * V + c] as number) + pooled;
    }
    return { z, a };
  };
  const evaluate = (x: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    data.forEach((row, r) => {
      const { z, a } = forward(x, row);
      const label = y[r] as number;
      loss += crossEntropy(z, label);
      const d = softmaxStep(z, label, data.length);
      const T = row.word.length;
      for (let c = 0; c < C; c++) {
        const dc = d[c] as number;
        grad[C * V + c] = (grad[C * V + c] as number) + dc;
        const pooled = (z[c] as number) - (x[C * V + c] as number);
        // ∂pooled/∂u_s = a_s + (1/n) Σ_{t ≥ s in s's clause} β a_t (u_t − pooled).
        let later = 0;
        for (let t = T - 1; t >= 0; t--) {
          if (t < T - 1 && row.clause[t] !== row.clause[t + 1]) later = 0;
          const w = row.word[t] as number;
          const u = x[c * V + w] as number;
          const at = a[t * C + c] as number;
          later += (beta * at * (u - pooled)) / row.n;
          grad[c * V + w] = (grad[c * V + w] as number) + dc * (at + later);
        }
      }
    });
    return addPenalty(loss / data.length, x, grad, 0, C * V, lambda);
  };
  return { forward, evaluate, size: C * V + C };
}

/**
 * The form a Clef release can compute (`heads`): H pooling heads (H = the option count), each
 * with word vectors θ_h [C, V] and a query q_h [C]. A first attention layer gives each clause's end
 * its clause's mean, m_kh = Σ_{t in k} θ_h[·, w_t] / n_k (the attention there is uniform over the
 * clause); the pooling layer then takes, at the head's positions, per head a softmax over the
 * clause ends keyed by the clause's mean:
 *
 *   logit_c = b_c + Σ_h bag_h[c],   bag_h = Σ_k a_kh m_kh,   a_·h = softmax_k(β q_h · m_kh)
 *
 * A state of one clause gets Σ_h m_h, the bag (as a mean). Head h's query starts at option h's
 * direction, so each head starts as the `clause` form's option h and may learn another reading;
 * λ penalises the word vectors and the queries alike.
 */
function headsObjective(
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  lambda: number,
  beta: number,
  shared = false,
) {
  const H = C;
  // With `shared`, every head reads the same word vectors θ [C, V], as a release whose heads all
  // take the token's content as their value does.
  const Q = (shared ? 1 : H) * C * V;
  const at = (h: number, c: number, w: number): number => ((shared ? 0 : h * C) + c) * V + w;
  const B = Q + H * C;
  const forward = (x: Float64Array, row: Row) => {
    const K = row.clauseCount;
    const count = new Float64Array(K);
    for (let i = 0; i < row.word.length; i++) count[row.clause[i] as number]++;
    const m = new Float64Array(H * K * C);
    for (let i = 0; i < row.word.length; i++) {
      const w = row.word[i] as number;
      const k = row.clause[i] as number;
      for (let h = 0; h < H; h++)
        for (let c = 0; c < C; c++) {
          const j = (h * K + k) * C + c;
          m[j] = (m[j] as number) + (x[at(h, c, w)] as number) / (count[k] as number);
        }
    }
    const a = new Float64Array(H * K);
    const bag = new Float64Array(H * C);
    const z = new Float64Array(C);
    for (let c = 0; c < C; c++) z[c] = x[B + c] as number;
    for (let h = 0; h < H; h++) {
      const s = new Float64Array(K);
      let max = -Infinity;
      for (let k = 0; k < K; k++) {
        let dot = 0;
        for (let c = 0; c < C; c++)
          dot += (x[Q + h * C + c] as number) * (m[(h * K + k) * C + c] as number);
        s[k] = beta * dot;
        max = Math.max(max, s[k] as number);
      }
      let sum = 0;
      for (let k = 0; k < K; k++) sum += Math.exp((s[k] as number) - max);
      for (let k = 0; k < K; k++) {
        const ak = Math.exp((s[k] as number) - max) / sum;
        a[h * K + k] = ak;
        for (let c = 0; c < C; c++)
          bag[h * C + c] = (bag[h * C + c] as number) + ak * (m[(h * K + k) * C + c] as number);
      }
      for (let c = 0; c < C; c++) z[c] = (z[c] as number) + (bag[h * C + c] as number);
    }
    return { z, m, a, bag, count };
  };
  const evaluate = (x: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    data.forEach((row, r) => {
      const { z, m, a, bag, count } = forward(x, row);
      const K = row.clauseCount;
      const label = y[r] as number;
      loss += crossEntropy(z, label);
      const d = softmaxStep(z, label, data.length);
      for (let c = 0; c < C; c++) grad[B + c] = (grad[B + c] as number) + (d[c] as number);
      const dm = new Float64Array(H * K * C);
      for (let h = 0; h < H; h++) {
        let bagD = 0;
        for (let c = 0; c < C; c++) bagD += (bag[h * C + c] as number) * (d[c] as number);
        for (let k = 0; k < K; k++) {
          const ak = a[h * K + k] as number;
          let mD = 0;
          for (let c = 0; c < C; c++) mD += (m[(h * K + k) * C + c] as number) * (d[c] as number);
          // ∂(bag_h · d)/∂s_kh = a_kh (m_kh · d − bag_h · d); s_kh = β q_h · m_kh.
          const g = ak * (mD - bagD) * beta;
          for (let c = 0; c < C; c++) {
            const j = (h * K + k) * C + c;
            dm[j] = ak * (d[c] as number) + g * (x[Q + h * C + c] as number);
            grad[Q + h * C + c] = (grad[Q + h * C + c] as number) + g * (m[j] as number);
          }
        }
      }
      for (let i = 0; i < row.word.length; i++) {
        const w = row.word[i] as number;
        const k = row.clause[i] as number;
        for (let h = 0; h < H; h++)
          for (let c = 0; c < C; c++) {
            const j = at(h, c, w);
            grad[j] =
              (grad[j] as number) + (dm[(h * K + k) * C + c] as number) / (count[k] as number);
          }
      }
    });
    return addPenalty(loss / data.length, x, grad, 0, B, lambda);
  };
  const start = (): Float64Array => {
    const x = new Float64Array(B + C);
    for (let h = 0; h < H; h++) x[Q + h * C + (h % C)] = 1;
    return x;
  };
  return { forward, evaluate, size: B + C, start };
}

function fit(
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  kind: Kind,
  { lambda, beta, mu }: { lambda: number; beta: number; mu: number },
) {
  if (kind === 'heads' || kind === 'shared') {
    const heads = headsObjective(data, y, C, V, lambda, beta, kind === 'shared');
    const { x } = minimize((p, g) => heads.evaluate(p, g), heads.start(), { maxIterations: 500 });
    return (row: Row): Float64Array => heads.forward(x, row).z;
  }
  const { forward, evaluate, size } =
    kind === 'prefix'
      ? prefixObjective(data, y, C, V, lambda, beta)
      : objective(
          data,
          y,
          C,
          V,
          lambda,
          beta,
          kind === 'pointer' || kind === 'both' ? mu : undefined,
        );
  const { x } = minimize((p, g) => evaluate(p, g), new Float64Array(size), {
    maxIterations: 500,
  });
  return (row: Row): Float64Array => forward(x, row).z;
}

/** The objective's gradient against central differences on a random problem: max relative error. */
function gradientCheck(): number {
  let seed = 12345;
  const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const C = 3;
  const V = 7;
  const data: Row[] = Array.from({ length: 6 }, () => {
    const n = 2 + Math.floor(random() * 5);
    const K = 1 + Math.floor(random() * 3);
    return {
      word: Int32Array.from({ length: n }, () => Math.floor(random() * V)),
      clause: Int32Array.from({ length: n }, () => Math.floor(random() * K)),
      pointer: new Int32Array(n).fill(-1),
      clauseCount: K,
      n: n + 1,
    };
  });
  const y = Int32Array.from(data, () => Math.floor(random() * C));
  let worst = 0;
  for (const [form, beta] of [
    [objective, 0],
    [objective, 3],
    [prefixObjective, 3],
  ] as const) {
    const { evaluate } = form(data, y, C, V, 0.01, beta);
    const x = Float64Array.from({ length: C * V + C }, () => 2 * random() - 1);
    worst = Math.max(worst, gradientError(evaluate, x));
  }
  // The pointer's terms, from a stream of their own (the checks above draw as they did before).
  let pointerSeed = 54321;
  const draw = (): number => (pointerSeed = (pointerSeed * 16807) % 2147483647) / 2147483647;
  for (const row of data)
    row.pointer = Int32Array.from(row.word, () => Math.floor(draw() * (V + 1)) - 1);
  for (const beta of [0, 3]) {
    const { evaluate, size } = objective(data, y, C, V, 0.01, beta, 0.03);
    const x = Float64Array.from({ length: size }, () => 2 * draw() - 1);
    worst = Math.max(worst, gradientError(evaluate, x));
  }
  // The release's form, from a stream of its own.
  let headsSeed = 24680;
  const drawHeads = (): number => (headsSeed = (headsSeed * 16807) % 2147483647) / 2147483647;
  for (const [beta, shared] of [
    [1, false],
    [3, false],
    [3, true],
  ] as const) {
    const { evaluate, size } = headsObjective(data, y, C, V, 0.01, beta, shared);
    const x = Float64Array.from({ length: size }, () => 2 * drawHeads() - 1);
    worst = Math.max(worst, gradientError(evaluate, x));
  }
  return worst;
}

/**
 * The models: the bag, pooled by clause, by clause so far; and, when asked for (`--kinds`), the
 * bag with the pointer, the clause model with it, and the two forms a release can compute.
 */
type Kind = 'bag' | 'clause' | 'prefix' | 'pointer' | 'both' | 'heads' | 'shared';
const ALL_KINDS: readonly Kind[] = [
  'bag',
  'clause',
  'prefix',
  'pointer',
  'both',
  'heads',
  'shared',
];
const asked = (values.kinds as string).split(',');
const unknown = asked.filter((k) => !(ALL_KINDS as readonly string[]).includes(k));
if (unknown.length > 0)
  throw new Error(`--kinds: unknown ${unknown.join(', ')} (known: ${ALL_KINDS.join(', ')})`);
if (values.split !== 'every' && values.split !== 'first')
  throw new Error(`--split: give every or first (got ${String(values.split)})`);
const KINDS = ALL_KINDS.filter((k) => asked.includes(k));

interface Choice {
  reading: ScopeCues | null;
  lambda: number;
  beta: number;
  mu: number;
  outOfFold: number;
}

function runTask(task: Task) {
  const { labels, C, y, vocab, V, fold } = wordSetup(
    task.train,
    (text) => encode(text, null).words,
    FOLDS,
  );
  const labelled = (
    lines: ReadonlyArray<{ text: string; label: string }>,
    reading: ScopeCues | null,
  ) => ({
    rows: rows(
      lines.map((l) => encode(l.text, reading)),
      vocab,
    ),
    ys: Int32Array.from(lines, (l) => labels.indexOf(l.label)),
  });
  const augmentedOutOfFold = (
    reading: ScopeCues | null,
    kind: Kind,
    settings: { lambda: number; beta: number; mu: number },
  ): number => {
    let loss = 0;
    for (let f = 0; f < FOLDS; f++) {
      const part = labelled(
        augmented(
          task.train.filter((_, i) => fold[i] !== f),
          1000 + f,
        ),
        reading,
      );
      const model = fit(part.rows, part.ys, C, V, kind, settings);
      const held = labelled(
        task.train.filter((_, i) => fold[i] === f),
        reading,
      );
      held.rows.forEach((row, i) => (loss += crossEntropy(model(row), held.ys[i] as number)));
    }
    return loss / task.train.length;
  };
  const choose = (kind: Kind): Choice => {
    let best: Choice | null = null;
    for (const reading of [null, ...SCOPE_READINGS]) {
      const data = rows(
        task.train.map((l) => encode(l.text, reading)),
        vocab,
      );
      for (const lambda of LAMBDAS)
        for (const beta of kind === 'bag' || kind === 'pointer' ? [0] : BETAS)
          for (const mu of kind === 'pointer' || kind === 'both' ? MUS : [0]) {
            const settings = { lambda, beta, mu };
            const loss =
              AUGMENT === 0
                ? outOfFold(data, y, fold, FOLDS, (rows, ys) => fit(rows, ys, C, V, kind, settings))
                : augmentedOutOfFold(reading, kind, settings);
            if (best === null || loss < best.outOfFold)
              best = { reading, ...settings, outOfFold: loss };
          }
    }
    return best as Choice;
  };
  const judge = (kind: Kind) => {
    const choice = choose(kind);
    const whole = labelled(augmented(task.train, 999), choice.reading);
    const model = fit(whole.rows, whole.ys, C, V, kind, choice);
    const scored: Scored[] = task.test.map((line) => {
      const [row] = rows([encode(line.text, choice.reading)], vocab) as [Row];
      return { p: probabilities(labels, model(row)), label: line.label, line };
    });
    const probes = (values.probe as string[]).map((text) => {
      const [row] = rows([encode(text, choice.reading)], vocab) as [Row];
      const p = probabilities(labels, model(row));
      return { text, answer: top(p), confidence: p.get(top(p)) as number };
    });
    return {
      choice,
      figures: summarise(task, scored),
      misses: misses(scored),
      probes,
    };
  };
  const models = Object.fromEntries(KINDS.map((k) => [k, judge(k)])) as Record<
    Kind,
    ReturnType<typeof judge>
  >;
  // The rule `clef-web train` keeps a layer by: the lowest out-of-fold cross-entropy.
  const kept = KINDS.reduce((a, b) =>
    models[b].choice.outOfFold < models[a].choice.outOfFold ? b : a,
  );
  return { task: task.name, ...models, kept };
}

const checked = gradientCheck();
console.log(
  `gradient against central differences: worst relative error ${checked.toExponential(2)}`,
);
if (!(checked < 1e-5)) throw new Error(`the clause objective's gradient is wrong (${checked})`);
const results = [];
const pct = (x: number | null | undefined): string =>
  x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`;
const tasks: Array<() => Task> = (values.tasks as string)
  .split(',')
  .filter((name) => name !== '')
  .map((name) => () => loadTask(name, values['with-pairs']));
for (let draw = 0; draw < Number(values['clinc-draws']); draw++)
  tasks.push(() =>
    loadClincDraw({ draw, intents: 6, perLabel: 40, seed: Number(values['clinc-seed']) }),
  );
for (const load of tasks) {
  const r = runTask(load());
  results.push(r);
  console.log(`\n${r.task}`);
  for (const which of KINDS) {
    const { choice, figures } = r[which];
    const shown = Object.entries(figures)
      .map(([k, v]) => `${k} ${k === 'aurocOther' ? (v as number).toFixed(3) : pct(v)}`)
      .join(', ');
    console.log(
      `  ${which}: out of fold ${choice.outOfFold.toFixed(3)} (scope ${choice.reading ?? 'none'}, λ ${choice.lambda}, β ${choice.beta}, μ ${choice.mu}); ${shown}`,
    );
  }
  console.log(`  kept (lower out of fold): ${r.kept}`);
  for (const [i, text] of (values.probe as string[]).entries())
    console.log(
      `  "${text}": ${KINDS.map((k) => `${k} ${r[k].probes[i]?.answer} ${r[k].probes[i]?.confidence.toFixed(2)}`).join(', ')}`,
    );
}
writeResults(values.label as string, { gradientCheck: checked, results });
