// The server under hostile load: one hostile client must not be able to grow the
// server's memory, stall its event loop or take every connection slot. Each attack is run for
// real over loopback against `clef-web serve`'s server on the tiny package, with small bounds so
// the file stays quick when the defences hold (on the code before the fix each of the first four
// fails: memory grew by tens of MiB, over-long states went through the BPE, a normal client was
// refused). No assertion is a wall-clock bound (waits have deadlines only to fail rather than
// hang): how long the event loop stalls is measured by tools/bench/serve-hostile.ts.
import { readFileSync } from 'node:fs';
import { request, type OutgoingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadTokenizerSync } from '../../../../src/clef/tokenizer.js';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import {
  nodeEngineBackend,
  startServer,
  type RunningServer,
} from '../../../../src/node/serve/server.js';
import { raw, type RawResponse } from '../../support/raw-http.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../../support/tiny-package.js';

let tiny: TinyPackage;
let engine: NodeEngine;
let server: RunningServer;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Heap in use after full collections (what the process really keeps). */
function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-serve-hostile-');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
  server = await startServer(nodeEngineBackend(engine), { port: 0 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await engine?.dispose();
  tiny?.remove();
});

/** One request (support/raw-http.ts). */
const send = raw;

const post = (body: string, path = '/v1/systemone', headers: OutgoingHttpHeaders = {}) =>
  send(server.port, {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

/** A single word of `length` pseudo-random lowercase letters, different for each seed. */
function word(length: number, seed: number): string {
  const codes = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    codes[i] = 97 + ((x >>> 0) % 26);
  }
  return Buffer.from(codes).toString('latin1');
}

const decision = (state: string) =>
  JSON.stringify({ model: TINY_MODEL, state, questions: { q: { type: 'noul' } } });

describe('attack 1: distinct huge single-word states', () => {
  it('are refused 400 max_tokens_exceeded at once and leave nothing behind', async () => {
    await post(decision('warm up'));
    const before = heapAfterGc();
    for (let i = 0; i < 24; i++) {
      const r = await post(decision(word(512 * 1024, 1000 + i)));
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text)).toMatchObject({ detail: { error_type: 'max_tokens_exceeded' } });
    }
    const grownMiB = (heapAfterGc() - before) / 2 ** 20;
    // 24 × 0.5 MiB of state went through; the old entry-bounded cache kept every word (and
    // its token ids): ~90 MiB here.
    expect(grownMiB).toBeLessThan(4);
  });

  it("the tokenizer's piece cache is bounded by bytes, not entries", () => {
    const dir = join(tiny.dir);
    const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as object;
    const tokenizer = loadTokenizerSync(json, undefined, { cacheBytes: 128 * 1024 });
    const words = Array.from({ length: 32 }, (_, i) => word(16 * 1024, 7 + i));
    tokenizer.encode('warm up');
    const before = heapAfterGc();
    for (const w of words) tokenizer.encode(w);
    const grownMiB = (heapAfterGc() - before) / 2 ** 20;
    // 32 × 16 KiB words (and ~13k ids each) went through a 128 KiB cache; `words` itself
    // was allocated before the first measurement.
    expect(grownMiB).toBeLessThan(1);
    // Still correct after evictions: the same text, the same ids.
    expect(tokenizer.encode(words[0]!)).toEqual(
      loadTokenizerSync(json, undefined, {}).encode(words[0]!),
    );
  });
});

/**
 * A POST whose body is sent in two parts: the first at once, the rest when `finish` is called
 * (until then the request is still arriving, whatever the machine's speed).
 */
function postInParts(port: number, body: string) {
  const bytes = Buffer.from(body);
  let finishing!: () => void;
  const answer = new Promise<RawResponse>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/systemone',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': bytes.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.write(bytes.subarray(0, bytes.length >> 1));
    finishing = () => req.end(bytes.subarray(bytes.length >> 1));
  });
  let answered = false;
  void answer.then(
    () => (answered = true),
    () => undefined,
  );
  return { answered: () => answered, finish: () => (finishing(), answer) };
}

describe('attack 2: over-long bodies', () => {
  // What the issue-27 stall came from, asserted by counting rather than timing (the stall itself
  // is measured by tools/bench/serve-hostile.ts): the over-long state never reaches the BPE,
  // and while such bodies arrive other clients are answered.
  it('are refused before any tokenizing; other clients are answered while they arrive', async () => {
    // ClefTokenizer's BPE step: each piece of text it tokenizes goes through encodePiece.
    const bpe = vi.spyOn(engine.tokenizer as any, 'encodePiece');
    const bpeChars = () => bpe.mock.calls.reduce((n, [piece]) => n + (piece as string).length, 0);
    try {
      // The spy sees the engine's tokenizing: a normal decision goes through it.
      expect((await post(decision(`a fresh state ${word(40, 7)}`))).status).toBe(200);
      expect(bpeChars(), 'characters a normal decision tokenized').toBeGreaterThan(40);
      bpe.mockClear();

      const long = Array.from({ length: 4 }, (_, i) =>
        postInParts(server.port, decision(word(1000 * 1024, 50 + i))),
      );
      // Half of each body sent, the rest held back: another client is answered meanwhile.
      for (let i = 0; i < 5; i++) expect((await send(server.port, {})).status).toBe(200);
      expect(long.filter((r) => r.answered())).toEqual([]);
      const answers = await Promise.all(long.map((r) => r.finish()));
      for (const r of answers) {
        expect(r.status).toBe(400);
        expect(JSON.parse(r.text)).toMatchObject({ detail: { error_type: 'max_tokens_exceeded' } });
      }
      // Before the fix each 1000 KiB word went through the BPE (1-2 s of the event loop each).
      expect(bpeChars(), 'characters tokenized for the 4 over-long bodies').toBe(0);
      // The server is still answering decisions.
      expect((await post(decision('after'))).status).toBe(200);
    } finally {
      bpe.mockRestore();
    }
  });
});

