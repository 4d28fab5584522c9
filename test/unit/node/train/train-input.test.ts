/**
 * `clef-web train`'s input as people have it, and every check before any work: the plain
 * text-and-label file (CSV, JSONL) trains to the same package bytes as the labelled-request
 * file it stands for; a file's encoding is read or refused the same way whatever the surface
 * (UTF-8 with or without a BOM, UTF-16 with one; Latin-1 and BOM-less UTF-16 refused by line and
 * byte offset); bad rows, labels and output folders are refused by the CLI in one line each,
 * without a stack trace; a missing onnxruntime-node is said before any work with the install
 * line; a real SIGINT/SIGTERM to a real `clef-web train` leaves no partial folder, and a later
 * run removes what a dead one left.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../../../src/node/cli.js';
import { TRAIN_USAGE } from '../../../../src/node/train/cli.js';
import { loadNodePackage } from '../../../../src/node/engine.js';
import { decodeTrainingText, firstInvalidUtf8 } from '../../../../src/build/train/encoding.js';
import { TrainError } from '../../../../src/build/train/errors.js';
import { inspectTrainInput, resolveTrainInput } from '../../../../src/build/train/input.js';
import { readPlainRows } from '../../../../src/build/train/plain.js';
import { parse } from '../../../../src/build/train/prepare.js';
import { firstCopies, repeatNotes, repeatReport } from '../../../../src/build/train/repeats.js';
import { readQuestion } from '../../../../src/build/train/question.js';
import { trainDecisionModel } from '../../../../src/node/train/train.js';
import { Rng } from '../../../../src/calibrate/prng.js';
import {
  PLANTED_OPTIONS,
  plantedExamples,
  plantedJsonl,
  plantedRequest,
} from '../../../../tools/train/planted.js';
import { testSeed } from '../../../support/seed.js';

const ROOT = resolve(import.meta.dirname, '../../../..');
const CLI = join(ROOT, 'bin/clef-web.mjs');
const root = mkdtempSync(join(tmpdir(), 'clef-train-input-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const QUESTION = { route: plantedRequest('x').questions.route };
const csvField = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
/** The planted examples as a spreadsheet would export them. */
function plantedCsv(n: number, seed: number, header = 'text,route'): string {
  const rows = plantedExamples(n, seed).map((e) => `${csvField(e.state)},${e.label}`);
  return `${header}\n${rows.join('\n')}\n`;
}

function refusal(f: () => unknown): TrainError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TrainError);
    return e as TrainError;
  }
  throw new Error('not refused');
}

describe('encodings: read the same way on every surface, or refused by line and byte offset', () => {
  const seed = testSeed('train input encodings');
  const rng = new Rng(seed);
  const alphabet = ['a', 'Z', ' ', ',', '"', '\n', 'é', 'ß', '中', '😀', '\u00a0', 'ﬀ', '\t'];
  const draw = () =>
    Array.from({ length: rng.int(200) }, () => alphabet[rng.int(alphabet.length)]).join('');

  it('UTF-8 with and without a BOM, UTF-16 LE and BE with one: the same text', () => {
    for (let trial = 0; trial < 50; trial++) {
      const text = draw();
      const utf16be = Buffer.from(text, 'utf16le').swap16();
      const cases: Array<[Uint8Array, string]> = [
        [Buffer.from(text, 'utf8'), 'utf-8'],
        [
          Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]),
          'utf-8 (BOM)',
        ],
        [
          Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
          'utf-16le (BOM)',
        ],
        [Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be]), 'utf-16be (BOM)'],
      ];
      for (const [bytes, encoding] of cases) {
        expect(decodeTrainingText(bytes, 'f'), `seed ${seed} ${encoding}`).toEqual({
          text,
          encoding,
        });
      }
    }
  });

  it("finds the first byte that is not UTF-8 where the platform's fatal decoder fails", () => {
    for (let trial = 0; trial < 2000; trial++) {
      // Mostly valid text with a few random bytes spliced in.
      const bytes = Buffer.from(draw(), 'utf8');
      for (let k = rng.int(3); k > 0 && bytes.length > 0; k--)
        bytes[rng.int(bytes.length)] = rng.int(256);
      const at = firstInvalidUtf8(bytes);
      const fatal = (b: Uint8Array) => {
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(b);
          return true;
        } catch {
          return false;
        }
      };
      const m = `seed ${seed} bytes ${bytes.toString('hex')}`;
      expect(at === -1, m).toBe(fatal(bytes));
      if (at >= 0) {
        expect(fatal(bytes.subarray(0, at)), m).toBe(true); // all before it is valid
        // and no valid character starts at it: the decoder fails on what follows.
        expect(fatal(bytes.subarray(at, at + 4)) && bytes.length - at >= 4, m).toBe(false);
      }
    }
  });

  it('refuses Latin-1 with the first bad line and byte offset, saying what the byte would be', () => {
    const bytes = Buffer.from('text,label\nhello,a\nun café noir,b\n', 'latin1');
    const e = refusal(() => decodeTrainingText(bytes, 'tickets.csv'));
    expect(e.code).toBe('examples_encoding');
    expect(e.message).toBe(
      'tickets.csv: line 3, byte offset 25: byte 0xE9 is not UTF-8 (in Latin-1 it would be "é": the file looks Latin-1 or Windows-1252). Save the file as UTF-8 (or UTF-16 with a byte-order mark) and try again',
    );
    expect(e.details).toMatchObject({ line: 3, offset: 25 });
  });

  it('refuses UTF-16 without a BOM (NUL bytes) and UTF-16 with an unpaired surrogate', () => {
    const noBom = refusal(() => decodeTrainingText(Buffer.from('text\nab\n', 'utf16le'), 'x.csv'));
    expect(noBom.message).toMatch(/^x\.csv: line 1, byte offset 1: a NUL byte: .*byte-order mark/);
    const lone = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('ab\n', 'utf16le'),
      Buffer.from([0x00, 0xd8, 0x41, 0x00]),
    ]);
    expect(refusal(() => decodeTrainingText(lone, 'x.csv')).message).toMatch(
      /^x\.csv: line 2, byte offset 8: an unpaired UTF-16 surrogate/,
    );
  });
});

