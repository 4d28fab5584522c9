// Fairness between clients: a client that floods the server with expensive requests
// must not starve one that sends a request at a time, nor take the whole queue. Real HTTP over
// loopback; the heavy client binds 127.0.0.2, the normal one 127.0.0.1 (the server tells clients
// apart by address). The engines are stand-ins whose decisions take fixed times, so the test
// measures the server's queue, not the model: once through handleRoute (`decide`) and once
// through `route`, the path an engine pool (`serve --workers`) takes.
import { describe, expect, it } from 'vitest';
import type { RouteRequest } from '../../../../src/node/serve/route-job.js';
import { startServer, type ServeEngine } from '../../../../src/node/serve/server.js';
import { raw } from '../../support/raw-http.js';

/** A decision request from `localAddress` (each loopback address is a client of its own). */
const post = (port: number, state: string, localAddress: string) =>
  raw(port, {
    method: 'POST',
    path: '/v1/systemone',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', state, questions: { q: { type: 'noul' } } }),
    localAddress,
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(5);
  }
}

const ANSWER = '{"id":"x","answers":{}}';

/** A heavy request (state "heavy") takes 30 ms of engine time, a normal one 5 ms. */
const cost = (state: unknown) => (state === 'heavy' ? 30 : 5);

const viaDecide: ServeEngine = {
  decide: async (body) => {
    // handleRoute parses the body into Maps (keys kept in order, duplicates detected).
    await sleep(cost((body as Map<string, unknown>).get('state')));
    return { json: ANSWER };
  },
  modelCards: () => [],
};

const viaRoute: ServeEngine = {
  ...viaDecide,
  route: async (request: RouteRequest) => {
    const body = JSON.parse(Buffer.from(request.body!).toString('utf8')) as { state: string };
    await sleep(cost(body.state));
    const bytes = Buffer.from(ANSWER);
    return {
      status: 200,
      headers: [['content-type', 'application/json']],
      body: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer,
    };
  },
};

describe.each([
  ['handleRoute and decide', viaDecide],
  ['route (an engine pool)', viaRoute],
])('fair queue through %s', (_name, engine) => {
  it("answers a normal client's requests while a heavy client's backlog waits", async () => {
    const s = await startServer(engine, { port: 0 });
    try {
      let heavyDone = 0;
      const heavy = Array.from({ length: 30 }, () =>
        post(s.port, 'heavy', '127.0.0.2').then((r) => {
          heavyDone++;
          return r.status;
        }),
      );
      await waitFor(() => s.pending() >= 20);
      // One request at a time, as an ordinary client sends them.
      const normal: number[] = [];
      for (let i = 0; i < 5; i++) normal.push((await post(s.port, 'normal', '127.0.0.1')).status);
      const heavyLeft = 30 - heavyDone;
      expect(normal).toEqual([200, 200, 200, 200, 200]);
      // In arrival order the normal client's first request alone would wait for the whole
      // backlog (30 x 30 ms); fairly, each of its requests waits for about one heavy job.
      expect(
        heavyLeft,
        `heavy requests still unanswered when the normal client was done`,
      ).toBeGreaterThanOrEqual(15);
      expect(await Promise.all(heavy)).toEqual(Array.from({ length: 30 }, () => 200));
    } finally {
      await s.close();
    }
  }, 30_000);

  it("refuses a flooding client's excess with 503 and Retry-After, not another client's request", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const gated: ServeEngine = {
      ...engine,
      decide: async (body) => {
        await gate;
        return engine.decide(body);
      },
      ...(engine.route
        ? { route: async (request: RouteRequest) => (await gate, engine.route!(request)) }
        : {}),
    };
    const s = await startServer(gated, { port: 0, maxQueue: 8 });
    try {
      const flood = Array.from({ length: 8 }, () => post(s.port, 'heavy', '127.0.0.2'));
      await waitFor(() => s.pending() === 8);
      const excess = await post(s.port, 'heavy', '127.0.0.2');
      expect(excess.status).toBe(503);
      expect(excess.headers['retry-after']).toBe('1');
      const detail = (
        JSON.parse(excess.text) as { detail: { error_type: string; message: string } }
      ).detail;
      expect(detail.error_type).toBe('overloaded');
      expect(detail.message).toMatch(/This client has 8 of the server's 8 queued requests/);
      // The queue is full, but with the heavy client's requests: the normal one is taken, and
      // the heavy client's newest waiting request is refused in its place.
      const normal = post(s.port, 'normal', '127.0.0.1');
      await waitFor(() => s.pending() === 8);
      open();
      expect((await normal).status).toBe(200);
      const statuses = (await Promise.all(flood)).map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 503]);
    } finally {
      open();
      await s.close();
    }
  }, 30_000);
});
