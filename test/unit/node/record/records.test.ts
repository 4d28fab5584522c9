// Decision records (docs/records.md): the records `clef-web decide --record` and
// `serve --record` write match the schema and replay as identical on the package that made them;
// another package or calibration is reported as such (exit 1); a torn last line is reported and
// skipped; a changed answer is reported with its |Δp| and the question whose pick changed.
import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENGINE_VERSION, parseRecord, writeJson } from '../../../../src/core/record.js';
import { parseRequestJson } from '../../../../src/protocol/json.js';
import { decideMain } from '../../../../src/node/decide/cli.js';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import { openRecordLog, recordingEngine } from '../../../../src/node/record/log.js';
import { replayMain } from '../../../../src/node/record/replay.js';
import { nodeEngineBackend, startServer } from '../../../../src/node/serve/server.js';
import { serveMain } from '../../../../src/node/serve/cli.js';
import { buildTinyPackage, type TinyPackage } from '../../support/tiny-package.js';
import { within } from '../../support/within.js';

const NANO = 'models/clef-nano';
const schema = JSON.parse(readFileSync('docs/records.schema.json', 'utf8'));
const validate = new Ajv({ allErrors: true }).compile(schema);

let work: string;
let nano: NodeEngine;
let tiny: TinyPackage;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'clef-records-'));
  nano = await loadNodePackage(NANO, { threads: 1 });
  tiny = await buildTinyPackage('clef-records-tiny-');
}, 60_000);
afterAll(async () => {
  await nano?.dispose();
  tiny?.remove();
  rmSync(work, { recursive: true, force: true });
});

const path = (name: string) => join(work, name);
const recordsOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');

/** Runs `clef-web replay` in-process: its exit status and what it printed. */
async function replay(file: string, pkg = NANO): Promise<{ code: number; out: string }> {
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((s: string) => void printed.push(s));
  const err = vi.spyOn(console, 'error').mockImplementation((s: string) => void printed.push(s));
  try {
    const code = await replayMain([file, '--package', pkg]);
    return { code, out: printed.join('\n') };
  } finally {
    log.mockRestore();
    err.mockRestore();
  }
}

/**
 * `clef-web serve` (serveMain) on clef-nano in this process. `listening` resolves with its URL
 * once it prints it (rejecting if it exits first, or after 30 s); `stop` sends the SIGINT its
 * handler answers (once it listens: the handler is set then) and resolves with its exit status,
 * each step with a deadline, and may be called again (it then only awaits the same exit).
 */
function startServeMain(args: string[], output: () => string) {
  const done = serveMain([NANO, ...args]);
  let exited = false;
  const settled = done.then(
    () => (exited = true),
    () => (exited = true),
  );
  const url = () => /listening on (http:\/\/[^\s,]+)/.exec(output())?.[1];
  const listening = async (): Promise<string> => {
    const deadline = Date.now() + 30_000;
    while (url() === undefined) {
      if (exited) throw new Error(`serveMain exited before it listened:\n${output()}`);
      if (Date.now() > deadline)
        throw new Error(`serveMain did not listen within 30 s:\n${output()}`);
      await Promise.race([settled, new Promise((r) => setTimeout(r, 50))]);
    }
    return url()!;
  };
  let stopping: Promise<number> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await listening().catch(() => undefined);
      if (!exited) process.emit('SIGINT');
      return within(done, 30_000, 'serveMain did not exit after SIGINT');
    })());
  return { listening, stop };
}

// Integer-like ids first as written, and a float lexeme in the state: kept by the record.
const REQUESTS = [
  '{"model":"clef-nano","state":{"amount":1.0,"text":"two charges I never made"},"questions":{"7":{"type":"noul"},"route":{"type":"choice","criteria":{"report_fraud":"Fraudulent charges","card_declined":null,"none":null}}}}',
  '{"model":"clef-nano","state":"my card was declined at the shop","questions":{"route":{"type":"choice","criteria":{"report_fraud":null,"card_declined":null,"none":null}},"level":{"type":"score","criteria":["calm","annoyed","furious"]}}}',
];

