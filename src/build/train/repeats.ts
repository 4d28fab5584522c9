/**
 * Lines of a training file whose states read the same. A cross-fit that judged one copy by a
 * model fitted on another would report answers on text the model saw as answers on unseen text:
 * on the project's bistro file written twice over, the card said 95.0% out of fold where the
 * file once gave 66.4%, and the calibration fitted on those answers gave sets of one option that
 * held the label on 78.4% of the test text instead of 92.0% (docs/benchmarks.md, "Lines that
 * repeat"). So copies are kept together: in one fold of the cross-fit, and on one side of the
 * held-out split (and of the calibration's own split, src/calibrate/prng.ts splitCopies). Copies
 * whose labels differ are reported, since the model gives one text one answer.
 */
import { stateKey, textKey, type LabelledExample } from '../../calibrate/examples.js';
import { firstOfKeys } from '../../calibrate/prng.js';
import { promptOptions } from '../../clef/prompt.js';
import { renderValue } from '../../protocol/render.js';
import type { PlainRow } from './plain.js';

const stateText = (example: LabelledExample): string => renderValue(example.valid.state);

/** The conflicts a report lists by line; the rest are counted. */
export const CONFLICTS_LISTED = 10;

/**
 * A line as the sign tests count it: its state and its label. Copies of a line are judged by the
 * same models, so they would count one disagreement as many.
 */
export function lineKey(example: LabelledExample, label: number | string): string {
  return `${stateKey(example)}\u0000${label}`;
}

/** For each example, the index of the first example whose state reads the same (its own if none). */
export function firstCopies(examples: readonly LabelledExample[]): number[] {
  return firstOfKeys(examples.map(stateKey));
}

/** One state labelled differently on different lines, for one question. */
export interface LabelConflict {
  question: string;
  /** The state as its first line writes it. */
  state: string;
  /** Each label the state has: its first LINES_LISTED lines (1-based, in the file), and how many. */
  labels: Array<{ label: string; lines: number[]; count: number }>;
}

/** The lines a conflict lists for each label; the rest are counted. */
export const LINES_LISTED = 3;

/** What a file's repeated states are: reported by `train`, the card and the Train panel. */
export interface RepeatReport {
  /** Lines whose state reads the same as an earlier line's (kept, judged with it). */
  repeated: number;
  /** States labelled differently, the first CONFLICTS_LISTED of them by line. */
  conflicts: LabelConflict[];
  /** How many such states (question by question), listed or not. */
  conflictCount: number;
  /**
   * Held-out lines whose state reads the same as a training line's: their figures are not on
   * unseen text. None where the held-out part is split from the file (copies go together).
   */
  heldOutSeen: number;
}

function labelOf(example: LabelledExample, question: string): string | undefined {
  const index = example.labels.get(question);
  const q = example.valid.questions.find((x) => x.id === question);
  if (index === undefined || q === undefined) return undefined;
  return (promptOptions(q)[index] as [string, unknown])[0];
}

/** A line as a report reads it: where it is, its state as written, its label by question. */
interface ReportedLine {
  line: number;
  state: string;
  labels: ReadonlyMap<string, string>;
}

/**
 * The copies among a file's lines (`first`: each one's first copy) and the labels they disagree
 * on. Only lines with a copy are read (`read`): on CLINC150's 15,100 lines of 151 options, reading
 * every line's labels by option id made `train`'s report take 130-140 ms, against 37-47 ms so.
 */
function reportOn(
  first: readonly number[],
  read: (i: number) => ReportedLine,
): Omit<RepeatReport, 'heldOutSeen'> {
  const copies = new Map<number, number[]>();
  let repeated = 0;
  first.forEach((f, i) => {
    if (f !== i) repeated++;
    const group = copies.get(f);
    if (group === undefined) copies.set(f, [i]);
    else group.push(i);
  });
  const conflicts: LabelConflict[] = [];
  let conflictCount = 0;
  for (const group of copies.values()) {
    if (group.length < 2) continue;
    const lines = group.map(read);
    const questions = new Set(lines.flatMap((l) => [...l.labels.keys()]));
    for (const question of questions) {
      const labels = new Map<string, { label: string; lines: number[]; count: number }>();
      for (const l of lines) {
        const label = l.labels.get(question);
        if (label === undefined) continue;
        let entry = labels.get(label);
        if (entry === undefined) labels.set(label, (entry = { label, lines: [], count: 0 }));
        if (entry.count++ < LINES_LISTED) entry.lines.push(l.line);
      }
      if (labels.size < 2) continue;
      conflictCount++;
      if (conflicts.length < CONFLICTS_LISTED)
        conflicts.push({
          question,
          state: (lines[0] as ReportedLine).state,
          labels: [...labels.values()],
        });
    }
  }
  return { repeated, conflicts, conflictCount };
}

