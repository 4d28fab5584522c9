// Fuzzing the OpenAI dialects: for OpenAI Decisions (POST /v1/decisions) and Chat
// Completions (POST /v1/chat/completions), 10,000 seeded hostile, malformed and valid bodies each
// through the lossless parser and handleRoute, then 10,000 each over real HTTP through
// `startServer` (keep-alive, 4 in flight; multi-megabyte bodies get 413). Behind both is System
// One's real validator with answers synthesised in the response's shape, so no inference runs
// (the real engine's answers through these routes are test/unit/node/serve/serve-sdks.test.ts's and
// test/browser/sdk-dialects.spec.ts's business); every 2,500 cases a probe through serve on the
// real tiny engine must still be answered right. Every answer must be the one
// docs/interop.md prescribes for how the case was built (tools/fuzz/openai-cases.ts), with no
// crash and nothing unanswered. Reproduce with FUZZ_SEED=<seed>.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleRoute, type RouteBackend } from '../../../src/http/routes.js';
import { validateRequest } from '../../../src/protocol/validate.js';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  nodeEngineBackend,
  startServer,
  type RunningServer,
} from '../../../src/node/serve/server.js';
import {
  generateOpenAiCase,
  type Dialect,
  type OpenAiCase,
} from '../../../tools/fuzz/openai-cases.js';
import { checkOpenAiResponse } from '../../../tools/fuzz/openai-check.js';
import { uniforms } from '../../../tools/fuzz/prng.js';
import { driveServe } from '../../../tools/fuzz/serve-driver.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../support/tiny-package.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 14014);
const COUNT = 10_000;
const PATH: Record<Dialect, string> = { decisions: '/v1/decisions', chat: '/v1/chat/completions' };

/**
 * A backend that validates with System One's own validator (so every request the adapters build
 * must be valid System One) and answers with random probabilities in the response's shape.
 */
function synthetic(seed: number): RouteBackend {
  const random = uniforms(seed);
  const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    models: () => [],
    async decide(body) {
      const request = validateRequest(body, { models: [TINY_MODEL] });
      const answers: Record<string, unknown> = {};
      for (const q of request.questions) {
        if (q.type === 'noul') {
          answers[q.id] = { type: 'noul', noul: round4(random()) };
          continue;
        }
        const raw = q.criteria.map(() => random() + 1e-3);
        const sum = raw.reduce((s, x) => s + x, 0);
        const p = raw.map((x) => x / sum);
        const best = p.indexOf(Math.max(...p));
        const probabilities = Object.fromEntries(
          q.criteria.map(([id], i) => [q.type === 'score' ? String(i) : id, round4(p[i]!)]),
        );
        answers[q.id] =
          q.type === 'choice'
            ? {
                type: 'choice',
                choice: q.criteria[best]![0],
                confidence: round4(p[best]!),
                probabilities,
              }
            : {
                type: 'score',
                score: round4(p.reduce((s, x, i) => s + i * x, 0)),
                confidence: round4(p[best]!),
                legend: {},
                probabilities,
              };
      }
      const response = {
        model: request.model,
        answers,
        usage: { input_tokens: 42, output_tokens: 0 },
      };
      return { json: JSON.stringify(response) };
    },
  };
}

describe.each(['decisions', 'chat'] as const)('fuzzing OpenAI %s', (dialect) => {
  it(`${COUNT} bodies through parse + handleRoute answer as documented (seed ${SEED})`, async () => {
    const backend = synthetic(SEED);
    const failures: string[] = [];
    const statuses: Record<string, number> = {};
    const started = performance.now();
    for (let i = 0; i < COUNT; i++) {
      const c = generateOpenAiCase(SEED, i, { dialect, transport: 'http' });
      const body = typeof c.body === 'string' ? c.body : new Uint8Array(c.body);
      let problems: string[];
      try {
        const res = await handleRoute(
          new Request(`http://127.0.0.1${PATH[dialect]}`, { method: 'POST', body }),
          backend,
        );
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        problems = checkOpenAiResponse(c, res.status, await res.text(), { dialect });
      } catch (e) {
        problems = [`threw ${String(e)}`];
      }
      if (problems.length > 0 && failures.length < 20)
        failures.push(`case ${i} (${c.kind}): ${problems.join('; ')}`);
    }
    console.log(
      `fuzz-openai ${dialect} route: ${COUNT} in ${((performance.now() - started) / 1000).toFixed(1)} s, statuses ${JSON.stringify(statuses)}`,
    );
    expect(failures).toEqual([]);
    for (const status of ['200', '400', '404']) expect(statuses[status] ?? 0).toBeGreaterThan(300);
  }, 120_000);
});