describe('records from clef-web decide --record', () => {
  let records: string;
  beforeAll(async () => {
    writeFileSync(path('requests.jsonl'), `${REQUESTS.join('\n')}\n{"bad":1}\n`);
    records = path('decide.jsonl');
    const quiet = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const code = await decideMain([
      ...['--in', path('requests.jsonl'), '--out', path('responses.jsonl')],
      ...['--package', NANO, '--record', records, '--quiet'],
    ]);
    quiet.mockRestore();
    expect(code).toBe(0);
  }, 60_000);

  it('writes one record per answered request (none for the refused one), each valid against the schema', () => {
    const lines = recordsOf(records);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const value = JSON.parse(line);
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
      expect(value.package.model).toBe('clef-nano');
      expect(value.package.manifest_sha256).toBe(
        createHash('sha256')
          .update(readFileSync(`${NANO}/manifest.json`))
          .digest('hex'),
      );
      expect(value.engine).toEqual({
        name: 'clef-web',
        version: ENGINE_VERSION,
        device: 'cpu',
        runtime: 'onnxruntime-node',
      });
      expect(value.surface).toBe('decide');
    }
    // The request as received: written key order ("7" first) and the lexeme 1.0.
    expect(lines[0]).toContain(`"request":${REQUESTS[0]}`);
    const responses = recordsOf(path('responses.jsonl')).slice(0, 2);
    expect(lines.map((l) => JSON.parse(l).response)).toEqual(responses.map((r) => JSON.parse(r)));
  });

  it('replays as identical on the package that made them (exit 0)', async () => {
    const { code, out } = await replay(records);
    expect(out).toContain('line 1: identical');
    expect(out).toContain('line 2: identical');
    expect(code).toBe(0);
  }, 30_000);

  it('says "not reproducible" on another package, naming the model, manifest and calibration (exit 1)', async () => {
    const { code, out } = await replay(records, tiny.dir);
    expect(out).toContain('not reproducible: another model: clef-nano recorded, clef-tiny here');
    expect(out).toContain('another package: manifest');
    expect(out).toMatch(/another calibration: [0-9a-f]{12}… recorded, none here/);
    expect(code).toBe(1);
  }, 30_000);

  it('says which when only the calibration changed (a recalibrated copy of the package)', async () => {
    const copy = path('nano-recalibrated');
    cpSync(NANO, copy, { recursive: true });
    const calPath = join(copy, 'calibration.json');
    const cal = JSON.parse(readFileSync(calPath, 'utf8'));
    const type = Object.keys(cal.types)[0]!;
    cal.types[type].temperature *= 1.5;
    const bytes = Buffer.from(JSON.stringify(cal));
    writeFileSync(calPath, bytes);
    const manifest = JSON.parse(readFileSync(join(copy, 'manifest.json'), 'utf8'));
    const entry = manifest.files.find((f: { role: string }) => f.role === 'calibration');
    entry.bytes = bytes.length;
    entry.sha256 = createHash('sha256').update(bytes).digest('hex');
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(manifest));
    const { code, out } = await replay(records, copy);
    expect(out).not.toContain('another model');
    expect(out).toContain('another package: manifest');
    expect(out).toContain(
      `another calibration: ${JSON.parse(recordsOf(records)[0]!).package.calibration_sha256.slice(0, 12)}… recorded, ${entry.sha256.slice(0, 12)}… here`,
    );
    expect(code).toBe(1);
  }, 30_000);

  it('reports a torn last line and skips it (exit 0); a bad line elsewhere fails', async () => {
    const torn = path('torn.jsonl');
    writeFileSync(torn, readFileSync(records));
    truncateSync(torn, readFileSync(torn).length - 40);
    let r = await replay(torn);
    expect(r.out).toContain('line 1: identical');
    expect(r.out).toContain('line 2: torn last line');
    expect(r.code).toBe(0);

    const [a, b] = recordsOf(records);
    writeFileSync(torn, `${a!.slice(0, 50)}\n${b}\n`);
    r = await replay(torn);
    expect(r.out).toContain('line 1: unreadable');
    expect(r.out).toContain('line 2: identical');
    expect(r.code).toBe(1);
  }, 30_000);

  it('reports a changed answer with its |Δp| and the question whose pick changed (exit 1)', async () => {
    // The second record: no number lexeme that JSON.parse would lose in this edit.
    const record = JSON.parse(recordsOf(records)[1]!);
    const route = record.response.answers.route;
    const [top, second] = Object.keys(route.probabilities).sort(
      (x, y) => route.probabilities[y] - route.probabilities[x],
    );
    route.probabilities[top!] -= 0.25;
    route.probabilities[second!] += 0.25;
    route.choice = second;
    writeFileSync(path('changed.jsonl'), `${JSON.stringify(record)}\n`);
    const { code, out } = await replay(path('changed.jsonl'));
    expect(out).toMatch(/line 1: different: max \|Δp\| 2\.50e-1; changed: route/);
    expect(code).toBe(1);
  }, 30_000);

  it('a file with no records is not a pass', async () => {
    writeFileSync(path('empty.jsonl'), '\n');
    expect((await replay(path('empty.jsonl'))).code).toBe(1);
  });
});

