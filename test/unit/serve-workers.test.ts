// Issue 27, "use the machine": `clef-web serve --workers N` runs N engines in worker threads.
// Proven here on the tiny package: answers byte for byte what one in-process engine gives, with
// both workers busy at once (the whole request is routed in a worker: JSON, validation,
// tokenizing and the model); errors keep their status and body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodePackage, type NodeEngine } from '../../src/node/engine.js';
import { startEnginePool, type EnginePool } from '../../src/node/serve/engine-pool.js';
import { nodeEngineBackend, startServer, type RunningServer } from '../../src/node/serve/server.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from './support/tiny-package.js';

let tiny: TinyPackage;
let engine: NodeEngine;
let pool: EnginePool;
let server: RunningServer;
let reference: RunningServer;

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-serve-workers-');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
  pool = await startEnginePool(tiny.dir, 2);
  server = await startServer(pool, { port: 0 });
  reference = await startServer(nodeEngineBackend(engine), { port: 0 });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await reference?.close();
  await pool?.dispose();
  await engine?.dispose();
  tiny?.remove();
});

const body = (state: string, questions: object = { q: { type: 'noul' } }) =>
  JSON.stringify({ model: TINY_MODEL, state, questions });

async function post(url: string, text: string) {
  const res = await fetch(`${url}/v1/systemone`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: text,
  });
  return { status: res.status, text: await res.text() };
}

describe('serve --workers 2', () => {
  it('answers 24 concurrent requests byte for byte as one in-process engine does', async () => {
    const bodies = Array.from({ length: 24 }, (_, i) =>
      body(`request ${i}: ${'words of state '.repeat(i % 7)}`, {
        a: { type: 'noul' },
        b: { type: 'choice', criteria: { x: 'the x one', y: null, z: `z ${i}` } },
        c: { type: 'score', criteria: ['low', 'mid', 'high'] },
      }),
    );
    const got = await Promise.all(bodies.map((b) => post(server.url, b)));
    for (let i = 0; i < bodies.length; i++) {
      const want = await post(reference.url, bodies[i]!);
      expect(got[i]!.status).toBe(200);
      expect(got[i]!.text).toBe(want.text);
    }
    expect(pool.lanes).toBe(2);
  });

  it('errors keep their status and body (422, 400 unknown model, max_tokens_exceeded, not JSON)', async () => {
    for (const b of [
      JSON.stringify({ model: TINY_MODEL, questions: {} }),
      body('hi').replace(TINY_MODEL, 'no-such-model'),
      body('word '.repeat(3000)),
      '{"model": ', // not JSON: parsed in the worker now
    ]) {
      const [got, want] = [await post(server.url, b), await post(reference.url, b)];
      expect(got.status).toBeGreaterThanOrEqual(400);
      expect(got).toEqual(want);
    }
  });
});
