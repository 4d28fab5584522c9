/**
 * What `clef-web replay` says about one record against a package: pure, so each verdict is
 * unit-tested without an engine.
 */
import type { CalibratedDecision } from '../../calibrate/index.js';
import type { DecisionRecord } from '../../core/record.js';
import type { Answer, SystemOneResponse } from '../../protocol/types.js';

/** The package replay runs: how records name it. */
export interface ReplayPackage {
  model: string;
  manifestSha256: string;
  calibrationSha256: string | null;
}

export type Verdict =
  | { kind: 'identical' }
  | { kind: 'different'; maxDeltaP: number; changed: string[] }
  | { kind: 'not-reproducible'; reason: string };

const short = (sha: string | null) => (sha === null ? 'none' : `${sha.slice(0, 12)}…`);

/**
 * Why this package cannot reproduce the record (another model, manifest or calibration; the
 * request not kept), or null when it can.
 */
export function unreproducibleReason(record: DecisionRecord, pkg: ReplayPackage): string | null {
  const was = record.package;
  const reasons: string[] = [];
  if (was.model !== pkg.model)
    reasons.push(`another model: ${was.model} recorded, ${pkg.model} here`);
  if (was.manifest_sha256 !== pkg.manifestSha256) {
    reasons.push(
      `another package: manifest ${short(was.manifest_sha256)} recorded, ${short(pkg.manifestSha256)} here`,
    );
  }
  if (was.calibration_sha256 !== pkg.calibrationSha256) {
    reasons.push(
      `another calibration: ${short(was.calibration_sha256)} recorded, ${short(pkg.calibrationSha256)} here`,
    );
  }
  if (!('request' in record)) reasons.push("only the request's SHA-256 was recorded");
  return reasons.length > 0 ? reasons.join('; ') : null;
}

/** The option an answer picks (noul: true at p ≥ 0.5), for "changed choices". */
function picked(answer: Answer): string {
  if (answer.type === 'noul') return answer.noul >= 0.5 ? 'true' : 'false';
  if (answer.type === 'choice') return answer.choice;
  return String(answer.score);
}

function probabilities(answer: Answer): Map<string, number> {
  if (answer.type === 'noul') return new Map([['true', answer.noul]]);
  return new Map(Object.entries(answer.probabilities));
}

/** Key order aside, the same JSON value. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => k in rb && sameJson((a as Record<string, unknown>)[k], rb[k]));
}

/** Compares the recorded answer with the one the package gives now. */
export function compareDecision(
  recorded: { response: SystemOneResponse; calibrated?: CalibratedDecision },
  now: { response: SystemOneResponse; calibrated?: CalibratedDecision },
): Verdict {
  if (sameJson(recorded.response, now.response) && sameJson(recorded.calibrated, now.calibrated)) {
    return { kind: 'identical' };
  }
  let maxDeltaP = 0;
  const changed = new Set<string>();
  const ids = new Set([
    ...Object.keys(recorded.response.answers),
    ...Object.keys(now.response.answers),
  ]);
  for (const id of ids) {
    const a = recorded.response.answers[id];
    const b = now.response.answers[id];
    if (!a || !b || a.type !== b.type) {
      changed.add(id);
      continue;
    }
    if (picked(a) !== picked(b)) changed.add(id);
    const pa = probabilities(a);
    const pb = probabilities(b);
    for (const [option, p] of pa) {
      const q = pb.get(option);
      if (q === undefined) changed.add(id);
      else maxDeltaP = Math.max(maxDeltaP, Math.abs(p - q));
    }
  }
  const ca = recorded.calibrated?.questions ?? [];
  const cb = now.calibrated?.questions ?? [];
  if (ca.length !== cb.length) changed.add('(calibrated)');
  ca.forEach((qa, i) => {
    const qb = cb[i];
    if (!qb || !qa.calibrated || !qb.calibrated) {
      if (!sameJson(qa, qb)) changed.add(`${qa.id} (calibrated)`);
      return;
    }
    if (qa.top !== qb.top || qa.abstain !== qb.abstain || !sameJson(qa.set, qb.set)) {
      changed.add(`${qa.id} (calibrated)`);
    }
    qa.probabilities.forEach((p, j) => {
      maxDeltaP = Math.max(maxDeltaP, Math.abs(p - (qb.probabilities[j] ?? Infinity)));
    });
  });
  return { kind: 'different', maxDeltaP, changed: [...changed] };
}
