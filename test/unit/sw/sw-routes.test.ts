// The service worker's System One routes (src/sw/route.ts) and the page's relay half
// (src/client/service-worker.ts), joined by real MessageChannels (structured clone and port
// transfer, as between a service worker and a page), the page deciding with the tiny package.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answerRelay,
  registerSystemOneRoute,
  type RouteClef,
} from '../../../src/client/service-worker.js';
import {
  createSystemOneRoute,
  matchesSystemOneRoute,
  RELAY,
  type SwClientLike,
  type SwScopeLike,
} from '../../../src/sw/route.js';
import Cloudflare from 'cloudflare';
import OpenAI from 'openai';
import { parseRequestJson } from '../../../src/protocol/json.js';
import type { DecisionWire } from '../../../src/wire/wire.js';
import { loadNodePackage, type NodeEngine } from '../../../src/node/engine.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../support/tiny-package.js';

const ORIGIN = 'https://app.example';
let tiny: TinyPackage;
let engine: NodeEngine;
const ports: MessagePort[] = [];

beforeAll(async () => {
  tiny = await buildTinyPackage('clef-sw-test-');
  engine = await loadNodePackage(tiny.dir, { threads: 1 });
}, 60_000);
afterAll(async () => {
  for (const p of ports) p.close();
  await engine?.dispose();
  tiny?.remove();
});

/** A page's clef over the Node engine (decide hands back the engine's exact JSON text). */
function pageClef(options: { delayMs?: number; onCancel?: () => void } = {}): RouteClef {
  return {
    async decide(body, opts): Promise<DecisionWire> {
      if (options.delayMs) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, options.delayMs);
          opts?.signal?.addEventListener('abort', () => {
            clearTimeout(t);
            options.onCancel?.();
            reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
          });
        });
      }
      const d = await engine.decide(body);
      return { response: d.response, json: d.json, timings: {} as DecisionWire['timings'] };
    },
    models: {
      list: async () => ({
        models: [{ name: TINY_MODEL, description: 'tiny', release_date: '2026-10-01' }],
      }),
    },
  };
}

interface FakePage extends SwClientLike {
  messages: unknown[];
  answering: boolean;
}

/** A page: what the SW posts reaches `answerRelay` through a real MessageChannel. */
function page(id: string, clef: RouteClef | null): FakePage {
  const channel = new MessageChannel();
  ports.push(channel.port1, channel.port2);
  const p: FakePage = {
    id,
    messages: [],
    answering: true,
    postMessage: (message, transfer) => channel.port1.postMessage(message, transfer),
  };
  channel.port2.onmessage = (event: MessageEvent) => {
    p.messages.push(event.data);
    // A page without registerSystemOneRoute has no listener: it never answers.
    if (clef) answerRelay(clef, event.data, event.ports[0], () => p.answering);
  };
  return p;
}

function scope(pages: FakePage[]): SwScopeLike & { pages: FakePage[] } {
  return {
    origin: ORIGIN,
    pages,
    clients: {
      get: async (id) => pages.find((p) => p.id === id),
      matchAll: async () => pages,
    },
  };
}

const post = (path: string, body: string, signal?: AbortSignal) =>
  new Request(ORIGIN + path, { method: 'POST', body, ...(signal ? { signal } : {}) });
const TEXT = `{"model":"${TINY_MODEL}","state":"late parcel","questions":{"b":{"type":"noul"},"2":{"type":"choice","criteria":{"x":null,"y":null}}}}`;

describe('which requests the service worker answers', () => {
  it('only this origin, only the System One paths (under basePath when given)', () => {
    const yes = [
      '/v1/systemone',
      '/v1/decisions',
      '/v1/models',
      '/client/v4/accounts/a1/ai/run/@cf/cloudflare/clef-flash',
      // Cloudflare's SDK percent-encodes the model's slashes.
      '/client/v4/accounts/a1/ai/run/@cf%2Fcloudflare%2Fclef-flash',
      '/v1/chat/completions',
    ];
    for (const path of yes)
      expect(matchesSystemOneRoute(new Request(ORIGIN + path), ORIGIN)).toBe(true);
    const no = [
      '/v1/systemone/x',
      '/index.html',
      '/v1',
      '/client/v4/accounts/a/ai/run/@cf/meta/m',
      '/client/v4/accounts/a/ai/run/@cf%252Fcloudflare%252Fm',
      '/v1/chat/completions/x',
    ];
    for (const path of no)
      expect(matchesSystemOneRoute(new Request(ORIGIN + path), ORIGIN)).toBe(false);
    expect(matchesSystemOneRoute(new Request('https://other.example/v1/systemone'), ORIGIN)).toBe(
      false,
    );
    expect(matchesSystemOneRoute(new Request(`${ORIGIN}/app/v1/systemone`), ORIGIN, '/app')).toBe(
      true,
    );
    expect(matchesSystemOneRoute(new Request(`${ORIGIN}/v1/systemone`), ORIGIN, '/app')).toBe(
      false,
    );
  });
});

