// The playground's service worker serves the engine's package files from the engine's own cache
// (src/sw/engine-cache.ts, bundled into public/sw-engine-cache.js): with the engine's cache name
// and keys, and whole when the engine stored the file in parts (over 128 MiB), where reading the
// key alone would give the parts' empty index entry.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { putFile, type CacheLike } from '../../../src/core/cache-parts.js';
import { enginePackageFile } from '../../../src/sw/engine-cache.js';
import { PACKAGE_CACHE, packageFileKey } from '../../../src/wire/assets.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** An in-memory CacheStorage of in-memory caches (bodies and headers kept). */
function fakeStorage() {
  const caches = new Map<string, CacheLike>();
  const open = async (name: string) => {
    let cache = caches.get(name);
    if (!cache) {
      const store = new Map<string, { body: Uint8Array; headers: Headers }>();
      cache = {
        async match(key) {
          const hit = store.get(String(key));
          return hit ? new Response(hit.body.slice(), { headers: hit.headers }) : undefined;
        },
        async put(key, response) {
          store.set(String(key), {
            body: new Uint8Array(await response.arrayBuffer()),
            headers: response.headers,
          });
        },
        async delete(key) {
          return store.delete(String(key));
        },
      };
      caches.set(name, cache);
    }
    return cache as Cache;
  };
  return { has: async (name: string) => caches.has(name), open };
}

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 13 + 5) & 0xff);
const URL_ = 'http://localhost/models/tiny/backbone.onnx.data';
const SHA = 'ab'.repeat(32);

describe("the service worker's read of the engine's package cache", () => {
  it('reads a file the engine stored in parts whole, byte for byte', async () => {
    const storage = fakeStorage();
    const data = bytes(1000);
    // As the engine stores a big file: parts of partBytes, then the index entry.
    await putFile(await storage.open(PACKAGE_CACHE), packageFileKey(URL_, SHA), data, 256);
    const index = await (await storage.open(PACKAGE_CACHE)).match(packageFileKey(URL_, SHA));
    expect((await index!.arrayBuffer()).byteLength).toBe(0); // what a plain match serves
    const response = await enginePackageFile(URL_, SHA, storage);
    expect(new Uint8Array(await response!.arrayBuffer())).toEqual(data);
  });

  it('reads a file stored whole, and nothing for another hash or without the cache', async () => {
    const storage = fakeStorage();
    expect(await enginePackageFile(URL_, SHA, storage)).toBeUndefined();
    const data = bytes(100);
    await putFile(await storage.open(PACKAGE_CACHE), packageFileKey(URL_, SHA), data);
    expect(
      new Uint8Array(await (await enginePackageFile(URL_, SHA, storage))!.arrayBuffer()),
    ).toEqual(data);
    expect(await enginePackageFile(URL_, 'cd'.repeat(32), storage)).toBeUndefined();
  });

  it('is what public/sw.js uses: it names neither the cache nor the key format itself', () => {
    const sw = readFileSync(resolve(ROOT, 'public/sw.js'), 'utf8');
    expect(sw).toContain("importScripts('/sw-routes.js', '/sw-engine-cache.js')");
    expect(sw).toContain('enginePackageFile(url, file.sha256)');
    expect(sw).not.toContain(PACKAGE_CACHE);
    expect(sw).not.toContain('?sha256=');
  });

  it("reads the picked folders' IndexedDB through the page's own code, naming none of it", () => {
    const sw = readFileSync(resolve(ROOT, 'public/sw.js'), 'utf8');
    const store = readFileSync(resolve(ROOT, 'src/playground/local-package-store.ts'), 'utf8');
    expect(sw).toContain("importScripts('/sw-local-packages.js')");
    expect(sw).toContain('local.storedDirectory(id)');
    expect(sw).not.toContain('indexedDB');
    for (const name of store.matchAll(/^const \w+ = ('[^']+');$/gm)) {
      expect(sw, name[1]).not.toContain(name[1]);
    }
    expect(store).toContain("'clef-local-packages'"); // the check above has names to look for
  });
});