describe('the plain file: CSV and JSONL rows, the question, every bad row by line', () => {
  const read = (text: string, format: 'csv' | 'jsonl' = 'csv') =>
    readPlainRows(text, 'f.csv', { format }, 'required');

  it('reads quoted fields (separators, quotes, newlines), CRLF, ; and tab, on the lines they start', () => {
    const csv = 'text,label\r\n"a, ""quoted""\nsecond line",x\r\nplain,y\r\n\r\n';
    expect(read(csv).rows).toEqual([
      { line: 2, text: 'a, "quoted"\nsecond line', label: 'x' },
      { line: 4, text: 'plain', label: 'y' },
    ]);
    expect(read('Label;Text\ny;one, two\n').rows).toEqual([
      { line: 2, text: 'one, two', label: 'y' },
    ]);
    expect(read('text\tlabel\na b\tz\n').rows).toEqual([{ line: 2, text: 'a b', label: 'z' }]);
    expect(
      read('{"text": "hi", "label": "a"}\n\n{"label": 3, "text": "yo"}\n', 'jsonl').rows,
    ).toEqual([
      { line: 1, text: 'hi', label: 'a' },
      { line: 3, text: 'yo', label: '3' },
    ]);
  });

  it('refuses every bad row at once, by line', () => {
    const e = refusal(() => read('text,label\nok,a\n,b\nthree,fields,here\nno label,\n'));
    expect(e.code).toBe('examples_invalid');
    expect(e.message).toBe(
      [
        'f.csv: 3 bad lines:',
        '  line 3: the text is empty',
        '  line 4: 3 fields, the header has 2 (a text holding the separator must be in double quotes)',
        '  line 5: the label is empty',
      ].join('\n'),
    );
    expect(refusal(() => read('text,label\n"never closed,a\n')).message).toMatch(
      /line 2: a quoted field is never closed/,
    );
    expect(refusal(() => read('text,label\n')).message).toBe('f.csv: the file holds no example');
    expect(refusal(() => read('{"text": "a"}\nnope\n', 'jsonl')).message).toMatch(
      /line 1: no "label".*\n {2}line 2: not JSON/,
    );
  });

  it('names the columns there are when one is missing, and the option to pick another', () => {
    const e = refusal(() =>
      readPlainRows('message,team\nhi,a\n', 'f.csv', { format: 'csv' }, 'required'),
    );
    expect(e.message).toBe(
      'f.csv: no text column "text" (the columns are "message", "team"): name it with --text-column',
    );
    expect(e.details).toMatchObject({ columns: ['message', 'team'] });
  });

  it('a question file: one choice question, or {id: question}; noul refused; labels must be its options', () => {
    const q = readQuestion(JSON.stringify(QUESTION), 'q.json', 'label');
    expect(q).toMatchObject({
      id: 'route',
      options: ['abuse', 'billing', 'other', 'shipping'],
      generated: false,
    });
    expect(readQuestion(JSON.stringify(QUESTION.route), 'q.json', 'team').id).toBe('team');
    expect(refusal(() => readQuestion('{"ok": {"type": "noul"}}', 'q.json', 'l')).message).toMatch(
      /^q\.json: question "ok" is noul: train learns choice questions only/,
    );
    const texts = 'text,route\nhi,billing\nyo,sales\n';
    const e = refusal(() =>
      resolveTrainInput({ texts, question: QUESTION, out: join(root, 'never') }),
    );
    expect(e.message).toBe(
      'texts: 1 bad line:\n  line 3: label "sales" is not an option of question "route" (abuse, billing, other, shipping)',
    );
  });

  it('without a question, a choice over the labels; more labels than a choice takes are refused in one line', () => {
    const options = resolveTrainInput({
      texts: plantedCsv(40, 1, 'text,label'),
      out: join(root, 'm'),
    });
    const first = options.examples.split('\n')[1] as string;
    expect(JSON.parse(first).request.questions).toEqual({
      label: {
        type: 'choice',
        criteria: { abuse: null, billing: null, other: null, shipping: null },
      },
    });
    expect(JSON.parse(first).request.model).toBe('m'); // the --out folder's name
    const many = `text,label\n${Array.from({ length: 5000 }, (_, i) => `t${i},l${i}`).join('\n')}\n`;
    const e = refusal(() => resolveTrainInput({ texts: many, out: join(root, 'm') }));
    expect(e.message).toBe(
      'texts: 5000 different labels: a choice question takes at most 255 options (is the label column right? The first labels: "l0", "l1", "l10", "l100", "l1000")',
    );
  });

  it("CSV, JSONL and UTF-16 of the same rows make the same labelled requests, each on its row's line", () => {
    const examples = plantedExamples(30, 2);
    const csv = plantedCsv(30, 2);
    const jsonl = examples.map((e) => JSON.stringify({ route: e.label, text: e.state })).join('\n');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(csv, 'utf16le')]);
    const out = join(root, 'same');
    const fromCsv = resolveTrainInput({ texts: csv, question: QUESTION, out }).examples;
    expect(
      resolveTrainInput({ texts: jsonl, question: QUESTION, out, files: { texts: 'x.jsonl' } })
        .examples,
    ).not.toBe(
      fromCsv, // JSONL rows start on line 1, the CSV's on line 2
    );
    const lines = (text: string) => text.split('\n').filter(Boolean);
    expect(
      lines(
        resolveTrainInput({ texts: jsonl, question: QUESTION, out, files: { texts: 'x.jsonl' } })
          .examples,
      ),
    ).toEqual(lines(fromCsv));
    expect(resolveTrainInput({ texts: utf16, question: QUESTION, out }).examples).toBe(fromCsv);
    expect(fromCsv.split('\n')[0]).toBe(''); // the header's line
    expect(JSON.parse(fromCsv.split('\n')[1] as string)).toEqual({
      request: plantedRequest(examples[0]!.state, 'same'),
      labels: { route: examples[0]!.label },
    });
  });

  it('inspects a picked file as a run reads it: counts per label, or the same refusal', () => {
    const summary = inspectTrainInput(Buffer.from(plantedCsv(40, 3)), 'tickets.csv', {
      question: JSON.stringify(QUESTION),
    });
    expect(summary).toMatchObject({
      kind: 'plain',
      format: 'csv',
      columns: ['text', 'route'],
      examples: 40,
    });
    expect(summary.labels.map((l) => [l.option, l.count])).toEqual([
      ['abuse', 10],
      ['billing', 10],
      ['other', 10],
      ['shipping', 10],
    ]);
    const labelled = inspectTrainInput(Buffer.from(plantedJsonl(8, 3)), 'l.jsonl');
    expect(labelled).toMatchObject({ kind: 'labelled', examples: 8 });
    expect(labelled.labels.reduce((n, l) => n + l.count, 0)).toBe(8);
  });

  it("says before training what train will say of the lines that repeat, by the file's lines", () => {
    const [first, second] = plantedExamples(40, 3) as [
      { state: string; label: string },
      { state: string; label: string },
    ];
    const other = PLANTED_OPTIONS.find((o) => o !== first.label) as string;
    // The first line again in capitals with another label; the second again with a "!".
    const csv =
      plantedCsv(40, 3) +
      `${csvField(first.state.toUpperCase())},${other}\n` +
      `${csvField(`${second.state}!`)},${second.label}\n`;
    const options = { question: JSON.stringify(QUESTION) };
    const summary = inspectTrainInput(Buffer.from(csv), 'tickets.csv', options);
    expect(summary.examples).toBe(42);
    expect(summary.notes).toHaveLength(2);
    expect(summary.notes[0]).toMatch(/^2 lines repeat the text of an earlier line/);
    expect(summary.notes[1]).toContain(
      `check it: ${JSON.stringify(first.state)} (route): ${first.label} on line 2, ${other} on line 42.`,
    );
    expect(inspectTrainInput(Buffer.from(plantedCsv(40, 3)), 'tickets.csv', options).notes).toEqual(
      [],
    );
    // What train will say: the notes of the requests the rows become, as train reads them.
    const requests = parse(
      resolveTrainInput({ texts: csv, question: QUESTION, out: join(root, 'never') }).examples,
      'examples',
    );
    expect(summary.notes).toEqual(
      repeatNotes(repeatReport(requests, firstCopies(requests), { train: requests, heldOut: [] })),
    );
    // Labelled requests: the same sentences, by the file's lines.
    const jsonl = plantedJsonl(8, 3);
    const firstLine = jsonl.split('\n')[0] as string;
    const labelled = inspectTrainInput(Buffer.from(`${jsonl}\n${firstLine}\n`), 'l.jsonl');
    expect(labelled.notes).toEqual([
      '1 line repeats the text of an earlier line (case, spacing and punctuation aside): it is kept, and judged together with its copies, so no figure comes from a model that saw a copy of the line it judged, and the sign tests count it once.',
    ]);
  });
});

