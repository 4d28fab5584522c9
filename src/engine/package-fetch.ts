/**
 * Fetches a package's files same-origin, verifies each against the manifest's SHA-256 and keeps
 * verified files in the Cache Storage API, so a second load does no network I/O. A full quota
 * (or no Cache Storage at all) is reported and loading carries on without caching.
 */
import { DownloadError, IntegrityError, PackageError } from '../wire/errors.js';
import { downloadFile } from './download.js';
import { deleteFile, hasFile, matchBlob, matchFile, putFile } from '../core/cache-parts.js';
import { parseManifest, type ManifestFile, type PackageManifest } from '../core/manifest.js';
import type { LoadProgress } from '../wire/wire.js';
import { missingPackageHint, PACKAGE_CACHE, packageFileKey } from '../wire/assets.js';

export interface FetchOptions {
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
  /** Use the Cache Storage API (default true). */
  cache?: boolean;
  /**
   * Called once the manifest is read, before any other file is fetched. It may name files this
   * load will not fetch (the backbone graphs of the KV precision not chosen): they count in
   * neither the progress total nor the quota check.
   */
  onManifest?: (manifest: PackageManifest) => void | { unused: readonly string[] };
  /** Ask for persistent storage from this package size on (default PERSIST_ABOVE_BYTES). */
  persistAboveBytes?: number;
}

/** What a package load has fetched so far (a PackageSource's counters). */
export interface FetchStats {
  /** Broken transfers resumed with HTTP Range. */
  resumes: number;
  bytesFromNetwork: number;
  bytesFromCache: number;
  /** Time spent fetching (network or cache) and hashing, in ms. */
  downloadMs: number;
  verifyMs: number;
  /** Fetched bytes the engine holds now (loans not yet released), and the most it ever held. */
  heldBytes: number;
  peakHeldBytes: number;
}

/** Verified bytes of some files, held until `release()` (the engine's accounting of them). */
export interface FileLoan {
  readonly bytes: number;
  read(file: ManifestFile): Uint8Array;
  /** Drops the loan's references to its bytes and takes them off `heldBytes`. */
  release(): void;
}

/**
 * An opened package: its manifest, and its files fetched on demand, a few at a time, so the
 * engine can hand each group of graphs to the runtime and let its bytes go before it fetches
 * the next instead of holding the whole package until every session exists.
 */
export interface PackageSource {
  manifest: PackageManifest;
  baseUrl: string;
  /** SHA-256 of manifest.json itself: identifies the package in logs. */
  manifestSha256: string;
  /** Why caching is off, when it is (quota, no Cache Storage); null when files were cached. */
  readonly cacheProblem: string | null;
  /**
   * For packages over PERSIST_ABOVE_BYTES: whether the browser granted persistent storage
   * (cached gigabytes are then not evicted under storage pressure); null when not asked.
   */
  persisted: boolean | null;
  readonly stats: FetchStats;
  /**
   * Fetches `files` (Cache Storage, else the network with resume), verifies each against its
   * SHA-256 and caches it; the bytes stay referenced until the loan is released.
   */
  fetchFiles(files: readonly ManifestFile[]): Promise<FileLoan>;
  /**
   * The cached copy of a file already fetched, as a Blob that Chromium keeps on disk (slices
   * read from there); null when the file is not in Cache Storage (caching off or refused).
   */
  cachedBlob(file: ManifestFile): Promise<Blob | null>;
}

/** Every file of a package, fetched and held (fetchPackage: tools and tests). */
export interface PackageFiles extends FetchStats {
  manifest: PackageManifest;
  baseUrl: string;
  manifestSha256: string;
  cacheProblem: string | null;
  persisted: boolean | null;
  read(file: ManifestFile): Uint8Array;
}

export async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Resolves `path` (already checked to stay inside the package) against the package URL. */
export function packageUrl(baseUrl: string, path: string): string {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  return new URL(path, new URL(base, globalThis.location?.href)).href;
}