/** Opens `count` TCP connections from `localAddress` that send nothing. */
async function idleSockets(port: number, count: number, localAddress: string) {
  const sockets: Socket[] = [];
  const ended = new Set<Socket>();
  const texts = new Map<Socket, string>();
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const s = connect({ port, host: '127.0.0.1', localAddress, allowHalfOpen: true });
          sockets.push(s);
          texts.set(s, '');
          s.setEncoding('utf8');
          s.on('data', (d: string) => texts.set(s, texts.get(s) + d));
          s.on('end', () => ended.add(s));
          s.on('error', () => ended.add(s));
          s.on('close', () => ended.add(s));
          s.once('connect', () => resolve());
          s.once('error', () => resolve());
        }),
    ),
  );
  return { sockets, ended, texts };
}

/** Server-side TCP sockets of this process: all its sockets less the client ones still open. */
const serverSideSockets = (clients: Socket[]) =>
  process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length -
  clients.filter((s) => !s.destroyed).length;

describe('attack 3: idle sockets', () => {
  it('300 silent connections from one client leave others served, and are closed after the timeout', async () => {
    const s = await startServer(nodeEngineBackend(engine), { port: 0, clientTimeoutMs: 1500 });
    const hostile = await idleSockets(s.port, 300, '127.0.0.2');
    try {
      // Another client (another address) is answered while the 300 are held open.
      const normal = await send(s.port, { localAddress: '127.0.0.1' });
      expect(normal.status).toBe(200);
      // Then each idle socket gets its 408 and is really closed by the server (not left
      // half-open, holding the slot in FIN-WAIT-2).
      const deadline = Date.now() + 10_000;
      while (hostile.ended.size < 300 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(hostile.ended.size).toBe(300);
      // The server's side closes after its FIN: waited for (a deadline, not a speed bound).
      const closing = Date.now() + 10_000;
      while (serverSideSockets(hostile.sockets) > 0 && Date.now() < closing) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(serverSideSockets(hostile.sockets)).toBe(0);
    } finally {
      for (const sock of hostile.sockets) sock.destroy();
      await s.close();
    }
  });
});

describe('HTTP details', () => {
  it('405 names the methods allowed; HEAD works where GET does', async () => {
    const r = await send(server.port, { method: 'DELETE', path: '/v1/systemone' });
    expect(r.status).toBe(405);
    expect(r.headers['allow']).toBe('POST');
    const m = await send(server.port, { method: 'PUT', path: '/v1/models' });
    expect(m.status).toBe(405);
    expect(m.headers['allow']).toBe('GET, HEAD');
    const head = await send(server.port, { method: 'HEAD', path: '/v1/models' });
    const get = await send(server.port, {});
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
  });

  it('a body declared as something other than JSON is refused 415', async () => {
    const refused = [
      'application/x-www-form-urlencoded', // what `curl -d` declares
      'multipart/form-data',
      'application/octet-stream',
      'text/html',
    ];
    for (const type of refused) {
      const r = await post(decision('hi'), '/v1/systemone', { 'content-type': type });
      expect(r.status, type).toBe(415);
      expect(JSON.parse(r.text)).toMatchObject({ detail: { error_type: 'api_usage_error' } });
    }
    // text/plain: what fetch() declares for a string body sent without headers.
    const accepted = [
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'text/plain;charset=UTF-8',
    ];
    for (const type of accepted) {
      const r = await post(decision('hi'), '/v1/systemone', { 'content-type': type });
      expect(r.status, type).toBe(200);
    }
  });

  it('a target naming another host (absolute form, //host) is refused', async () => {
    const port = server.port;
    for (const path of [
      'http://evil.example.com/v1/systemone',
      '//evil.example.com/v1/systemone',
      `http://evil.example.com:${port}/v1/systemone`,
    ]) {
      const r = await send(port, {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        body: decision('hi'),
      });
      expect(r.status, path).toBe(400);
    }
    // The absolute form naming this server is what RFC 9112 says a server must accept.
    const own = await send(port, {
      method: 'POST',
      path: `http://127.0.0.1:${port}/v1/systemone`,
      headers: { 'content-type': 'application/json' },
      body: decision('hi'),
    });
    expect(own.status).toBe(200);
  });
});