/** `clef-web train` in this process: exit code and what it printed on stderr. */
async function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  const lines: string[] = [];
  const error = vi
    .spyOn(console, 'error')
    .mockImplementation((m: unknown) => void lines.push(String(m)));
  const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    return { code: await main(['train', ...args]), stderr: lines.join('\n') };
  } finally {
    error.mockRestore();
    write.mockRestore();
    log.mockRestore();
  }
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
function hashes(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((f) => [f, sha(join(dir, f))]),
  );
}

describe('the CLI', () => {
  it('--texts with --question trains to the same package bytes as the equivalent --examples', async () => {
    const dir = join(root, 'equivalent');
    for (const sub of ['plain', 'labelled']) mkdirSync(join(dir, sub), { recursive: true });
    // 120 rows: what is compared is bytes, whatever the count (each run ~3 s of CPU less than 240).
    writeFileSync(join(dir, 'tickets.csv'), plantedCsv(120, 7));
    writeFileSync(join(dir, 'question.json'), JSON.stringify(QUESTION, null, 2));
    writeFileSync(join(dir, 'labelled.jsonl'), plantedJsonl(120, 7));
    const quick = ['--lambda', '0.1', '--fidelity', '0', '--quiet', '--name', 'support-router'];
    const plain = await cli([
      '--texts',
      join(dir, 'tickets.csv'),
      '--question',
      join(dir, 'question.json'),
      '--out',
      join(dir, 'plain', 'model'),
      ...quick,
    ]);
    expect(plain).toEqual({ code: 0, stderr: '' });
    const labelled = await cli([
      '--examples',
      join(dir, 'labelled.jsonl'),
      '--out',
      join(dir, 'labelled', 'model'),
      ...quick,
    ]);
    expect(labelled).toEqual({ code: 0, stderr: '' });
    for (const d of ['model', 'model-release']) {
      const a = hashes(join(dir, 'plain', d));
      expect(Object.keys(a).length).toBeGreaterThan(5);
      const b = hashes(join(dir, 'labelled', d));
      // The card names where its release is, relative to the working directory: otherwise equal.
      const card = (sub: string) =>
        readFileSync(join(dir, sub, 'model', 'README.md'), 'utf8').replaceAll(`/${sub}/`, '/x/');
      if (d === 'model') {
        expect(card('plain')).toBe(card('labelled'));
        delete a['README.md'];
        delete b['README.md'];
      }
      expect(a, d).toEqual(b);
    }
    // The package's decisions say what a request asks beyond its training (NodeDecision.untrained).
    const engine = await loadNodePackage(join(dir, 'plain', 'model'), { threads: 1 });
    try {
      const trained = plantedRequest('my parcel never came', 'support-router');
      expect((await engine.decide(trained)).untrained).toBeUndefined();
      const other = {
        ...trained,
        questions: {
          route: { type: 'choice', criteria: { billing: 'Refunds', sales: null } },
          urgent: { type: 'noul' },
        },
      };
      const decision = await engine.decide(other);
      expect(decision.untrained?.map((p) => [p.kind, p.question, p.option])).toEqual([
        ['description', 'route', 'billing'],
        ['option', 'route', 'sales'],
        ['question', 'urgent', undefined],
      ]);
      expect(Object.keys(decision.response.answers)).toEqual(['route', 'urgent']); // body unchanged
    } finally {
      await engine.dispose();
    }
  }, 120_000);

  it('refuses bad input in one line each, no stack trace, writing nothing', async () => {
    const dir = join(root, 'refusals');
    mkdirSync(dir, { recursive: true });
    const latin1 = join(dir, 'latin1.csv');
    writeFileSync(latin1, Buffer.from(plantedCsv(40, 1).replace('thanks', 'merci café'), 'latin1'));
    const aFile = join(dir, 'a-file');
    writeFileSync(aFile, 'mine');
    const good = join(dir, 'good.csv');
    writeFileSync(good, plantedCsv(40, 1));
    const labelled = join(dir, 'labelled.jsonl');
    writeFileSync(labelled, plantedJsonl(40, 1));
    const cases: Array<[string[], RegExp]> = [
      [
        ['--texts', latin1],
        /^clef-web train: .*latin1\.csv: line \d+, byte offset \d+: byte 0xE9 is not UTF-8/,
      ],
      [
        ['--texts', good],
        /^clef-web train: .*good\.csv: no label column "label" \(the columns are "text", "route"\): name it with --label-column$/,
      ],
      [
        ['--texts', good, '--label-column', 'route', '--out', aFile],
        /^clef-web train: .*a-file is a file: give --out a directory \(nothing was written\)$/,
      ],
      [
        ['--texts', good, '--label-column', 'route', '--release', join(aFile, 'sub')],
        /^clef-web train: .*a-file\/sub cannot be made: .*a-file is a file/,
      ],
      [
        // The verify phase would refuse these requests after the fit: refused in the check phase.
        ['--examples', labelled, '--name', 'other'],
        /^clef-web train: the package answers to the model name "other", but 40 requests ask for "support-router" \(lines 1, 2, 3, .*, \.\.\.\): give every request the same "model", and --name that name or none$/,
      ],
      [
        ['--examples', good, '--question', good],
        /^clef-web train: --question and the column options go with --texts/,
      ],
    ];
    for (const [args, message] of cases) {
      const withOut = args.includes('--out') ? args : [...args, '--out', join(dir, 'out')];
      const { code, stderr } = await cli(withOut);
      expect(code, args.join(' ')).toBe(1);
      expect(stderr, args.join(' ')).toMatch(message);
      expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(readFileSync(aFile, 'utf8')).toBe('mine');
  });

  it('without onnxruntime-node: says so with the install line before any work, and writes nothing', () => {
    const dir = join(root, 'no-ort');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tickets.csv'), plantedCsv(40, 1));
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        join(ROOT, 'test/unit/support/hide-ort.mjs'),
        CLI,
        'train',
        '--texts',
        'tickets.csv',
        '--label-column',
        'route',
        '--out',
        'model',
      ],
      { cwd: dir, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toBe(
      'clef-web train: Training (the package it writes is verified on onnxruntime-node) needs onnxruntime-node, which is not installed: run `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0`\n',
    );
    expect(readdirSync(dir)).toEqual(['tickets.csv']);
  });
});

describe('what the messages say', () => {
  it('every option a train message suggests is one `clef-web train` takes', () => {
    // The trainer (src/build/train) and its Node side (src/node/train), the CLI's usage aside;
    // the code, not its comments (which may name other tools' flags, such as node's).
    const files = ['src/build/train', 'src/node/train'].flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((f) => f.endsWith('.ts') && !(dir === 'src/node/train' && f === 'cli.ts'))
        .map((f) => join(ROOT, dir, f)),
    );
    const code = (text: string) =>
      text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const suggested = new Set<string>();
    for (const file of files) {
      for (const m of code(readFileSync(file, 'utf8')).matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)) {
        suggested.add(m[1]!);
      }
    }
    expect(suggested.size).toBeGreaterThan(8); // the scan finds them
    const taken = new Set([...TRAIN_USAGE.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]));
    expect([...suggested].filter((o) => !taken.has(o))).toEqual([]);
  });

  it("a request longer than the context names its row's line in the plain file", async () => {
    const rows = plantedExamples(120, 6).map((e) => `${csvField(e.state)},${e.label}`);
    rows.splice(2, 0, '"a text over\ntwo lines",billing');
    rows.splice(40, 0, `${'refund '.repeat(300).trim()},billing`);
    const text = `text,route\n${rows.join('\n')}\n`;
    const line = text.split('\n').findIndex((l) => l.startsWith('refund refund')) + 1;
    const e = await trainDecisionModel({
      texts: text,
      question: QUESTION,
      out: join(root, 'long'),
      contextTokens: 256,
      fit: { lambda: 0.1, normScale: 0.3, bias: 1 },
    }).catch((x) => x);
    expect((e as TrainError).code).toBe('examples_too_long');
    expect((e as TrainError).message).toMatch(new RegExp(`\\n  line ${line}: `));
    expect(existsSync(join(root, 'long'))).toBe(false);
  });
});

