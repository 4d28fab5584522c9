/**
 * A second implementation of what applying a calibration means (docs/calibration.md), for
 * tests' expected values: written apart from src/calibrate and computed differently,
 * so a mistake in the code under test does not reappear in what it is checked against.
 *
 * - probabilities: p_i = 1 / Σ_j exp((z_j − z_i) / T) (no max subtraction, no normalising pass;
 *   src computes exp((z_i − max) / T) / Σ);
 * - the band: the entry whose [minOptions, maxOptions] holds the option count, else the type's;
 * - the LAC prediction set: every option with 1 − p ≤ threshold, or the top option alone when
 *   none qualifies; abstain when the set has more than one option or the top p is below a floor.
 */
export interface ReferenceEntry {
  temperature: number;
  threshold: number;
}

export interface ReferenceTypeEntry extends ReferenceEntry {
  bands?: Array<ReferenceEntry & { minOptions: number; maxOptions: number }>;
}

export function referenceProbabilities(logits: ArrayLike<number>, temperature: number): number[] {
  const z = Array.from(logits, Number);
  return z.map((zi) => 1 / z.reduce((sum, zj) => sum + Math.exp((zj - zi) / temperature), 0));
}

export function referenceEntry(
  entry: ReferenceTypeEntry,
  options: number,
): { entry: ReferenceEntry; band: { minOptions: number; maxOptions: number } | null } {
  for (const b of entry.bands ?? []) {
    if (b.minOptions <= options && options <= b.maxOptions) {
      return { entry: b, band: { minOptions: b.minOptions, maxOptions: b.maxOptions } };
    }
  }
  return { entry, band: null };
}

export interface ReferenceCalibrated {
  probabilities: number[];
  /** Prompt-order indices in the set, ascending. */
  set: number[];
  top: number;
  abstain: boolean;
  band: { minOptions: number; maxOptions: number } | null;
}

export function referenceCalibrated(
  typeEntry: ReferenceTypeEntry,
  logits: ArrayLike<number>,
  abstainBelow?: number,
): ReferenceCalibrated {
  const { entry, band } = referenceEntry(typeEntry, logits.length);
  const probabilities = referenceProbabilities(logits, entry.temperature);
  let top = 0;
  probabilities.forEach((p, i) => {
    if (p > probabilities[top]!) top = i;
  });
  const within = probabilities.flatMap((p, i) => (1 - p <= entry.threshold ? [i] : []));
  const set = within.length > 0 ? within : [top];
  const abstain =
    set.length > 1 || (abstainBelow !== undefined && probabilities[top]! < abstainBelow);
  return { probabilities, set, top, abstain, band };
}
