/**
 * The plain training file: a text and a label per row, as a spreadsheet exports it (CSV with a
 * header; `;` and tab separators too) or JSONL of `{"text": ..., "label": ...}`, or for the
 * teacher one text a line. With one System One question (given, or made from the labels) it
 * becomes the labelled-request JSONL the pipeline reads, each example on the source row's own
 * line number (blank lines between), so every later message ("line 12: ...") points into the
 * file the user has, and the same rows train to the same bytes as the equivalent labelled
 * file. Every bad row is refused at once, by line, before any work. Runtime-neutral.
 */
import { csvRecords } from './csv.js';
import { TrainError } from './errors.js';
import { notAnOption, type PlainQuestion } from './question.js';

export type PlainFormat = 'csv' | 'jsonl' | 'lines';

export interface PlainSettings {
  /** csv (a header row), jsonl (an object a line) or lines (a text a line, no labels). */
  format?: PlainFormat;
  /** The column (CSV header, JSONL key) holding the text (default "text"). */
  textColumn?: string;
  /** The column holding the label (default "label"). */
  labelColumn?: string;
}

export interface PlainRow {
  /** 1-based line the row starts on. */
  line: number;
  text: string;
  /** null where the file has no label column (the teacher labels it). */
  label: string | null;
}

export interface PlainRows {
  format: PlainFormat;
  /** The header's columns (CSV) or the first object's keys (JSONL); [] for lines. */
  columns: string[];
  rows: PlainRow[];
}

export const DEFAULT_TEXT_COLUMN = 'text';
export const DEFAULT_LABEL_COLUMN = 'label';
/** Bad lines a message lists (details.errors has them all). */
const LISTED = 50;

interface LineError {
  line: number;
  message: string;
}

/** Throws one TrainError listing every bad line (the first 50), as the labelled format does. */
function refuseLines(file: string, errors: LineError[]): never {
  const lines = [...new Set(errors.map((e) => e.line))];
  const shown = errors.slice(0, LISTED).map((e) => `  line ${e.line}: ${e.message}`);
  if (errors.length > LISTED) shown.push(`  ... and ${errors.length - LISTED} more`);
  throw new TrainError(
    'examples_invalid',
    `${file}: ${lines.length} bad line${lines.length === 1 ? '' : 's'}:\n${shown.join('\n')}`,
    { errors, lines },
  );
}

function refuse(file: string, message: string, details: Record<string, unknown> = {}): never {
  throw new TrainError('examples_invalid', `${file}: ${message}`, details);
}