async function openCache(): Promise<{ cache: Cache | null; problem: string | null }> {
  if (typeof caches === 'undefined')
    return { cache: null, problem: 'Cache Storage is unavailable' };
  try {
    return { cache: await caches.open(PACKAGE_CACHE), problem: null };
  } catch (e) {
    return { cache: null, problem: `Cache Storage could not be opened: ${(e as Error).message}` };
  }
}

/** Packages at least this big ask for persistent storage (1 GiB). */
const PERSIST_ABOVE_BYTES = 2 ** 30;

function cacheKeyOf(baseUrl: string, file: ManifestFile): string {
  return packageFileKey(packageUrl(baseUrl, file.path), file.sha256);
}

/** Whether the files not cached yet fit in the origin's storage quota. */
async function storageRoom(
  cache: Cache,
  baseUrl: string,
  files: readonly ManifestFile[],
): Promise<{ problem: string | null }> {
  const storage = globalThis.navigator?.storage;
  if (!storage?.estimate) return { problem: null };
  let missing = 0;
  for (const file of files) {
    if (!(await hasFile(cache, cacheKeyOf(baseUrl, file)))) missing += file.bytes;
  }
  const { quota, usage } = await storage.estimate().catch(() => ({}) as StorageEstimate);
  if (quota === undefined || usage === undefined || missing <= quota - usage) {
    return { problem: null };
  }
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  return {
    problem: `Not cached: the package needs ${mb(missing)} more and the storage quota leaves ${mb(Math.max(0, quota - usage))}`,
  };
}

async function askPersistence(): Promise<boolean | null> {
  const storage = globalThis.navigator?.storage;
  if (!storage?.persist) return null;
  return storage.persist().catch(() => false);
}