/** The repeats of the file's `examples` (`first`: their firstCopies), and of `heldOut` in `train`. */
export function repeatReport(
  examples: readonly LabelledExample[],
  first: readonly number[],
  split: { train: readonly LabelledExample[]; heldOut: readonly LabelledExample[] },
): RepeatReport {
  const read = (i: number): ReportedLine => {
    const e = examples[i] as LabelledExample;
    const labels = new Map<string, string>();
    for (const question of e.labels.keys()) {
      const label = labelOf(e, question);
      if (label !== undefined) labels.set(question, label);
    }
    return { line: e.line, state: stateText(e), labels };
  };
  const trained = new Set(split.train.map(stateKey));
  const heldOutSeen = split.heldOut.filter((e) => trained.has(stateKey(e))).length;
  return { ...reportOn(first, read), heldOutSeen };
}

/**
 * The same report on a plain file's rows (a text and a label each) for its question `question`,
 * without making them requests: what the Train panel says of a file as soon as it is picked.
 * The panel's whole first look at CLINC150's 15,100 rows takes 41-96 ms this way, and took
 * 1.8-3.1 s parsing them as requests first (2 cores, under load).
 */
export function plainRepeatReport(rows: readonly PlainRow[], question: string): RepeatReport {
  const read = (i: number): ReportedLine => {
    const r = rows[i] as PlainRow;
    return {
      line: r.line,
      state: r.text,
      labels: new Map(r.label === null ? [] : [[question, r.label]]),
    };
  };
  return { ...reportOn(firstOfKeys(rows.map((r) => textKey(r.text))), read), heldOutSeen: 0 };
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
const quoted = (state: string): string =>
  JSON.stringify(state.length > 80 ? `${state.slice(0, 79)}…` : state);

/** A conflict's lines by label: `a on line 3, b on lines 7, 9, 12 and 4 more`. */
function byLabel(conflict: LabelConflict): string {
  return conflict.labels
    .map(({ label, lines, count }) => {
      const more = count > lines.length ? ` and ${count - lines.length} more` : '';
      return `${label} on line${count === 1 ? '' : 's'} ${lines.join(', ')}${more}`;
    })
    .join(', ');
}

/** The report in sentences, for the CLI, the card and the Train panel (none where all is well). */
export function repeatNotes(report: RepeatReport): string[] {
  const notes: string[] = [];
  if (report.repeated > 0)
    notes.push(
      `${plural(report.repeated, 'line repeats', 'lines repeat')} the text of an earlier line (case, spacing and punctuation aside): ${report.repeated === 1 ? 'it is' : 'each is'} kept, and judged together with its copies, so no figure comes from a model that saw a copy of the line it judged, and the sign tests count it once.`,
    );
  if (report.conflictCount > 0) {
    const listed = report.conflicts
      .map((c) => `${quoted(c.state)} (${c.question}): ${byLabel(c)}`)
      .join('; ');
    const more = report.conflictCount - report.conflicts.length;
    notes.push(
      `${plural(report.conflictCount, 'text has', 'texts have')} different labels on different lines, and the model gives a text one answer: check ${more > 0 ? `these and ${more} more` : report.conflictCount === 1 ? 'it' : 'them'}: ${listed}.`,
    );
  }
  if (report.heldOutSeen > 0)
    notes.push(
      `${plural(report.heldOutSeen, 'held-out line has', 'held-out lines have')} the text of a training line: the held-out figures are not all on unseen text.`,
    );
  return notes;
}
