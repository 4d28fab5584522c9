/**
 * The engine's package files, read from a service worker: the same cache, keys and parts the
 * engine writes (src/engine/package-fetch.ts through src/core/cache-parts.ts), so a service
 * worker serves a verified file without storing it twice. A file stored in parts is read as
 * one Blob from the parts on disk; an incomplete one is not there.
 */
import { matchBlob } from '../core/cache-parts.js';
import { PACKAGE_CACHE, packageFileKey } from '../wire/assets.js';

/**
 * The engine's copy of the package file at `fileUrl` whose manifest SHA-256 is `sha256`, as a
 * Response, or undefined when the engine has not stored it.
 */
export async function enginePackageFile(
  fileUrl: string,
  sha256: string,
  storage: Pick<CacheStorage, 'has' | 'open'> = caches,
): Promise<Response | undefined> {
  if (!(await storage.has(PACKAGE_CACHE))) return undefined;
  const cache = await storage.open(PACKAGE_CACHE);
  const blob = await matchBlob(cache, packageFileKey(fileUrl, sha256)).catch(() => null);
  return blob === null ? undefined : new Response(blob);
}