describe("clef-web's own /v1/clef/ paths", () => {
  it('are answered by the worker with a JSON 404, not left to the page server', async () => {
    // The calibrated route is not relayed yet; an unknown clef path is unknown. Unmatched, the
    // page's own server would answer them (an SPA fallback's 200 HTML): docs/interop.md says 404.
    const a = page('a', pageClef());
    const sw = createSystemOneRoute(scope([a]));
    for (const path of [
      '/v1/clef/calibrated',
      '/v1/clef/calibrated?abstain_below=0.5',
      '/v1/clef/x',
      '/v1/clef',
    ]) {
      const request = post(path, TEXT);
      expect(sw.matches(request), path).toBe(true);
      const res = await sw.respond({ request, clientId: 'a' });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await res.json()).toEqual({ detail: 'Not Found' });
    }
    expect(sw.matches(post('/v1/clefx', TEXT))).toBe(false);
    expect(
      matchesSystemOneRoute(new Request(`${ORIGIN}/app/v1/clef/calibrated`), ORIGIN, '/app'),
    ).toBe(true);
  });
});

describe('relaying to a page', () => {
  it("answers with the page engine's exact JSON, key order kept through the clones", async () => {
    const a = page('a', pageClef());
    const sw = createSystemOneRoute(scope([a]));
    sw.onMessage({ data: { type: RELAY.ready }, source: { id: 'a' } });
    const res = await sw.respond({ request: post('/v1/systemone', TEXT), clientId: 'a' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-typesafe-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const expected = (await engine.decide(parseRequestJson(TEXT))).json;
    expect(await res.text()).toBe(expected);
    expect(expected).toMatch(/"answers":\{"b":.*,"2":/);

    const wai = await sw.respond({
      request: post(`/client/v4/accounts/x/ai/run/@cf/cloudflare/${TINY_MODEL}`, TEXT),
      clientId: 'a',
    });
    expect(await wai.text()).toBe(
      `{"result":${expected},"success":true,"errors":[],"messages":[]}`,
    );
    const models = await sw.respond({ request: new Request(`${ORIGIN}/v1/models`), clientId: 'a' });
    expect(await models.json()).toEqual({
      models: [{ name: TINY_MODEL, description: 'tiny', release_date: '2026-10-01' }],
    });
  });

  it('serves the unmodified cloudflare and openai SDKs, answering as the engine does', async () => {
    const a = page('a', pageClef());
    const sw = createSystemOneRoute(scope([a]));
    sw.onMessage({ data: { type: RELAY.ready }, source: { id: 'a' } });
    const paths: string[] = [];
    // What a controlled page's fetch does: the service worker answers the request.
    const swFetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      paths.push(new URL(request.url).pathname);
      return sw.respond({ request, clientId: 'a' });
    };
    const state = 'The parcel never came.';
    const expected = JSON.parse(
      (
        await engine.decide({
          model: TINY_MODEL,
          state,
          questions: { late: { type: 'noul', instructions: 'Is it late?' } },
        })
      ).json,
    );
    const cf = new Cloudflare({ apiToken: 't', baseURL: `${ORIGIN}/client/v4`, fetch: swFetch });
    const result = await cf.ai.run(`@cf/cloudflare/${TINY_MODEL}`, {
      account_id: 'acct',
      state,
      questions: { late: { type: 'noul', instructions: 'Is it late?' } },
    } as never);
    expect(result).toEqual(expected);
    const oa = new OpenAI({ apiKey: 'k', baseURL: `${ORIGIN}/v1`, fetch: swFetch, maxRetries: 0 });
    const decision = await oa.decisions.create({
      model: TINY_MODEL,
      input: state,
      questions: [{ type: 'predicate', name: 'late', instructions: 'Is it late?' }],
    });
    expect(decision.answers).toEqual([
      { type: 'predicate', name: 'late', probability: expected.answers.late.noul },
    ]);
    expect(paths).toEqual([
      `/client/v4/accounts/acct/ai/run/@cf%2Fcloudflare%2F${TINY_MODEL}`,
      '/v1/decisions',
    ]);
  });

  it('passes the contract errors through (a 422 decided by the page)', async () => {
    const a = page('a', pageClef());
    const sw = createSystemOneRoute(scope([a]));
    const res = await sw.respond({
      request: post('/v1/systemone', `{"model":"${TINY_MODEL}","state":null,"questions":{}}`),
      clientId: 'a',
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: Array<{ loc: unknown[] }> };
    expect(body.detail.map((d) => d.loc)).toEqual([
      ['body', 'state'],
      ['body', 'questions'],
    ]);
  });

  it('finds an unannounced page by pinging (a restarted service worker forgot)', async () => {
    const silent = page('silent', null);
    const b = page('b', pageClef());
    const sw = createSystemOneRoute(scope([silent, b]), { probeTimeoutMs: 200 });
    const res = await sw.respond({ request: post('/v1/systemone', TEXT), clientId: 'silent' });
    expect(res.status).toBe(200);
    expect(silent.messages).toEqual([{ type: RELAY.ping }]);
    expect(b.messages.map((m) => (m as { type: string }).type)).toEqual([RELAY.ping, RELAY.decide]);
  });

  it('503 overloaded, in the route shape, when no page can answer', async () => {
    const silent = page('silent', null);
    const stopped = page('stopped', pageClef());
    stopped.answering = false;
    const sw = createSystemOneRoute(scope([silent, stopped]), { probeTimeoutMs: 100 });
    const overloaded = {
      detail: {
        error_type: 'overloaded',
        message: 'No page with a loaded model is open: open the app and wait for its model to load',
      },
    };
    const res = await sw.respond({ request: post('/v1/systemone', TEXT) });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual(overloaded);
    const models = await sw.respond({ request: new Request(`${ORIGIN}/v1/models`) });
    expect(models.status).toBe(503);
    expect(await models.json()).toEqual(overloaded);
    const wai = await sw.respond({
      request: post('/client/v4/accounts/x/ai/run/@cf/cloudflare/m', TEXT),
    });
    expect(await wai.json()).toEqual({
      success: false,
      errors: [{ code: 503, message: overloaded.detail.message }],
      result: null,
      messages: [],
    });
    // A page that announced, then stopped answering, answers 503 too (not a hang).
    sw.onMessage({ data: { type: RELAY.ready }, source: { id: 'stopped' } });
    const late = await sw.respond({ request: post('/v1/systemone', TEXT) });
    expect(late.status).toBe(503);
    expect(((await late.json()) as typeof overloaded).detail.error_type).toBe('overloaded');
  });

  it('503 when the deciding page closes; a network error and a cancel when the request aborts', async () => {
    const slow = page('slow', pageClef({ delayMs: 1000 }));
    const s = scope([slow]);
    const sw = createSystemOneRoute(s, { livenessIntervalMs: 20 });
    sw.onMessage({ data: { type: RELAY.ready }, source: { id: 'slow' } });
    const pending = sw.respond({ request: post('/v1/systemone', TEXT), clientId: 'slow' });
    await new Promise((r) => setTimeout(r, 50));
    s.pages.splice(0); // the tab was closed
    const closed = await pending;
    expect(closed.status).toBe(503);
    expect(((await closed.json()) as { detail: { message: string } }).detail.message).toMatch(
      /page that was deciding this request was closed/,
    );

    let cancelled = 0;
    const page2 = page('p2', pageClef({ delayMs: 1000, onCancel: () => cancelled++ }));
    const sw2 = createSystemOneRoute(scope([page2]));
    sw2.onMessage({ data: { type: RELAY.ready }, source: { id: 'p2' } });
    const controller = new AbortController();
    const aborted = sw2.respond({
      request: post('/v1/systemone', TEXT, controller.signal),
      clientId: 'p2',
    });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    expect((await aborted).type).toBe('error');
    await new Promise((r) => setTimeout(r, 50));
    expect(cancelled).toBe(1);
  });

  it('ignores messages that are not its own', () => {
    const sw = createSystemOneRoute(scope([]));
    expect(sw.onMessage({ data: { type: 'precache' }, source: { id: 'a' } })).toBe(false);
    expect(sw.onMessage({ data: { type: RELAY.ready }, source: null })).toBe(false);
    expect(sw.onMessage({ data: { type: RELAY.gone }, source: { id: 'a' } })).toBe(true);
  });
});

describe('a page that swaps its model (stops one route, registers another)', () => {
  /** navigator.serviceWorker as far as registerSystemOneRoute uses it. */
  function container(): ServiceWorkerContainer {
    const target = new EventTarget();
    const worker = { postMessage: () => {} };
    const registration = { active: worker } as unknown as ServiceWorkerRegistration;
    return Object.assign(target, {
      controller: worker,
      ready: Promise.resolve(registration),
      register: async () => registration,
      startMessages: () => {},
    }) as unknown as ServiceWorkerContainer;
  }

  /** The replies one relayed ping gets on its port, in order. */
  async function ping(c: ServiceWorkerContainer): Promise<unknown[]> {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    const replies: unknown[] = [];
    channel.port1.onmessage = (e: MessageEvent) => replies.push(e.data);
    c.dispatchEvent(
      new MessageEvent('message', { data: { type: RELAY.ping }, ports: [channel.port2] }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    return replies;
  }

  it('answers with the live route only; a stopped one answers only when none is live', async () => {
    const c = container();
    const first = await registerSystemOneRoute(pageClef(), { container: c });
    expect(await ping(c)).toEqual([{ ok: true, ready: true }]);
    first.stop();
    const second = await registerSystemOneRoute(pageClef(), { container: c });
    // Before the fix the stopped route answered first ("not ready"), and the page's route gave
    // 503 for every request after a model switch.
    expect(await ping(c)).toEqual([{ ok: true, ready: true }]);
    second.stop();
    expect((await ping(c))[0]).toEqual({ ok: true, ready: false });
  });
});
