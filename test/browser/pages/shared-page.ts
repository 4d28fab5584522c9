/**
 * Page side of the shared-engine tests and benchmark (createClef({ shared: true })): a tab's
 * first answer timed from createClef, a burst of requests and a quiet line of them, each answer
 * with when it arrived and what it waited behind (timings.queue), and the Web Locks of the
 * origin (a shared engine's locks are gone once its worker is).
 */
import { createClef, type ClefOptions } from '../../../src/client/clef.js';
import type { DecisionWire } from '../../../src/wire/wire.js';
import { enginePage } from './engine-page.js';
import { createTestClef, type TestOptions } from './test-clef.js';

type Options = Omit<ClefOptions & TestOptions, 'onProgress' | 'worker'>;

export interface Answer {
  index: number;
  ok: boolean;
  error?: string;
  sentAt: number;
  answeredAt: number;
  behind: number | null;
  waitedMs: number | null;
  json?: string;
}

/** Milliseconds on a clock every tab of the browser shares. */
const now = () => performance.timeOrigin + performance.now();

async function answer(name: string, request: unknown, index: number): Promise<Answer> {
  const sentAt = now();
  try {
    const wire: DecisionWire = await enginePage.get(name).decide(request);
    const queue = wire.timings.queue;
    return {
      index,
      ok: true,
      sentAt,
      answeredAt: now(),
      behind: queue?.behind ?? null,
      waitedMs: queue?.waitedMs ?? null,
      json: wire.json,
    };
  } catch (e) {
    const error = `${(e as Error).name}: ${(e as Error).message}`;
    return { index, ok: false, error, sentAt, answeredAt: now(), behind: null, waitedMs: null };
  }
}

export const sharedPage = {
  /**
   * createClef, then one decision: how long until that first answer (ms), and the info. With
   * `shipped`, the page API's own createClef and the shipped worker (the benchmark's).
   */
  firstAnswer: async (name: string, options: Options, request: unknown, shipped = false) => {
    const started = now();
    const clef = await (shipped ? createClef(options) : createTestClef(options));
    enginePage.clefs.set(name, clef);
    const wire = await clef.decide(request);
    const ms = now() - started;
    const info = await clef.info();
    return { ms, json: wire.json, info };
  },
  /** `requests` sent at once; resolves with every answer. */
  burst: (name: string, requests: unknown[]) =>
    Promise.all(requests.map((r, i) => answer(name, r, i))),
  /** `count` requests, one every `everyMs` (each sent whether or not the last was answered). */
  quiet: async (name: string, request: unknown, count: number, everyMs: number) => {
    const answers: Array<Promise<Answer>> = [];
    for (let i = 0; i < count; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, everyMs));
      answers.push(answer(name, request, i));
    }
    return Promise.all(answers);
  },
  /** Sends one request and does not wait for it (a tab closed with it running). */
  send: (name: string, request: unknown) => {
    void enginePage
      .get(name)
      .decide(request)
      .catch(() => undefined);
  },
  /** The names of the Web Locks this origin holds or waits for. */
  locks: async () => {
    const { held = [], pending = [] } = await navigator.locks.query();
    return [...held, ...pending].map((l) => l.name ?? '');
  },
  now,
};

declare global {
  interface Window {
    sharedPage: typeof sharedPage;
  }
}
window.sharedPage = sharedPage;
