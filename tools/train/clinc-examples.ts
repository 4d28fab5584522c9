/**
 * CLINC150 as labelled-examples files for `clef-web train` and `clef-web calibrate`: one request
 * per query, the 151-way choice (the 150 intents and `none`, which out-of-scope queries pick).
 *
 *   npx tsx tools/train/clinc-examples.ts <out-dir> [--per-intent N] [--seed S]
 *
 * writes train.jsonl (train + oos_train), val.jsonl (val + oos_val) and test.jsonl (test +
 * oos_test). `--per-intent N` keeps N training queries per intent (and N·100/150 out-of-scope
 * ones, at least 5), drawn with the seed: the learning-curve benchmark's small files.
 *
 * CLINC150 (CC BY 3.0): Stefan Larson, Anish Mahendran, Joseph J. Peper, Christopher Clarke,
 * Andrew Lee, Parker Hill, Jonathan K. Kummerfeld, Kevin Leach, Michael A. Laurenzano,
 * Lingjia Tang, Jason Mars. "An Evaluation Dataset for Intent Classification and Out-of-Scope
 * Prediction." EMNLP-IJCNLP 2019.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../../src/calibrate/prng.js';

type Split = 'train' | 'val' | 'test' | 'oos_train' | 'oos_val' | 'oos_test';
export type ClincData = Record<Split, Array<[string, string]>>;

export const CLINC_MODEL = 'clef-nano';
export const CLINC_QUESTION = 'intent';
export const CLINC_INSTRUCTION = "Which intent does the user's message express?";
export const NONE_OPTION = 'none';

export function readClinc(): ClincData {
  const here = dirname(fileURLToPath(import.meta.url));
  return JSON.parse(
    readFileSync(resolve(here, '../../data/clinc150/data_full.json'), 'utf8'),
  ) as ClincData;
}

export function intentsOf(data: ClincData): string[] {
  return [...new Set(data.train.map(([, intent]) => intent))].sort();
}

/** The request for one query: the 151-way choice (or the given subset of options). */
export function clincRequest(query: string, options: readonly string[]) {
  const criteria: Record<string, null> = {};
  for (const o of options) criteria[o] = null;
  return {
    model: CLINC_MODEL,
    state: query,
    questions: { [CLINC_QUESTION]: { type: 'choice', instructions: CLINC_INSTRUCTION, criteria } },
  };
}

/** One line per intent, written for this project (the playground's CLINC preset uses them). */
export function readDescriptions(): Record<string, string> {
  const here = dirname(fileURLToPath(import.meta.url));
  return JSON.parse(readFileSync(resolve(here, 'intent-descriptions.json'), 'utf8')) as Record<
    string,
    string
  >;
}

export const NONE_DESCRIPTION = 'The message matches none of the other options.';

/**
 * The same query asked as a 10-option choice with descriptions, as pages and the playground ask
 * clef-nano, so the descriptions' tokens are trained too: its intent, `none` and eight others
 * drawn with `rng`. In one line of four the intent is left out (nine others), and the label is
 * `none`, "none of these": what an in-scope message gets when its intent is not offered. An
 * out-of-scope query gets `none` and nine others.
 */
export function clincDescribedLine(
  query: string,
  intent: string,
  intents: readonly string[],
  descriptions: Record<string, string>,
  rng: Rng,
): string {
  const offered = intent !== 'oos' && rng.int(4) !== 0;
  const label = offered ? intent : NONE_OPTION;
  const pool = intents.filter((i) => i !== intent);
  const picked: string[] = [];
  while (picked.length < (offered ? 8 : 9)) {
    picked.push(pool.splice(rng.int(pool.length), 1)[0] as string);
  }
  const options = offered ? [intent, NONE_OPTION, ...picked] : [NONE_OPTION, ...picked];
  const criteria: Record<string, string> = {};
  for (const o of options) {
    criteria[o] = o === NONE_OPTION ? NONE_DESCRIPTION : (descriptions[o] as string);
  }
  const request = {
    model: CLINC_MODEL,
    state: query,
    questions: { [CLINC_QUESTION]: { type: 'choice', instructions: CLINC_INSTRUCTION, criteria } },
  };
  return JSON.stringify({ request, labels: { [CLINC_QUESTION]: label } });
}

export function clincLine(query: string, intent: string, options: readonly string[]): string {
  const label = intent === 'oos' ? NONE_OPTION : intent;
  return JSON.stringify({
    request: clincRequest(query, options),
    labels: { [CLINC_QUESTION]: label },
  });
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { 'per-intent': { type: 'string' }, seed: { type: 'string', default: '1' } },
  });
  const out = positionals[0];
  if (out === undefined)
    throw new Error('usage: clinc-examples.ts <out-dir> [--per-intent N] [--seed S]');
  mkdirSync(out, { recursive: true });
  const data = readClinc();
  const options = [...intentsOf(data), NONE_OPTION];
  const write = (name: string, rows: Array<[string, string]>): void => {
    writeFileSync(
      join(out, name),
      rows.map(([q, i]) => clincLine(q, i, options)).join('\n') + '\n',
    );
    console.log(`${join(out, name)}: ${rows.length} examples`);
  };
  let train = [...data.train, ...data.oos_train];
  const per = values['per-intent'];
  if (per !== undefined) {
    const n = Number(per);
    const rng = new Rng(Number(values.seed));
    const shuffled = (rows: Array<[string, string]>) => {
      const a = [...rows];
      for (let i = a.length - 1; i > 0; i--) {
        const j = rng.int(i + 1);
        [a[i], a[j]] = [a[j] as [string, string], a[i] as [string, string]];
      }
      return a;
    };
    const byIntent = new Map<string, Array<[string, string]>>();
    for (const row of data.train) byIntent.set(row[1], [...(byIntent.get(row[1]) ?? []), row]);
    train = [...byIntent.keys()]
      .sort()
      .flatMap((intent) => shuffled(byIntent.get(intent) ?? []).slice(0, n));
    train.push(...shuffled(data.oos_train).slice(0, Math.max(5, Math.round((n * 100) / 150))));
  }
  write('train.jsonl', train);
  write('val.jsonl', [...data.val, ...data.oos_val]);
  write('test.jsonl', [...data.test, ...data.oos_test]);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