describe('records from clef-web serve --record', () => {
  it('records plain and calibrated answers (thresholds in force) that replay as identical', async () => {
    const file = path('serve.jsonl');
    const log = await openRecordLog(file);
    const server = await startServer(
      nodeEngineBackend(recordingEngine(nano, log, { surface: 'serve' })),
      { port: 0 },
    );
    try {
      const post = (route: string, body: string) =>
        fetch(`${server.url}${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
      expect((await post('/v1/systemone', REQUESTS[0]!)).status).toBe(200);
      expect((await post('/v1/clef/calibrated?abstain_below=0.9', REQUESTS[1]!)).status).toBe(200);
    } finally {
      await server.close();
      await log.close();
    }
    const lines = recordsOf(file);
    expect(lines).toHaveLength(2);
    const [plain, calibrated] = lines.map((l) => JSON.parse(l));
    for (const r of [plain, calibrated]) {
      expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
    }
    expect(plain.surface).toBe('serve');
    expect(plain.thresholds).toBeNull();
    expect(calibrated.thresholds.abstain_below).toBe(0.9);
    expect(calibrated.thresholds.coverage.length).toBeGreaterThan(0);
    expect(calibrated.calibrated.questions).toHaveLength(2);
    const { code, out } = await replay(file);
    expect(out).toContain('line 2: identical');
    expect(code).toBe(0);
  }, 60_000);

  it('the serve command line: --record <file> records what it answers, closed cleanly on SIGINT', async () => {
    const file = path('serve-cli.jsonl');
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((s: string) => void printed.push(s));
    const err = vi.spyOn(console, 'error').mockImplementation((s: string) => void printed.push(s));
    const serve = startServeMain(
      ['--port', '0', '--quiet', '--record', file, '--threads', '1'],
      () => printed.join('\n'),
    );
    try {
      const url = await serve.listening();
      const res = await fetch(`${url}/v1/systemone`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: REQUESTS[1],
      });
      expect(res.status).toBe(200);
      expect(await serve.stop()).toBe(0);
    } finally {
      // On a failure path too: the server is stopped (or the test fails saying it is not).
      try {
        await serve.stop();
      } finally {
        log.mockRestore();
        err.mockRestore();
      }
    }
    expect(recordsOf(file)).toHaveLength(1);
    expect((await replay(file)).code).toBe(0);
  }, 90_000);

  it('keeps only the request hash when asked; such a record is not reproducible', async () => {
    const file = path('hashed.jsonl');
    const log = await openRecordLog(file);
    const engine = recordingEngine(nano, log, { surface: 'serve', requestSha256Only: true });
    await engine.decide(parseRequestJson(REQUESTS[0]!));
    await log.close();
    const [line] = recordsOf(file);
    const record = JSON.parse(line!);
    expect(record.request).toBeUndefined();
    expect(record.request_sha256).toBe(createHash('sha256').update(REQUESTS[0]!).digest('hex'));
    expect(validate(record)).toBe(true);
    const { code, out } = await replay(file);
    expect(out).toContain("not reproducible: only the request's SHA-256 was recorded");
    expect(code).toBe(1);
  }, 30_000);

  it('cuts a torn last line off when the file is opened again, then appends whole lines', async () => {
    const file = path('reopen.jsonl');
    writeFileSync(file, `${recordsOf(path('decide.jsonl'))[0]}\n{"format":"clef-web.deci`);
    const log = await openRecordLog(file);
    expect(log.truncatedBytes).toBe('{"format":"clef-web.deci'.length);
    await recordingEngine(nano, log, { surface: 'serve' }).decide(parseRequestJson(REQUESTS[1]!));
    await log.close();
    expect(recordsOf(file).map((l) => parseRecord(l).surface)).toEqual(['decide', 'serve']);
  }, 30_000);
});

describe('the record format', () => {
  it("ENGINE_VERSION is package.json's version", () => {
    expect(ENGINE_VERSION).toBe(JSON.parse(readFileSync('package.json', 'utf8')).version);
  });

  it('the schema refuses a record without its package identity', () => {
    const line = recordsOf(path('decide.jsonl'))[0]!;
    const broken = JSON.parse(line);
    delete broken.package.manifest_sha256;
    expect(validate(broken)).toBe(false);
    expect(() => parseRecord(JSON.stringify(broken))).toThrow(/manifest_sha256/);
  });

  it('writeJson keeps a parsed body exactly: key order and number lexemes', () => {
    const text = '{"b":1.50,"2":[1e3,-0.0,"x\\u00e9"],"a":{"c":null,"d":true}}';
    expect(writeJson(parseRequestJson(text))).toBe(
      '{"b":1.50,"2":[1e3,-0.0,"xé"],"a":{"c":null,"d":true}}',
    );
  });
});
