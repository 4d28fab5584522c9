// Before downloading, the package fetch asks the origin's storage quota whether the files not
// cached yet fit: when they do not, it caches nothing (and says why) instead of writing until
// the quota fails; big packages ask for persistent storage. Run against stand-ins for fetch,
// Cache Storage and navigator.storage whose answers the test sets.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchPackage } from '../../../src/engine/package-fetch.js';

const DIR = 'models/clef-nano';
const manifest = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')) as {
  files: { path: string; bytes: number }[];
};
const TOTAL = manifest.files.reduce((n, f) => n + f.bytes, 0);

function install(quota: number, usage: number) {
  const puts: string[] = [];
  const persistCalls: number[] = [];
  const cache = {
    match: async () => undefined,
    put: async (key: string) => void puts.push(key),
    delete: async () => true,
  };
  vi.stubGlobal('caches', { open: async () => cache });
  vi.stubGlobal('navigator', {
    storage: {
      estimate: async () => ({ quota, usage }),
      persist: async () => (persistCalls.push(1), true),
    },
  });
  vi.stubGlobal('fetch', async (input: string) => {
    const path = new URL(input).pathname.replace('/pkg/', '');
    return new Response(readFileSync(join(DIR, path)));
  });
  return { puts, persistCalls };
}

afterEach(() => vi.unstubAllGlobals());

describe('storage preflight', () => {
  it('caches every file when the quota has room', async () => {
    const { puts } = install(TOTAL * 2, 0);
    const pkg = await fetchPackage('http://test.local/pkg/');
    expect(pkg.cacheProblem).toBeNull();
    expect(puts).toHaveLength(manifest.files.length);
    expect(pkg.persisted).toBeNull(); // 4.2 MB: under the persistence threshold
  });

  it('caches nothing, and says how much is missing, when the package will not fit', async () => {
    const { puts } = install(TOTAL, TOTAL / 2);
    const pkg = await fetchPackage('http://test.local/pkg/');
    expect(puts).toEqual([]);
    expect(pkg.cacheProblem).toMatch(/needs \d+ MiB more and the storage quota leaves \d+ MiB/);
    expect(pkg.bytesFromNetwork).toBe(TOTAL); // the load itself carries on
  });

  it('asks for persistent storage from the size threshold on', async () => {
    const { persistCalls } = install(TOTAL * 2, 0);
    const pkg = await fetchPackage('http://test.local/pkg/', { persistAboveBytes: TOTAL });
    expect(persistCalls).toHaveLength(1);
    expect(pkg.persisted).toBe(true);
  });
});
