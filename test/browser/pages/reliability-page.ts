/**
 * Page side of the reliability specs (faults, determinism, concurrency, fuzz): the engine page
 * helpers plus clefs whose workers the test can kill or break (fault-worker.ts), the
 * `<clef-decide>` element, and batch helpers that keep thousands of calls inside the page.
 */
import * as Comlink from 'comlink';
import type { ClefOptions } from '../../../src/client/clef.js';
import type { InstrumentedWorkerApi } from '../../support/instrumented-worker/hooks.js';
import type { FaultSimulation } from '../../support/instrumented-worker/instrumented-wire.js';
import { createTestClef as createClef, type TestOptions } from './test-clef.js';
import '../../../src/element/index.js';
import { sharedRegistry } from '../../../src/element/index.js';
import { SystemOneError } from '../../../src/protocol/errors.js';
import { parseRequestJson } from '../../../src/protocol/json.js';
import { enginePage, errorData, type Outcome } from './engine-page.js';

/** A status and JSON text, as an HTTP client would see them. */
export interface Answer {
  status: number;
  text: string;
}

/** clef.systemone on a body already parsed (losslessly, as the HTTP routes parse it). */
async function viaSystemone(name: string, body: unknown): Promise<Answer | { thrown: string }> {
  try {
    const wire = await enginePage.get(name).decide(body);
    return { status: 200, text: wire.json };
  } catch (e) {
    if (e instanceof SystemOneError) return { status: e.status, text: JSON.stringify(e.body) };
    return { thrown: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

/** clef.fetch on the raw body (text, or bytes that may not be UTF-8). */
async function viaFetch(name: string, body: string | number[]): Promise<Answer> {
  const response = await enginePage.get(name).fetch('http://localhost/v1/systemone', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return { status: response.status, text: await response.text() };
}

/** Workers made for each named clef, oldest first: the last one is the live one. */
const workers = new Map<string, Worker[]>();

type Fault = 'close' | 'throw' | 'quota' | 'gpu-adapter' | 'unflagged-adapter';

function faultWorker(name: string, preload: Fault[]): Worker {
  const worker = new Worker(new URL('./fault-worker.ts', import.meta.url), {
    type: 'module',
    name: `clef-web-test-${name}`,
  });
  // Delivered before the engine's own messages, once the worker's modules have run.
  for (const fault of preload) worker.postMessage({ clefTestFault: fault });
  const list = workers.get(name) ?? [];
  list.push(worker);
  workers.set(name, list);
  return worker;
}

function live(name: string): Worker {
  const list = workers.get(name);
  if (!list?.length) throw new Error(`no worker for ${name}`);
  return list[list.length - 1]!;
}

/**
 * Proxies the tests opened on workers, kept forever: a collected Comlink proxy tells the worker
 * to release its endpoint, which would cut the engine's own proxy off.
 */
const testProxies: Array<Comlink.Remote<InstrumentedWorkerApi>> = [];

export const reliability = {
  /** createClef with a fault worker factory (a lost worker is replaced by a new fault worker). */
  load: async (
    name: string,
    options: Omit<ClefOptions & TestOptions, 'onProgress' | 'worker'>,
    preload: Fault[] = [],
  ) => {
    try {
      const clef = await createClef({ ...options, worker: () => faultWorker(name, preload) });
      enginePage.clefs.set(name, clef);
      return { ok: true, value: await clef.info() } as Outcome<unknown>;
    } catch (e) {
      return { ok: false, error: errorData(e) } as Outcome<unknown>;
    }
  },
  /** Arms one-shot fault simulations in the live worker of `name` (InstrumentedWorkerApi.arm). */
  arm: async (name: string, simulate: FaultSimulation) => {
    const api = Comlink.wrap<InstrumentedWorkerApi>(live(name));
    testProxies.push(api);
    await api.arm(simulate);
  },
  workersMade: (name: string) => workers.get(name)?.length ?? 0,
  terminate: (name: string) => live(name).terminate(),
  fault: (name: string, fault: Fault) => live(name).postMessage({ clefTestFault: fault }),
  /** Settles every promise; one outcome each (errors as plain data). */
  settleAll: async <T>(promises: Array<Promise<T>>): Promise<Array<Outcome<T>>> =>
    Promise.all(
      promises.map((p) =>
        p.then(
          (value) => ({ ok: true, value }) as Outcome<T>,
          (e: unknown) => ({ ok: false, error: errorData(e) }) as Outcome<T>,
        ),
      ),
    ),
  sharedRegistry,
  /**
   * Fuzz cases, all in flight at once: each through clef.fetch, and (when the body is JSON text)
   * through clef.systemone with the lossless parser's value.
   */
  fuzzBatch: (name: string, bodies: Array<string | number[]>) =>
    Promise.all(
      bodies.map(async (body) => {
        let parsed: unknown;
        let direct: Promise<Answer | { thrown: string }> | null = null;
        if (typeof body === 'string') {
          try {
            parsed = parseRequestJson(body);
            direct = viaSystemone(name, parsed);
          } catch {
            direct = null; // not JSON: only the HTTP shape can carry it
          }
        }
        const [fetched, systemone] = await Promise.all([
          viaFetch(name, body).catch((e: unknown) => ({ thrown: String(e) })),
          direct,
        ]);
        return { fetched, systemone };
      }),
    ),
};

declare global {
  interface Window {
    reliability: typeof reliability;
  }
}
window.reliability = reliability;
