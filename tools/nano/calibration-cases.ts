/**
 * The CLINC150 cases of the calibration measurement (tools/nano/calibrate-clinc.ts): fit on
 * `val` + `oos_val`, measure on `test` + `oos_test`, never the reverse.
 *
 * Split conformal assumes the fit and measured answers are exchangeable. CLINC150's val split
 * is 3.2% out of scope (3,000 + 100) and its test split 18.2% (4,500 + 1,000), and out-of-scope
 * queries are the hard ones, so a threshold fitted on all of val would under-cover test. The
 * 151-way fit set therefore keeps all 100 oos_val queries and 3 val queries per intent (450):
 * 18.2% out of scope, as test. The 10-option questions (in-scope only) use all of val.
 */
import { evalItems, readClinc, type ClincSplit, type RequestBody } from './requests.js';

export type CaseKind = 'full' | 'ten';

export interface CalibrationCase {
  key: string;
  split: ClincSplit;
  kind: CaseKind;
  /** Intent name, or 'oos' (whose right option is `none`). */
  gold: string;
  body: RequestBody;
}

/** Val queries kept for the 151-way fit: 3 of each intent's 20 (indices 0, 7, 14 mod 20). */
function keepVal(index: number): boolean {
  return [0, 7, 14].includes(index % 20);
}

/**
 * Test queries measured: every 3rd of test and of oos_test (1,500 + 334, still 18.2% out of
 * scope), for the 151-way and the 10-option questions alike. A 151-way forward is ~2,250
 * tokens, and the machine is a shared 2-core one.
 */
function keepTest(index: number): boolean {
  return index % 3 === 0;
}

export function calibrationCases(part: 'fit' | 'test'): CalibrationCase[] {
  const splits: ClincSplit[] = part === 'fit' ? ['val', 'oos_val'] : ['test', 'oos_test'];
  const out: CalibrationCase[] = [];
  for (const item of evalItems(readClinc(), splits)) {
    if (part === 'test' && !keepTest(item.index)) continue;
    const base = { split: item.split, gold: item.gold };
    if (part === 'test' || item.split === 'oos_val' || keepVal(item.index)) {
      out.push({ ...base, key: `${item.split}/${item.index}/full`, kind: 'full', body: item.full });
    }
    if (item.ten !== null) {
      out.push({ ...base, key: `${item.split}/${item.index}/ten`, kind: 'ten', body: item.ten });
    }
  }
  return out;
}
