// The security of `clef-web serve`: the defences serve.test.ts does not already prove, each
// with real HTTP requests (raw sockets where a client library would fix the request up): Host
// variants a DNS-rebinding page could send, requests with no or two Host headers, Origin values
// a browser sends from other pages, preflights, `Expect: 100-continue` past the body cap, a
// client trickling its headers, and the loopback bind seen from another interface.
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../../../src/node/engine.js';
import {
  nodeEngineBackend,
  startServer,
  type RunningServer,
} from '../../../../src/node/serve/server.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../../support/tiny-package.js';

let tiny: TinyPackage;
let engine: NodeEngine;
let server: RunningServer;

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-serve-security-');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
  server = await startServer(nodeEngineBackend(engine), { port: 0 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await engine?.dispose();
  tiny?.remove();
});

interface Reply {
  status: number;
  head: string;
  body: string;
  /** How many of `parts` had been written when the answer was complete or the socket closed. */
  partsSent: number;
}

/**
 * Writes `parts` on a fresh connection (with `gapMs` between them) and reads until the server
 * closes it or `idleMs` passes with a full response; returns the first response.
 */
function exchange(
  parts: string[],
  gapMs = 0,
  port = server.port,
  host = '127.0.0.1',
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let received = '';
    let done = false;
    let partsSent = 0;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({
        status,
        head: head.toLowerCase(),
        body,
        partsSent,
      });
    };
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      received += d;
      // A complete response with a content-length: done even if the connection stays open.
      const length = /content-length: (\d+)/i.exec(received);
      const [, body] = received.split('\r\n\r\n');
      if (length && body !== undefined && Buffer.byteLength(body) >= Number(length[1])) finish();
    });
    socket.on('close', finish);
    socket.on('error', (e) => (received ? finish() : reject(e)));
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed || done) return;
        socket.write(part);
        partsSent++;
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

const get = (headers: string[], path = '/v1/models') =>
  exchange([`GET ${path} HTTP/1.1\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`]);

const decision = JSON.stringify({
  model: TINY_MODEL,
  state: 'hi',
  questions: { q: { type: 'noul' } },
});
const post = (headers: string[], body = decision) =>
  exchange([
    `POST /v1/systemone HTTP/1.1\r\n${headers.map((h) => `${h}\r\n`).join('')}` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  ]);

const errorType = (r: Reply) =>
  (JSON.parse(r.body) as { detail: { error_type: string } }).detail.error_type;
const corsHeaders = (r: Reply) =>
  r.head.split('\r\n').filter((l) => l.startsWith('access-control-'));

describe('Host: only the address served (DNS rebinding)', () => {
  it('answers loopback names with this port, IPv6 loopback literal included', async () => {
    const port = server.port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const r = await get([`Host: ${host}`]);
      expect(r.status, host).toBe(200);
      expect(corsHeaders(r)).toEqual([]);
    }
  });

  it('refuses any other name with 421 and the contract error body, before any route runs', async () => {
    const port = server.port;
    const hosts = [
      `evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`, // a public name that resolves to loopback: the classic rebind
      `localhost.:${port}`,
      `sub.localhost:${port}`,
      `[::2]:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      `127.0.0.2:${port}`,
      `0.0.0.0:${port}`,
      `127.0.0.1:${port}@evil.example`,
      `evil.example:${port}, 127.0.0.1:${port}`,
      `127.0.0.1`,
      `[::1]`,
    ];
    for (const host of hosts) {
      for (const r of [await get([`Host: ${host}`]), await post([`Host: ${host}`])]) {
        expect(r.status, host).toBe(421);
        expect(errorType(r)).toBe('api_usage_error');
        expect(r.head).toMatch(/x-typesafe-request-id: [0-9a-f-]{36}/);
        expect(r.head).toMatch(/connection: close/);
      }
    }
  });

  it('refuses a request with no Host, or with two, and never answers it', async () => {
    const none = await get([]);
    const http10 = await exchange(['GET /v1/models HTTP/1.0\r\n\r\n']);
    const two = await get([`Host: 127.0.0.1:${server.port}`, `Host: evil.example:${server.port}`]);
    for (const [what, r] of [
      ['none', none],
      ['http/1.0', http10],
      ['two', two],
    ] as const) {
      expect(r.status, what).toBe(400);
      expect(r.body).not.toMatch(/"models"/);
    }
  });
});

describe('Origin: no other site may read or spend the server', () => {
  const host = () => `Host: 127.0.0.1:${server.port}`;

  it('refuses cross-origin decisions and model lists from any other origin, with no CORS header', async () => {
    const port = server.port;
    const origins = [
      'http://evil.example',
      'null', // sandboxed iframes, file: pages, redirects
      `http://localhost:${port}`, // the same machine by another name is another origin
      `http://127.0.0.1:${port + 1}`,
      `https://127.0.0.1:${port}`,
    ];
    for (const origin of origins) {
      for (const r of [
        await post([host(), `Origin: ${origin}`]),
        await get([host(), `Origin: ${origin}`]),
      ]) {
        expect(r.status, origin).toBe(403);
        expect(corsHeaders(r)).toEqual([]);
        expect(r.body).not.toMatch(/"answers"|"models"/);
      }
    }
    for (const site of ['same-site', 'cross-site']) {
      const r = await post([host(), `Sec-Fetch-Site: ${site}`]);
      expect(r.status, site).toBe(403);
    }
  });

  it('gives a preflight no Access-Control-* header, with or without an Origin', async () => {
    const preflight = (extra: string[]) =>
      exchange([
        `OPTIONS /v1/systemone HTTP/1.1\r\n${host()}\r\n${extra.map((h) => `${h}\r\n`).join('')}` +
          'Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, authorization\r\n\r\n',
      ]);
    for (const r of [await preflight(['Origin: http://evil.example']), await preflight([])]) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(corsHeaders(r)).toEqual([]);
    }
  });

  it('answers its own origin and programs (no Origin) normally', async () => {
    const own = await post([host(), `Origin: http://127.0.0.1:${server.port}`]);
    const program = await post([host(), 'Sec-Fetch-Site: none']);
    for (const r of [own, program]) {
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).answers).toHaveProperty('q');
      expect(corsHeaders(r)).toEqual([]);
    }
  });
});

