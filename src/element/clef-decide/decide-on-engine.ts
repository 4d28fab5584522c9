/**
 * `<clef-decide>`'s call to its engine: the calibration its `calibrated` and `abstain-below`
 * attributes ask for, and (with `record`) the decision record kept in this origin's IndexedDB.
 */
import type { SystemOneRequest } from '../../protocol/types.js';
import type { DecisionWire } from '../../wire/wire.js';
import { answeringEngine, pageRecorder } from '../../client/records.js';
import { pageDecide, type Clef } from '../../client/clef.js';
import { calibrationAsk } from '../../calibrate/index.js';

/** Records the element's decisions (the `record` attribute) in this origin's IndexedDB. */
const recordElementDecision = pageRecorder(true, 'element')!;

/** The element's attributes that shape a decision beyond its request. */
export interface ElementDecideOptions {
  signal: AbortSignal;
  calibrated: boolean;
  abstainBelow: number | undefined;
  record: boolean;
}

/** Decides `request` on the element's engine (and records it when `record` is set). */
export async function decideOnEngine(
  clef: Clef,
  request: SystemOneRequest,
  { signal, calibrated, abstainBelow, record }: ElementDecideOptions,
): Promise<DecisionWire> {
  const calibration =
    abstainBelow !== undefined && Number.isFinite(abstainBelow) ? { abstainBelow } : calibrated;
  const recorder = record ? recordElementDecision : undefined;
  const inPage = pageDecide(clef);
  // The element reads no logits, and its record comes with the answer.
  const wire = inPage
    ? await inPage(request, { signal, calibration, recorder })
    : await clef.decide(request, { signal, calibration });
  if (recorder && !inPage) {
    const engine = answeringEngine(await clef.info());
    await recorder(request, wire, calibrationAsk(calibration), engine);
  }
  return wire;
}