/** Reads the manifest and opens the cache; fetches no other file (see PackageSource). */
export async function openPackage(
  baseUrl: string,
  options: FetchOptions = {},
): Promise<PackageSource> {
  const { onProgress, signal } = options;
  const manifestUrl = packageUrl(baseUrl, 'manifest.json');
  onProgress?.({ phase: 'manifest', loadedBytes: 0, totalBytes: 0 });
  let manifestResponse: Response;
  try {
    manifestResponse = await fetch(manifestUrl, { signal, cache: 'no-cache' });
  } catch (e) {
    throw new DownloadError(`Could not fetch ${manifestUrl}: ${(e as Error).message}`);
  }
  if (!manifestResponse.ok) {
    const status = manifestResponse.status;
    const hint = status === 404 ? `. ${missingPackageHint(baseUrl)}` : '';
    throw new DownloadError(`Could not fetch ${manifestUrl}: HTTP ${status}${hint}`, {
      file: 'manifest.json',
      status,
    });
  }
  const manifestBytes = new Uint8Array(await manifestResponse.arrayBuffer());
  let manifestJson: unknown;
  try {
    manifestJson = JSON.parse(new TextDecoder().decode(manifestBytes));
  } catch {
    // A server's fallback page (Vite dev answers index.html) means nothing is served there.
    const html = /^\s*</.test(new TextDecoder().decode(manifestBytes.subarray(0, 64)));
    throw new PackageError(
      html
        ? `${manifestUrl} is an HTML page, not a package manifest. ${missingPackageHint(baseUrl)}`
        : `${manifestUrl} is not JSON`,
    );
  }
  const manifest = parseManifest(manifestJson);
  const unused = new Set(options.onManifest?.(manifest)?.unused ?? []);
  const wanted = manifest.files.filter((f) => !unused.has(f.path));
  const manifestSha256 = await sha256Hex(manifestBytes);

  let { cache, problem } =
    options.cache === false ? { cache: null, problem: 'caching disabled' } : await openCache();
  const totalBytes = wanted.reduce((n, f) => n + f.bytes, 0);
  if (cache) {
    // Before downloading gigabytes: will what is not cached yet fit in the quota?
    const room = await storageRoom(cache, baseUrl, wanted);
    if (room.problem) {
      problem = room.problem;
      cache = null;
    }
  }
  const persistAbove = options.persistAboveBytes ?? PERSIST_ABOVE_BYTES;
  const persisted = totalBytes >= persistAbove ? await askPersistence() : null;
  const stats: FetchStats = {
    resumes: 0,
    bytesFromNetwork: 0,
    bytesFromCache: 0,
    downloadMs: 0,
    verifyMs: 0,
    heldBytes: 0,
    peakHeldBytes: 0,
  };
  let loadedBytes = 0;
  // A file fetched again (a device fallback re-creates sessions) is not progress again.
  const reported = new Set<string>();

  async function fetchOne(file: ManifestFile): Promise<Uint8Array> {
    const url = packageUrl(baseUrl, file.path);
    const cacheKey = cacheKeyOf(baseUrl, file);
    const report = !reported.has(file.path);
    reported.add(file.path);
    const progress = (p: LoadProgress) => {
      if (report) onProgress?.(p);
    };
    let data: Uint8Array | null = null;
    let fromCache = false;
    const fetchStart = performance.now();
    if (cache) {
      data = await matchFile(cache, cacheKey, file.bytes).catch(() => null);
      fromCache = data !== null;
    }
    if (!data) {
      const downloaded = await downloadFile(url, file.bytes, {
        signal,
        name: file.path,
        onChunk: (n) => {
          if (report) loadedBytes += n;
          progress({ phase: 'download', file: file.path, loadedBytes, totalBytes });
        },
      });
      data = downloaded.data;
      stats.resumes += downloaded.resumes;
      stats.bytesFromNetwork += data.byteLength;
    } else {
      if (report) loadedBytes += data.byteLength;
      stats.bytesFromCache += data.byteLength;
      progress({ phase: 'download', file: file.path, loadedBytes, totalBytes, fromCache });
    }
    const verifyStart = performance.now();
    stats.downloadMs += verifyStart - fetchStart;
    progress({ phase: 'verify', file: file.path, loadedBytes, totalBytes });
    const actual = await sha256Hex(data);
    stats.verifyMs += performance.now() - verifyStart;
    if (actual !== file.sha256) {
      if (fromCache && cache) await deleteFile(cache, cacheKey);
      throw new IntegrityError(file.path, file.sha256, actual);
    }
    if (cache && !fromCache) {
      try {
        // In parts when big: Chromium refuses single entries above ~256 MiB (cache-parts.ts).
        await putFile(cache, cacheKey, data);
      } catch (e) {
        // A full quota must not fail the load: carry on uncached, and say so in info().
        problem = `Not cached: ${(e as Error).name === 'QuotaExceededError' ? 'storage quota exceeded' : (e as Error).message}`;
        cache = null;
      }
    }
    return data;
  }

  return {
    manifest,
    baseUrl,
    manifestSha256,
    get cacheProblem() {
      return problem;
    },
    persisted,
    stats,
    async cachedBlob(file) {
      return cache ? matchBlob(cache, cacheKeyOf(baseUrl, file)).catch(() => null) : null;
    },
    async fetchFiles(files) {
      let contents: Map<string, Uint8Array> | null = new Map();
      let bytes = 0;
      const hold = (n: number) => {
        stats.heldBytes += n;
        stats.peakHeldBytes = Math.max(stats.peakHeldBytes, stats.heldBytes);
      };
      try {
        for (const file of files) {
          const data = await fetchOne(file);
          contents.set(file.path, data);
          bytes += data.byteLength;
          hold(data.byteLength);
        }
      } catch (e) {
        hold(-bytes);
        throw e;
      }
      return {
        bytes,
        read(file) {
          const data = contents?.get(file.path);
          if (!data) throw new PackageError(`${file.path} is not part of this loan`);
          return data;
        },
        release() {
          if (contents === null) return;
          contents = null;
          hold(-bytes);
        },
      };
    },
  };
}

/** Fetches and verifies every file of a package and holds them all. */
export async function fetchPackage(
  baseUrl: string,
  options: FetchOptions = {},
): Promise<PackageFiles> {
  const source = await openPackage(baseUrl, options);
  const loan = await source.fetchFiles(source.manifest.files);
  return {
    ...source.stats,
    manifest: source.manifest,
    baseUrl,
    manifestSha256: source.manifestSha256,
    cacheProblem: source.cacheProblem,
    persisted: source.persisted,
    read: (file) => loan.read(file),
  };
}