/** The format a file name says (.csv, .tsv, .jsonl, .txt), else what its first line looks like. */
export function detectPlainFormat(fileName: string, text: string): PlainFormat {
  const ext = /\.([A-Za-z0-9]+)$/.exec(fileName)?.[1]?.toLowerCase();
  if (ext === 'csv' || ext === 'tsv') return 'csv';
  if (ext === 'jsonl' || ext === 'ndjson' || ext === 'json') return 'jsonl';
  if (ext === 'txt') return 'lines';
  const first = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return first.trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

/** A labelled-request file (calibrate's format) rather than a plain one: its first object has "request". */
export function isLabelledRequestFile(text: string): boolean {
  const first = text.split('\n').find((l) => l.trim() !== '');
  if (first === undefined) return false;
  try {
    const value = JSON.parse(first) as unknown;
    return typeof value === 'object' && value !== null && 'request' in value;
  } catch {
    return false;
  }
}

function columnIndex(columns: string[], wanted: string): number {
  const exact = columns.indexOf(wanted);
  if (exact >= 0) return exact;
  const lower = columns.map((c) => c.toLowerCase());
  return lower.indexOf(wanted.toLowerCase());
}

function missingColumn(
  file: string,
  what: string,
  name: string,
  columns: string[],
  option: string,
): never {
  refuse(
    file,
    `no ${what} column "${name}" (the columns are ${columns.map((c) => JSON.stringify(c)).join(', ')}): name it with ${option}`,
    { columns },
  );
}

function labelText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/**
 * Reads the rows. `labels`: 'required' (training), 'ignored' (the teacher labels them). The
 * column options are named in messages as the CLI spells them.
 */
export function readPlainRows(
  text: string,
  file: string,
  settings: PlainSettings & { format: PlainFormat },
  labels: 'required' | 'ignored',
  /** The question's options: a label that is none of them is a bad line too. */
  question?: PlainQuestion,
): PlainRows {
  const textColumn = settings.textColumn ?? DEFAULT_TEXT_COLUMN;
  const labelColumn = settings.labelColumn ?? DEFAULT_LABEL_COLUMN;
  const body = text.replace(/^\uFEFF/, '');
  const errors: LineError[] = [];
  const rows: PlainRow[] = [];
  let columns: string[] = [];
  const options = labels === 'required' && question ? new Set(question.options) : null;
  const check = (line: number, t: string, label: string | null) => {
    if (t.trim() === '') errors.push({ line, message: 'the text is empty' });
    if (labels === 'required' && (label === null || label.trim() === '')) {
      errors.push({ line, message: 'the label is empty' });
    } else if (options !== null && label !== null && !options.has(label)) {
      errors.push({ line, message: notAnOption(label, question as PlainQuestion) });
    }
    rows.push({ line, text: t, label: labels === 'required' ? label : null });
  };
  if (settings.format === 'lines') {
    if (labels === 'required') {
      refuse(
        file,
        'one text a line has no labels: give a CSV with a label column (or JSONL of {"text", "label"}), or --teacher <System One URL> to have a bigger model label the texts',
      );
    }
    body.split('\n').forEach((raw, k) => {
      const t = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (t.trim() !== '') rows.push({ line: k + 1, text: t, label: null });
    });
  } else if (settings.format === 'jsonl') {
    body.split('\n').forEach((raw, k) => {
      const lineText = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (lineText.trim() === '') return;
      const line = k + 1;
      let value: unknown;
      try {
        value = JSON.parse(lineText);
      } catch (e) {
        errors.push({ line, message: `not JSON: ${(e as Error).message}` });
        return;
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        errors.push({
          line,
          message: `must be an object {"${textColumn}": ..., "${labelColumn}": ...}`,
        });
        return;
      }
      const record = value as Record<string, unknown>;
      if (columns.length === 0) columns = Object.keys(record);
      const t = record[textColumn];
      if (typeof t !== 'string') {
        errors.push({
          line,
          message:
            t === undefined
              ? `no "${textColumn}" (the keys are ${Object.keys(record)
                  .map((c) => JSON.stringify(c))
                  .join(', ')}; name the text's with --text-column)`
              : `"${textColumn}" must be a string`,
        });
        return;
      }
      const raw2 = record[labelColumn];
      const label = raw2 === undefined || raw2 === null ? null : labelText(raw2);
      if (labels === 'required' && raw2 !== undefined && raw2 !== null && label === null) {
        errors.push({ line, message: `"${labelColumn}" must be a string` });
        return;
      }
      if (labels === 'required' && raw2 === undefined) {
        errors.push({
          line,
          message: `no "${labelColumn}" (name the label's key with --label-column)`,
        });
        return;
      }
      check(line, t, label);
    });
  } else {
    const parsed = csvRecords(body);
    if (parsed.unclosedAt !== null) {
      refuse(
        file,
        `line ${parsed.unclosedAt}: a quoted field is never closed (a '"' inside a quoted text is written '""')`,
        { line: parsed.unclosedAt },
      );
    }
    errors.push(...parsed.errors);
    const { records } = parsed;
    const header = records.shift();
    if (header === undefined)
      refuse(file, 'the file is empty: a CSV needs a header row and a row per example');
    columns = header.fields.map((c) => c.trim());
    const ti = columnIndex(columns, textColumn);
    if (ti < 0) missingColumn(file, 'text', textColumn, columns, '--text-column');
    const li = labels === 'required' ? columnIndex(columns, labelColumn) : -1;
    if (labels === 'required' && li < 0)
      missingColumn(file, 'label', labelColumn, columns, '--label-column');
    for (const { line, fields } of records) {
      if (fields.length !== columns.length) {
        errors.push({
          line,
          message: `${fields.length} field${fields.length === 1 ? '' : 's'}, the header has ${columns.length} (a text holding the separator must be in double quotes)`,
        });
        continue;
      }
      check(line, fields[ti] as string, li >= 0 ? (fields[li] as string) : null);
    }
  }
  if (errors.length > 0) refuseLines(file, errors);
  if (rows.length === 0) refuse(file, 'the file holds no example');
  return { format: settings.format, columns, rows };
}

/** Label → rows, in first-seen order. */
export function labelCounts(rows: readonly PlainRow[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of rows) if (r.label !== null) counts.set(r.label, (counts.get(r.label) ?? 0) + 1);
  return counts;
}

/**
 * The labelled-request JSONL for the rows: the example of the row starting on line L is on line
 * L, blank lines elsewhere (the pipeline skips them), so its messages name the file's lines.
 */
export function labelledJsonl(
  rows: readonly PlainRow[],
  question: PlainQuestion,
  model: string,
): string {
  const last = rows.length === 0 ? 0 : (rows[rows.length - 1] as PlainRow).line;
  const lines = new Array<string>(last).fill('');
  const head = `{"request":{"model":${JSON.stringify(model)},"state":`;
  const questions = `,"questions":{${JSON.stringify(question.id)}:${question.json}}},"labels":{${JSON.stringify(question.id)}:`;
  for (const r of rows) {
    lines[r.line - 1] = `${head}${JSON.stringify(r.text)}${questions}${JSON.stringify(r.label)}}}`;
  }
  return `${lines.join('\n')}\n`;
}
