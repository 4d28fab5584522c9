// Remote escalation's policy (src/client/escalation.ts) in Node, against a real `clef-web serve`
// server as the remote; the browser half is test/browser/escalation.spec.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answerConfidence,
  decideRemotely,
  escalating,
  jsonText,
  lowestConfidence,
  markAnsweredBy,
  checkRemoteOptions,
  type RemoteOptions,
} from '../../../src/client/escalation.js';
import { AbortedError } from '../../../src/wire/errors.js';
import type { DecisionWire } from '../../../src/wire/wire.js';
import { isSystemOneError, SystemOneError } from '../../../src/protocol/errors.js';
import { parseRequestJson } from '../../../src/protocol/json.js';
import type { SystemOneResponse } from '../../../src/protocol/types.js';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import {
  nodeEngineBackend,
  startServer,
  type ResponseLogEntry,
  type RunningServer,
  type ServeEngine,
} from '../../../src/node/serve/server.js';
import {
  buildTinyPackage,
  TINY_ALIAS,
  TINY_MODEL,
  type TinyPackage,
} from '../support/tiny-package.js';

let tiny: TinyPackage;
let engine: NodeEngine;
let remote: RunningServer;
const log: ResponseLogEntry[] = [];

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-escalation-test-');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
  remote = await startServer(nodeEngineBackend(engine), {
    port: 0,
    onResponse: (e) => log.push(e),
  });
}, 60_000);
afterAll(async () => {
  await remote?.close();
  await engine?.dispose();
  tiny?.remove();
});

/** The local side: the same engine, as the page's decide would answer. */
const local = async (request: unknown): Promise<DecisionWire> => {
  const text = typeof request === 'string' ? request : jsonText(request);
  const d = await engine.decide(parseRequestJson(text));
  const timings = {
    encodeMs: 0,
    backboneMs: 0,
    headMs: 0,
    totalMs: 1,
    prefixHit: false,
    backboneTokens: 0,
  };
  return { response: d.response, json: d.json, timings };
};

const REQUEST = {
  model: TINY_MODEL,
  state: 'The parcel is late and the box was open.',
  questions: {
    late: { type: 'noul' },
    team: { type: 'choice', criteria: { ship: null, pay: null } },
  },
};

const remoteCalls = () => log.filter((e) => e.path === '/v1/systemone').length;

describe('confidence', () => {
  it('is max(p, 1-p) for noul, the confidence field otherwise, the least one overall', () => {
    expect(answerConfidence({ type: 'noul', noul: 0.3 })).toBe(0.7);
    expect(answerConfidence({ type: 'noul', noul: 0.8 })).toBe(0.8);
    const response: SystemOneResponse = {
      model: 'm',
      answers: {
        a: { type: 'choice', choice: 'x', confidence: 0.61, probabilities: { x: 0.61, y: 0.39 } },
        b: { type: 'noul', noul: 0.45 },
        c: {
          type: 'score',
          score: 1,
          confidence: 0.9,
          legend: { 0: null, 1: null },
          probabilities: { 0: 0.1, 1: 0.9 },
        },
      },
      usage: { input_tokens: 1, output_tokens: 0 },
    };
    expect(lowestConfidence(response)).toBe(0.55);
  });
});

describe('request text', () => {
  it('keeps Map order and number lexemes, and matches JSON.stringify on plain objects', () => {
    const parsed = parseRequestJson('{"b":1.0,"2":[12345678901234567890,{"z":null,"a":true}]}');
    expect(jsonText(parsed)).toBe('{"b":1.0,"2":[12345678901234567890,{"z":null,"a":true}]}');
    const plain = { s: 'é\n"', n: [1.5, -0, 1e21, NaN], u: undefined, o: { f: () => 1 } };
    expect(jsonText(plain)).toBe(JSON.stringify(plain));
  });

  it('appends answered_by (and a remote error) as the last field', () => {
    const d = markAnsweredBy(
      { response: { a: 1 } as never, json: '{"a":1}', timings: {} as never },
      'local',
      { status: null, message: 'down' },
    );
    expect(d.json).toBe(
      '{"a":1,"answered_by":"local","remote_error":{"status":null,"message":"down"}}',
    );
    expect(d.response).toEqual(JSON.parse(d.json));
  });

  it('refuses options that cannot work', () => {
    const when = /remote\.when must be 'always' or \{ below: c \} with 0 < c <= 1/;
    const bad: Array<[Partial<RemoteOptions>, RegExp]> = [
      [{ baseURL: '/relative', when: 'always' }, /absolute URL, not \/relative/],
      [{ baseURL: 'ftp://x', when: 'always' }, /must be http\(s\), not ftp:/],
      [{ baseURL: 'http://x', when: { below: 0 } }, when],
      [{ baseURL: 'http://x', when: { below: 1.000001 } }, when],
      [{ baseURL: 'http://x', when: 'sometimes' as never }, when],
    ];
    for (const [options, message] of bad) {
      expect(() => checkRemoteOptions(options as RemoteOptions)).toThrow(TypeError);
      expect(() => checkRemoteOptions(options as RemoteOptions)).toThrow(message);
    }
    // The edges of what is accepted (a validator's only result is that it returns; the
    // options' effect is checked end to end below, '{ below } escalates exactly when ...').
    for (const ok of [{ below: 1 }, { below: Number.MIN_VALUE }, 'always'] as const) {
      expect(checkRemoteOptions({ baseURL: 'https://x', when: ok })).toBeUndefined();
    }
  });
});

