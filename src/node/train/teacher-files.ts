/**
 * What `clef-web train --teacher` leaves for a person beside its records: `review.csv` (a seeded
 * sample of labelled texts to check by hand), `labelled.csv` (every kept text and label, which
 * `--texts` trains on without asking again) and `counts.json` (the teacher's label counts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_VERSION } from '../../core/record.js';
import { Rng } from '../../calibrate/prng.js';
import type { PlainRow } from '../../build/train/plain.js';

export interface TeacherReport {
  dir: string;
  model: string;
  /** Texts asked in this run, and answered from earlier runs' records. */
  asked: number;
  fromRecords: number;
  /** Requests retried after a transient failure. */
  retried: number;
  kept: number;
  /** Answers under minConfidence. */
  dropped: number;
  /** Per label, in the question's option order. */
  counts: Array<{ label: string; kept: number; dropped: number }>;
}

/** A CSV field, quoted where it must be. */
function csvField(value: string): string {
  return /[",\n\r]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function csv(header: string[], rows: string[][]): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

/** review.csv (a seeded sample), labelled.csv (every kept text) and counts.json. */
export function writeTeacherFiles(
  options: { dir: string; url: string; reviewSize?: number },
  kept: readonly PlainRow[],
  confidences: readonly number[],
  report: TeacherReport,
  minConfidence: number,
): void {
  const rng = new Rng(0x7eac4e5);
  const order = kept.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const sample = order.slice(0, options.reviewSize ?? 100).sort((a, b) => a - b);
  writeFileSync(
    join(options.dir, 'review.csv'),
    csv(
      ['line', 'text', 'label', 'confidence', 'correct (yes/no)'],
      sample.map((i) => {
        const r = kept[i] as PlainRow;
        return [
          String(r.line),
          r.text,
          r.label as string,
          (confidences[i] as number).toFixed(4),
          '',
        ];
      }),
    ),
  );
  writeFileSync(
    join(options.dir, 'labelled.csv'),
    csv(
      ['text', 'label'],
      kept.map((r) => [r.text, r.label as string]),
    ),
  );
  writeFileSync(
    join(options.dir, 'counts.json'),
    `${JSON.stringify({ teacher: options.url, model: report.model, minConfidence, engine: `clef-web ${ENGINE_VERSION}`, kept: report.kept, dropped: report.dropped, labels: report.counts }, null, 2)}\n`,
  );
}