describe('body cap and slow clients', () => {
  it('refuses an oversized `Expect: 100-continue` body with 413 before it is sent', async () => {
    const size = 64 * 1024 * 1024;
    const r = await exchange([
      `POST /v1/systemone HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n` +
        `content-type: application/json\r\ncontent-length: ${size}\r\nexpect: 100-continue\r\n\r\n`,
    ]);
    expect(r.status).toBe(413); // and no "100 Continue" came first
    expect(errorType(r)).toBe('api_usage_error');
  });

  it('times out a client that trickles its headers a byte at a time (slowloris)', async () => {
    const s = await startServer(nodeEngineBackend(engine), { port: 0, clientTimeoutMs: 300 });
    try {
      const request = `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nX-Slow: ${'a'.repeat(200)}\r\n\r\n`;
      const parts = [...request];
      const r = await exchange(parts, 20, s.port);
      expect(r.status).toBe(408);
      // Ordered by events, not bounded by a clock: the 408 came while the client was still
      // trickling (the timeout runs from the start, a byte does not reset it), and after it had
      // sent more than its first byte (the server read, rather than cutting at once).
      expect(r.partsSent).toBeLessThan(parts.length);
      expect(r.partsSent).toBeGreaterThan(1);
    } finally {
      await s.close();
    }
  });
});

describe('bodies at the edge of JSON text (fixes found by fuzzing)', () => {
  const send = async (bytes: Buffer) => {
    const body = new Uint8Array(bytes);
    const res = await fetch(`${server.url}/v1/systemone`, { method: 'POST', body });
    return { status: res.status, text: await res.text() };
  };
  const utf8 = (text: string) => Buffer.from(text, 'utf8');

  it('refuses bytes that are not UTF-8 with 400, instead of reading them as U+FFFD', async () => {
    const [head, tail] = decision.split('"hi"') as [string, string];
    for (const bad of [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80]]) {
      const r = await send(Buffer.concat([utf8(`${head}"h`), Buffer.from(bad), utf8(`i"${tail}`)]));
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text)).toEqual({
        detail: {
          error_type: 'api_usage_error',
          message: 'Request body is not valid JSON: it is not valid UTF-8',
        },
      });
    }
  });

  it('ignores one byte order mark, as json.loads does, but not two', async () => {
    expect((await send(utf8(`\ufeff${decision}`))).status).toBe(200);
    const two = await send(utf8(`\ufeff\ufeff${decision}`));
    expect(two.status).toBe(400);
    expect(JSON.parse(two.text).detail.error_type).toBe('api_usage_error');
  });

  it('answers a lone-surrogate option under that same key (escaped, as UTF-8 cannot carry it)', async () => {
    const text = JSON.stringify({
      model: TINY_MODEL,
      state: 'x',
      questions: { q: { type: 'choice', criteria: { '\udc80': null, ok: null } } },
    });
    const r = await send(utf8(text));
    expect(r.status).toBe(200);
    expect(r.text).toContain('"probabilities":{"\\udc80":');
    expect(Object.keys(JSON.parse(r.text).answers.q.probabilities)).toEqual(['\udc80', 'ok']);
  });
});

describe('loopback bind', () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;

  // Other addresses to knock on: the machine's first external IPv4 address when it has one,
  // and on Linux 127.0.0.2 (all of 127/8 reaches the loopback interface there, but a socket
  // bound to 127.0.0.1 accepts only that address), so the check runs in an isolated sandbox too.
  const others = [external, process.platform === 'linux' ? '127.0.0.2' : undefined].filter(
    (a): a is string => a !== undefined,
  );
  const knock = (port: number, address: string) =>
    exchange(['GET /v1/models HTTP/1.1\r\n\r\n'], 0, port, address).then(
      (r) => `answered ${r.status}`,
      (e: NodeJS.ErrnoException) => e.code,
    );

  it("is unreachable from the machine's other addresses", async () => {
    expect(server.host).toBe('127.0.0.1');
    expect(others.length, 'no other address to check the bind from').toBeGreaterThan(0);
    for (const address of others) expect(await knock(server.port, address)).toBe('ECONNREFUSED');
  });

  it('the knock itself reaches a server bound to every address (so a refusal means the bind)', async () => {
    const open = await startServer(nodeEngineBackend(engine), {
      port: 0,
      host: '0.0.0.0',
      apiKey: 'secret',
    });
    try {
      for (const address of others) expect(await knock(open.port, address)).toMatch(/^answered /);
    } finally {
      await open.close();
    }
  });
});