describe('escalating to clef-web serve', () => {
  it("'always' sends every request to the remote, which answers for the alias asked", async () => {
    const before = remoteCalls();
    const decide = escalating(
      { baseURL: remote.url, when: 'always', model: TINY_ALIAS, apiKey: 'k' },
      () => Promise.reject(new Error('local must not be asked')),
    );
    const d = await decide(REQUEST);
    expect(remoteCalls()).toBe(before + 1);
    const direct = await local({ ...REQUEST, model: TINY_ALIAS });
    expect(d.json).toBe(direct.json.slice(0, -1) + ',"answered_by":"remote"}');
    expect(d.response.model).toBe(TINY_ALIAS);
    expect((d.response as { answered_by?: string }).answered_by).toBe('remote');
  });

  it('{ below } escalates exactly when the least confidence is under the threshold', async () => {
    const mine = await local(REQUEST);
    const c = lowestConfidence(mine.response);
    const options = (below: number): RemoteOptions => ({
      baseURL: remote.url,
      when: { below },
      model: TINY_ALIAS,
    });
    let before = remoteCalls();
    const kept = await escalating(options(c), local)(REQUEST); // c is not below c
    expect(remoteCalls()).toBe(before);
    expect(kept.json).toBe(mine.json.slice(0, -1) + ',"answered_by":"local"}');
    before = remoteCalls();
    const sent = await escalating(options(Math.min(1, c + 1e-4)), local)(REQUEST);
    expect(remoteCalls()).toBe(before + 1);
    expect(sent.response.model).toBe(TINY_ALIAS);
    expect(sent.json).toMatch(/,"answered_by":"remote"\}$/);
  });

  it('posts to a Workers AI URL as given and unwraps its result', async () => {
    const url = `${remote.url}/client/v4/accounts/abc/ai/run/@cf/cloudflare/${TINY_MODEL}`;
    const d = await decideRemotely({ baseURL: url, when: 'always' }, REQUEST);
    expect(d.json).toBe((await local(REQUEST)).json);
  });

  it('a remote 4xx is thrown as that SystemOneError in both modes', async () => {
    for (const when of ['always', { below: 1 }] as const) {
      const error = await escalating(
        { baseURL: remote.url, when, model: 'unknown-here' },
        local,
      )(REQUEST).catch((e: unknown) => e);
      expect(isSystemOneError(error)).toBe(true);
      expect((error as SystemOneError).status).toBe(400);
      expect((error as SystemOneError).body).toEqual({
        detail: { error_type: 'api_usage_error', message: 'Unknown model: unknown-here' },
      });
    }
  });

  it('an unreachable or failing remote: below falls back to local with a note; always throws', async () => {
    // A port nothing listens on (the server was closed), and a server with no model (503).
    const closed = await startServer(nodeEngineBackend(engine), { port: 0 });
    await closed.close();
    const broken: ServeEngine = {
      decide: () => Promise.reject(new Error('boom')),
      modelCards: () => [],
    };
    const failing = await startServer(broken, { port: 0 });
    try {
      const mine = await local(REQUEST);
      const down = await escalating({ baseURL: closed.url, when: { below: 1 } }, local)(REQUEST);
      expect(down.response).toMatchObject({
        answered_by: 'local',
        remote_error: { status: null, message: expect.stringMatching(/could not be reached/) },
      });
      expect(
        down.json.startsWith(
          mine.json.slice(0, -1) + ',"answered_by":"local","remote_error":{"status":null,',
        ),
      ).toBe(true);

      const five = await escalating({ baseURL: failing.url, when: { below: 1 } }, local)(REQUEST);
      expect(five.response).toMatchObject({ answered_by: 'local', remote_error: { status: 500 } });

      const always = await escalating(
        { baseURL: closed.url, when: 'always' },
        local,
      )(REQUEST).catch((e: unknown) => e);
      expect((always as SystemOneError).status).toBe(503);
      expect((always as SystemOneError).body).toMatchObject({
        detail: { error_type: 'overloaded' },
      });
      const always500 = await escalating(
        { baseURL: failing.url, when: 'always' },
        local,
      )(REQUEST).catch((e: unknown) => e);
      expect((always500 as SystemOneError).status).toBe(500);
    } finally {
      await failing.close();
    }
  });

  it('a timeout counts as unreachable; the caller aborting is an abort', async () => {
    const silent: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
      );
    const timedOut = await escalating(
      { baseURL: 'http://192.0.2.1', when: { below: 1 }, timeoutMs: 50, fetch: silent },
      local,
    )(REQUEST);
    expect(timedOut.response).toMatchObject({
      answered_by: 'local',
      remote_error: { status: null, message: expect.stringMatching(/did not answer within 50 ms/) },
    });
    const controller = new AbortController();
    const pending = escalating(
      { baseURL: 'http://192.0.2.1', when: 'always', fetch: silent },
      local,
    )(REQUEST, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
  });
});