describe('fuzzing the OpenAI dialects through clef-web serve', () => {
  let tiny: TinyPackage;
  let engine: NodeEngine;
  let server: RunningServer;
  let real: RunningServer;
  beforeAll(async () => {
    tiny = await buildTinyPackage('clef-fuzz-openai-');
    engine = await loadNodePackage(tiny.dir, { threads: 1 });
    const backend = synthetic(SEED + 1);
    server = await startServer(
      { decide: (b) => backend.decide(b), modelCards: () => [] },
      { port: 0 },
    );
    real = await startServer(nodeEngineBackend(engine), { port: 0 });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await real?.close();
    await engine?.dispose();
    tiny?.remove();
  });

  /** A valid request of the dialect, answered by the real engine, checked as the fuzz cases are. */
  async function probe(dialect: Dialect, batch: number): Promise<string[]> {
    for (let i = batch * 1000; ; i++) {
      const c = generateOpenAiCase(SEED + 7, i, { dialect, validShare: 1 });
      const res = await fetch(`${real.url}${PATH[dialect]}`, {
        method: 'POST',
        body: c.body as string,
      });
      const problems = checkOpenAiResponse(c, res.status, await res.text(), {
        dialect,
        contextTokens: 1024,
      });
      if (problems.length > 0) return [`probe ${i}: ${problems.join('; ')}`];
      if (res.status === 200) return [];
    }
  }

  /** Case i, or every 2,500th a body over the cap (valid JSON, 2 MiB of input). */
  const makeCase =
    (dialect: Dialect) =>
    (seed: number, i: number): OpenAiCase => {
      const c = generateOpenAiCase(seed, i, { dialect, transport: 'http', validShare: 0.03 });
      if (i % 2500 !== 2499) return c;
      const huge = 'x'.repeat(2 * 1024 * 1024);
      const body =
        dialect === 'decisions'
          ? JSON.stringify({
              model: TINY_MODEL,
              input: huge,
              questions: [{ type: 'predicate', instructions: 'p' }],
            })
          : JSON.stringify({ model: TINY_MODEL, messages: [{ role: 'user', content: huge }] });
      return { kind: 'huge', body, expect: c.expect };
    };

  it.each(['decisions', 'chat'] as const)(
    `${COUNT} %s bodies over HTTP answer as documented (seed ${SEED})`,
    async (dialect) => {
      const probes: string[] = [];
      const summary = await driveServe({
        url: server.url,
        seed: SEED,
        count: COUNT,
        concurrency: 4,
        batch: 2500,
        contextTokens: 1024,
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
        path: PATH[dialect],
        afterBatch: async (done) => {
          probes.push(...(await probe(dialect, done / 2500)));
        },
        dialect: {
          makeCase: makeCase(dialect),
          check: (c, status, text) =>
            checkOpenAiResponse(c as OpenAiCase, status, text, {
              dialect,
              maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
            }),
        },
      });
      console.log(
        `fuzz-openai ${dialect} serve: ${summary.cases} in ${(summary.totalMs / 1000).toFixed(1)} s, ` +
          `statuses ${JSON.stringify(summary.byStatus)}, max latency ${summary.maxLatencyMs.toFixed(0)} ms`,
      );
      expect(summary.noAnswer).toEqual([]);
      expect(summary.mismatches.slice(0, 20)).toEqual([]);
      expect(summary.cases).toBe(COUNT);
      expect(probes).toEqual([]);
      expect(summary.byStatus['413']).toBe(COUNT / 2500);
      for (const status of ['200', '400', '404'])
        expect(summary.byStatus[status] ?? 0).toBeGreaterThan(100);
    },
    240_000,
  );
});
