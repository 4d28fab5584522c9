/**
 * clef-nano data, encoded by the project's own prompt encoder (src/clef/prompt.ts) so the model
 * trains on exactly the tokens the browser sends.
 *
 *   npx tsx tools/nano/make-data.ts <work-dir> [--epochs 4] [--vocab 4000] [--seed 1]
 *
 * Writes into <work-dir>:
 *   tokenizer/tokenizer.json, tokenizer/tokenizer_config.json   byte-level BPE (the fixture's
 *       trainer) on CLINC150 train queries + the prompt pieces + the intent descriptions
 *   train.jsonl        training requests from CLINC150 train + oos_train only
 *   val-select.jsonl   151-way requests for every 10th val query + all of oos_val (selection)
 *   eval-val.jsonl, eval-test.jsonl   with --eval: 151-way (kind "full") and 10-way (kind
 *                      "ten") requests of the evaluated subset of val + oos_val and test +
 *                      oos_test (requests.ts evalSelection)
 * One line per request: {"ids": [...], "q": [{"t": typeId, "s": [start, end], "o": [[s, e], ...],
 * "y": label index}], ...}; spans are token ranges, end exclusive, as encodeRequest gives them.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeRequest } from '../../src/clef/prompt.js';
import { loadTokenizerSync, type ClefTokenizer } from '../../src/clef/tokenizer.js';
import { validateRequest } from '../../src/protocol/validate.js';
import { buildTinyTokenizer, defaultCorpus } from '../fixture/tokenizer.js';
import { Rng } from '../fixture/weights.js';
import {
  EVAL_INSTRUCTION,
  NONE_DESCRIPTION,
  NONE_OPTION,
  evalItems,
  evalSelection,
  intentNames,
  readClinc,
  readDescriptions,
  trainingRequest,
  type ClincSplit,
  type Labels,
  type RequestBody,
} from './requests.js';

/** The nano model's context (max_position_embeddings): a 151-way prompt is about 2,000 tokens. */
export const NANO_MAX_TOKENS = 4096;

/** Extra tokenizer corpus: the request texts the generator writes, weighted like the template. */
function nanoCorpus(): string[] {
  const descriptions = readDescriptions();
  const extra: string[] = [
    EVAL_INSTRUCTION,
    `{"option_id":"${NONE_OPTION}"}`,
    `{"description":"${NONE_DESCRIPTION}","option_id":"${NONE_OPTION}"}`,
    'Route this message to the team that handles it.',
    'What is the user asking for?',
    'Classify the request.',
    'Pick the intent of the message.',
    'Which of these best describes what the user wants?',
    '{"message":"","channel":"chat","text":"","user":{"utterance":""},"locale":"en-US"}',
    '{"conversation":[{"content":"","role":"user"}],"ticket":{"body":"","id":1234}}',
  ];
  for (const [name, description] of Object.entries(descriptions)) {
    extra.push(
      `{"description":"${description}","option_id":"${name}"}`,
      `Is this message about ${name}?`,
    );
  }
  const corpus = defaultCorpus();
  for (let i = 0; i < 30; i++) corpus.push(...extra);
  return corpus;
}

export function loadOrTrainTokenizer(workDir: string, vocab: number): ClefTokenizer {
  const dir = join(workDir, 'tokenizer');
  const jsonPath = join(dir, 'tokenizer.json');
  const configPath = join(dir, 'tokenizer_config.json');
  if (!existsSync(jsonPath)) {
    mkdirSync(dir, { recursive: true });
    const t = buildTinyTokenizer({ vocabSize: vocab, corpus: nanoCorpus() });
    writeFileSync(jsonPath, JSON.stringify(t.tokenizerJson, null, 2) + '\n');
    writeFileSync(configPath, JSON.stringify(t.tokenizerConfig, null, 2) + '\n');
  }
  return loadTokenizerSync(
    JSON.parse(readFileSync(jsonPath, 'utf8')) as object,
    JSON.parse(readFileSync(configPath, 'utf8')) as object,
  );
}

/** Encodes one body; label indices follow the encoded (prompt) option order. */
export function encodeLine(
  tokenizer: ClefTokenizer,
  body: RequestBody,
  labels: Labels,
  extra: Record<string, unknown> = {},
): string {
  const encoded = encodeRequest(tokenizer, validateRequest(body), { maxTokens: NANO_MAX_TOKENS });
  const q = encoded.questions.map((question) => {
    const label = labels[question.id];
    const y = label === undefined ? -1 : question.optionIds.indexOf(label);
    if (label !== undefined && y < 0) throw new Error(`label ${label} not among the options`);
    return { t: question.typeId, s: question.span, o: question.optionSpans, y };
  });
  return JSON.stringify({ ids: encoded.inputIds, q, ...extra }) + '\n';
}