describe('interrupts leave nothing', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`a real ${signal} to a real \`clef-web train\` while it writes removes its partial folders`, async () => {
      const dir = join(root, `signal-${signal}`);
      mkdirSync(dir, { recursive: true });
      // The fit before the convert phase is the run's cost: 120 rows, enough for every option.
      writeFileSync(join(dir, 'tickets.csv'), plantedCsv(120, 5));
      const child = spawn(
        process.execPath,
        [
          CLI,
          'train',
          '--texts',
          'tickets.csv',
          '--label-column',
          'route',
          '--out',
          'model',
          '--lambda',
          '0.1',
          '--fidelity',
          '0',
        ],
        { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      let sent = false;
      let sawPartial = false;
      child.stderr.on('data', (d: Buffer) => {
        stderr += d;
        // In the convert phase both partial folders exist.
        if (!sent && /train: convert/.test(stderr)) {
          sent = true;
          sawPartial = readdirSync(dir).some((n) => n.includes('.partial-'));
          child.kill(signal);
        }
      });
      const exit = await new Promise<{ code: number | null; signal: string | null }>((r) =>
        child.on('exit', (code, s) => r({ code, signal: s })),
      );
      expect(sent, stderr).toBe(true);
      expect(sawPartial, 'the partial folders existed when the signal was sent').toBe(true);
      expect(exit, stderr).toEqual({ code: null, signal });
      expect(readdirSync(dir)).toEqual(['tickets.csv']);
      expect(stderr).toContain(`clef-web train: ${signal}: stopped; removed the partial folders`);
    }, 120_000);
  }

  it("a later run removes a dead run's partial folders of its output name and says so; a live one's is refused", async () => {
    const dir = join(root, 'stale');
    // A process id that is not running: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const pid = dead.stdout;
    for (const name of [
      `.model.partial-${pid}`,
      `.model-release.partial-${pid}`,
      '.other.partial-1',
    ]) {
      mkdirSync(join(dir, name), { recursive: true });
      writeFileSync(join(dir, name, 'half.onnx'), 'x');
    }
    const messages: string[] = [];
    await trainDecisionModel({
      texts: plantedCsv(120, 4),
      question: QUESTION,
      out: join(dir, 'model'),
      fit: { lambda: 0.1, normScale: 0.3, bias: 1 },
      fidelityRequests: 0,
      onProgress: (p) => p.message && messages.push(p.message),
    });
    expect(messages).toContain(
      `removed ${join(dir, `.model.partial-${pid}`)}, left by an interrupted run`,
    );
    expect(messages).toContain(
      `removed ${join(dir, `.model-release.partial-${pid}`)}, left by an interrupted run`,
    );
    expect(readdirSync(dir).sort()).toEqual(['.other.partial-1', 'model', 'model-release']);

    mkdirSync(join(dir, `.next.partial-${process.ppid}`));
    const e = await trainDecisionModel({
      texts: plantedCsv(120, 4),
      question: QUESTION,
      out: join(dir, 'next'),
    }).catch((x) => x);
    expect((e as TrainError).message).toBe(
      `${join(dir, `.next.partial-${process.ppid}`)} is being written by another run (process ${process.ppid}): wait for it, or give another --out`,
    );
  }, 120_000);
});
