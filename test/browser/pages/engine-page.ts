/**
 * Page side of the engine tests: keeps named clef instances and turns every outcome into plain
 * data Playwright can carry back (errors as class name, code, status, body, details), so the
 * spec files assert on what a page script would see. Loaded by engine.html and sdk.html.
 */
import type { Clef, ClefOptions } from '../../../src/client/clef.js';
import { createTestClef as createClef, type TestOptions } from './test-clef.js';
import type { LoadProgress } from '../../../src/wire/wire.js';
import { SystemOneError } from '../../../src/protocol/errors.js';

export interface ErrorData {
  name: string;
  message: string;
  code?: unknown;
  status?: unknown;
  body?: unknown;
  details?: unknown;
  isSystemOneError: boolean;
  isError: boolean;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ErrorData };

export function errorData(e: unknown): ErrorData {
  const r = (e ?? {}) as Record<string, unknown>;
  return {
    name: String(r.name),
    message: String(r.message),
    code: r.code,
    status: r.status,
    body: r.body,
    details: r.details === undefined ? undefined : { ...(r.details as object) },
    isSystemOneError: e instanceof SystemOneError,
    isError: e instanceof Error,
  };
}

async function outcome<T>(work: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (e) {
    return { ok: false, error: errorData(e) };
  }
}

const clefs = new Map<string, Clef>();
/** Every onProgress report of each named load. */
const progress = new Map<string, LoadProgress[]>();

function get(name: string): Clef {
  const clef = clefs.get(name);
  if (!clef) throw new Error(`no clef named ${name}`);
  return clef;
}

export const enginePage = {
  clefs,
  progress,
  get,
  errorData,
  /** createClef under a name; resolves to its info() or the error. */
  load: (name: string, options: Omit<ClefOptions & TestOptions, 'onProgress' | 'worker'>) =>
    outcome(async () => {
      const reports: LoadProgress[] = [];
      progress.set(name, reports);
      const clef = await createClef({ ...options, onProgress: (p) => reports.push(p) });
      clefs.set(name, clef);
      return clef.info();
    }),
  decide: (name: string, request: unknown) => outcome(() => get(name).decide(request)),
  /** Several requests one after another; one outcome each. */
  decideAll: async (name: string, requests: unknown[]) => {
    const out = [];
    for (const r of requests) out.push(await outcome(() => get(name).decide(r)));
    return out;
  },
  info: (name: string) => outcome(() => get(name).info()),
  dispose: async (name: string) => {
    await clefs.get(name)?.dispose();
    clefs.delete(name);
  },
};

declare global {
  interface Window {
    enginePage: typeof enginePage;
  }
}
window.enginePage = enginePage;