class LineWriter {
  private readonly fd: number;
  private buffer: string[] = [];
  private size = 0;
  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }
  write(line: string): void {
    this.buffer.push(line);
    this.size += line.length;
    if (this.size > 1 << 22) this.flush();
  }
  flush(): void {
    writeSync(this.fd, this.buffer.join(''));
    this.buffer = [];
    this.size = 0;
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

function writeTraining(
  workDir: string,
  tokenizer: ClefTokenizer,
  epochs: number,
  seed: number,
  short: boolean,
) {
  const data = readClinc();
  const intents = intentNames(data);
  const descriptions = readDescriptions();
  const rng = new Rng(seed);
  // oos_train has 100 queries against 15,000 in scope: repeat it so `none` is seen often enough.
  const pool: Array<[string, string]> = [...data.train];
  for (let r = 0; r < 4; r++) pool.push(...data.oos_train);
  const out = new LineWriter(join(workDir, short ? 'train-short.jsonl' : 'train.jsonl'));
  let lines = 0;
  let tokens = 0;
  for (let e = 0; e < epochs; e++) {
    const order = pool.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    for (const i of order) {
      const [query, gold] = pool[i] as [string, string];
      const { body, labels } = trainingRequest(rng, query, gold, intents, descriptions, short);
      const line = encodeLine(tokenizer, body, labels);
      out.write(line);
      lines++;
      tokens += (JSON.parse(line) as { ids: number[] }).ids.length;
    }
    process.stdout.write(`epoch ${e + 1}/${epochs}: ${lines} requests, ${tokens} tokens\n`);
  }
  out.close();
}

function writeEval(workDir: string, tokenizer: ClefTokenizer, splits: ClincSplit[], name: string) {
  const data = readClinc();
  const out = new LineWriter(join(workDir, name));
  for (const item of evalItems(data, splits)) {
    const selected = evalSelection(item);
    const meta = { split: item.split, index: item.index, gold: item.gold };
    const gold = item.gold === 'oos' ? NONE_OPTION : item.gold;
    if (selected.full) {
      out.write(encodeLine(tokenizer, item.full, { intent: gold }, { ...meta, kind: 'full' }));
    }
    if (item.ten !== null && selected.ten) {
      out.write(encodeLine(tokenizer, item.ten, { intent: gold }, { ...meta, kind: 'ten' }));
    }
  }
  out.close();
}

/** Every 10th val query and all of oos_val, 151-way only: the selection set during training. */
function writeSelection(workDir: string, tokenizer: ClefTokenizer) {
  const data = readClinc();
  const out = new LineWriter(join(workDir, 'val-select.jsonl'));
  for (const item of evalItems(data, ['val', 'oos_val'])) {
    if (item.split === 'val' && item.index % 10 !== 0) continue;
    const gold = item.gold === 'oos' ? NONE_OPTION : item.gold;
    const meta = { split: item.split, index: item.index, gold: item.gold, kind: 'full' };
    out.write(encodeLine(tokenizer, item.full, { intent: gold }, meta));
  }
  out.close();
}

function main(argv: string[]): void {
  let workDir: string | undefined;
  let epochs = 4;
  let vocab = 4000;
  let seed = 1;
  let evalSets = false;
  let short = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--epochs') epochs = Number(argv[++i]);
    else if (arg === '--vocab') vocab = Number(argv[++i]);
    else if (arg === '--seed') seed = Number(argv[++i]);
    else if (arg === '--eval') evalSets = true;
    else if (arg === '--short') short = true;
    else workDir = arg;
  }
  if (workDir === undefined)
    throw new Error('usage: make-data.ts <work-dir> [--epochs N] [--vocab N] [--seed N] [--eval]');
  const dir = resolve(workDir);
  mkdirSync(dir, { recursive: true });
  const tokenizer = loadOrTrainTokenizer(dir, vocab);
  process.stdout.write(`tokenizer: ${tokenizer.vocabSize} ids\n`);
  if (evalSets) {
    writeEval(dir, tokenizer, ['val', 'oos_val'], 'eval-val.jsonl');
    writeEval(dir, tokenizer, ['test', 'oos_test'], 'eval-test.jsonl');
    process.stdout.write('wrote eval-val.jsonl, eval-test.jsonl\n');
    return;
  }
  if (!short) writeSelection(dir, tokenizer);
  writeTraining(dir, tokenizer, epochs, seed, short);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2));
}
