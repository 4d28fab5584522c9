/**
 * The decision log's export format, pure so it can be unit-tested: one JSON object per line.
 * Request and response are embedded as the exact JSON text that was sent and received (only
 * whitespace outside strings removed), so key order and number lexemes survive the export.
 */
import type { DecisionTimings } from '../wire/telemetry.js';
import { recordLine, type DecisionRecord } from '../core/record.js';

export interface LogEntry {
  /** IndexedDB key, set when stored. */
  id?: number;
  /** ISO 8601. */
  time: string;
  model: string;
  packageUrl: string;
  /** SHA-256 of the package's manifest.json: which exact package answered. */
  packageSha256: string;
  device: string;
  /** The request as JSON text. */
  request: string;
  /** The response as JSON text, keys in request order. */
  response: string;
  timings: DecisionTimings;
  /** The decision record (docs/records.md): what the export writes. */
  record?: DecisionRecord;
}

/** Removes whitespace outside strings; the JSON text is otherwise kept byte for byte. */
export function compactJson(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch !== ' ' && ch !== '\n' && ch !== '\r' && ch !== '\t') {
      out += ch;
    }
  }
  return out;
}

/**
 * The log as decision records, one a line (docs/records.md), for `clef-web replay`. Entries
 * logged before the playground kept records have none and are left out.
 */
export function toJsonl(entries: LogEntry[]): string {
  return entries.flatMap((e) => (e.record ? [`${recordLine(e.record)}\n`] : [])).join('');
}

/** `clef-decisions-20261130-142501.jsonl` */
export function exportFileName(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = `${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}`;
  const time = `${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`;
  return `clef-decisions-${day}-${time}.jsonl`;
}

/**
 * Indents JSON text without parsing it, so key order and number lexemes stay exactly as
 * written (JSON.parse + stringify would move integer-like keys first and rewrite numbers).
 */
export function prettyJson(text: string, indent = '  '): string {
  const compact = compactJson(text);
  let out = '';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < compact.length; i++) {
    const ch = compact[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') out += compact[++i] ?? '';
      else if (ch === '"') inString = false;
      continue;
    }
    const next = compact[i + 1];
    if (ch === '"') {
      inString = true;
      out += ch;
    } else if ((ch === '{' || ch === '[') && next !== '}' && next !== ']') {
      depth++;
      out += `${ch}\n${indent.repeat(depth)}`;
    } else if ((ch === '{' || ch === '[') && (next === '}' || next === ']')) {
      out += ch + next;
      i++;
    } else if (ch === '}' || ch === ']') {
      depth--;
      out += `\n${indent.repeat(depth)}${ch}`;
    } else if (ch === ',') {
      out += `,\n${indent.repeat(depth)}`;
    } else if (ch === ':') {
      out += ': ';
    } else {
      out += ch;
    }
  }
  return out;
}
