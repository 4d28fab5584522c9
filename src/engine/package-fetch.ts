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
  onManifest?: (
    manifest: PackageManifest,
  ) => void | { unused: readonly string[] } | Promise<void | { unused: readonly string[] }>;
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

/** manifest.json's bytes; DownloadError when it cannot be fetched. */
async function fetchManifest(
  baseUrl: string,
  manifestUrl: string,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
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
  return new Uint8Array(await manifestResponse.arrayBuffer());
}

/** manifest.json's bytes as JSON; PackageError (naming a served HTML page) when they are not. */
function manifestJsonOf(baseUrl: string, manifestUrl: string, manifestBytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(manifestBytes));
  } catch {
    // A server's fallback page (Vite dev answers index.html) means nothing is served there.
    const html = /^\s*</.test(new TextDecoder().decode(manifestBytes.subarray(0, 64)));
    throw new PackageError(
      html
        ? `${manifestUrl} is an HTML page, not a package manifest. ${missingPackageHint(baseUrl)}`
        : `${manifestUrl} is not JSON`,
    );
  }
}

/** The cache the package's files go to, or null and why not (off, unavailable, no room). */
async function packageCache(
  options: FetchOptions,
  baseUrl: string,
  wanted: readonly ManifestFile[],
): Promise<{ cache: Cache | null; problem: string | null }> {
  const opened =
    options.cache === false ? { cache: null, problem: 'caching disabled' } : await openCache();
  if (opened.cache) {
    // Before downloading gigabytes: will what is not cached yet fit in the quota?
    const room = await storageRoom(opened.cache, baseUrl, wanted);
    if (room.problem) return { cache: null, problem: room.problem };
  }
  return opened;
}

/** A loan of `contents` (`bytes` in all), counted in `stats` until released. */
function loanOf(contents: Map<string, Uint8Array>, bytes: number, stats: FetchStats): FileLoan {
  let held: Map<string, Uint8Array> | null = contents;
  return {
    bytes,
    read(file) {
      const data = held?.get(file.path);
      if (!data) throw new PackageError(`${file.path} is not part of this loan`);
      return data;
    },
    release() {
      if (held === null) return;
      held = null;
      hold(stats, -bytes);
    },
  };
}

function hold(stats: FetchStats, n: number): void {
  stats.heldBytes += n;
  stats.peakHeldBytes = Math.max(stats.peakHeldBytes, stats.heldBytes);
}

/** An opened package's files: fetched on demand, verified, cached, counted (see PackageSource). */
class OpenedPackage implements PackageSource {
  readonly stats: FetchStats = {
    resumes: 0,
    bytesFromNetwork: 0,
    bytesFromCache: 0,
    downloadMs: 0,
    verifyMs: 0,
    heldBytes: 0,
    peakHeldBytes: 0,
  };
  private loadedBytes = 0;
  /** A file fetched again (a device fallback re-creates sessions) is not progress again. */
  private readonly reported = new Set<string>();

  constructor(
    readonly manifest: PackageManifest,
    readonly baseUrl: string,
    readonly manifestSha256: string,
    readonly persisted: boolean | null,
    private cache: Cache | null,
    private problem: string | null,
    private readonly totalBytes: number,
    private readonly options: FetchOptions,
  ) {}

  get cacheProblem(): string | null {
    return this.problem;
  }

  async cachedBlob(file: ManifestFile): Promise<Blob | null> {
    const { cache } = this;
    return cache ? matchBlob(cache, cacheKeyOf(this.baseUrl, file)).catch(() => null) : null;
  }

  async fetchFiles(files: readonly ManifestFile[]): Promise<FileLoan> {
    const contents = new Map<string, Uint8Array>();
    let bytes = 0;
    try {
      for (const file of files) {
        const data = await this.fetchOne(file);
        contents.set(file.path, data);
        bytes += data.byteLength;
        hold(this.stats, data.byteLength);
      }
    } catch (e) {
      hold(this.stats, -bytes);
      throw e;
    }
    return loanOf(contents, bytes, this.stats);
  }

  /** One file's verified bytes, from the cache or the network (then stored in the cache). */
  private async fetchOne(file: ManifestFile): Promise<Uint8Array> {
    const { stats, totalBytes } = this;
    const cacheKey = cacheKeyOf(this.baseUrl, file);
    const report = !this.reported.has(file.path);
    this.reported.add(file.path);
    const progress = (p: LoadProgress) => {
      if (report) this.options.onProgress?.(p);
    };
    let data: Uint8Array | null = null;
    let fromCache = false;
    const fetchStart = performance.now();
    if (this.cache) {
      data = await matchFile(this.cache, cacheKey, file.bytes).catch(() => null);
      fromCache = data !== null;
    }
    if (!data) {
      const downloaded = await downloadFile(packageUrl(this.baseUrl, file.path), file.bytes, {
        signal: this.options.signal,
        name: file.path,
        onChunk: (n) => {
          if (report) this.loadedBytes += n;
          const loadedBytes = this.loadedBytes;
          progress({ phase: 'download', file: file.path, loadedBytes, totalBytes });
        },
      });
      data = downloaded.data;
      stats.resumes += downloaded.resumes;
      stats.bytesFromNetwork += data.byteLength;
    } else {
      if (report) this.loadedBytes += data.byteLength;
      stats.bytesFromCache += data.byteLength;
      const loadedBytes = this.loadedBytes;
      progress({ phase: 'download', file: file.path, loadedBytes, totalBytes, fromCache });
    }
    const verifyStart = performance.now();
    stats.downloadMs += verifyStart - fetchStart;
    progress({ phase: 'verify', file: file.path, loadedBytes: this.loadedBytes, totalBytes });
    const actual = await sha256Hex(data);
    stats.verifyMs += performance.now() - verifyStart;
    if (actual !== file.sha256) {
      if (fromCache && this.cache) await deleteFile(this.cache, cacheKey);
      throw new IntegrityError(file.path, file.sha256, actual);
    }
    if (this.cache && !fromCache) await this.store(cacheKey, data);
    return data;
  }

  private async store(cacheKey: string, data: Uint8Array): Promise<void> {
    try {
      // In parts when big: Chromium refuses single entries above ~256 MiB (cache-parts.ts).
      await putFile(this.cache!, cacheKey, data);
    } catch (e) {
      // A full quota must not fail the load: carry on uncached, and say so in info().
      this.problem = `Not cached: ${(e as Error).name === 'QuotaExceededError' ? 'storage quota exceeded' : (e as Error).message}`;
      this.cache = null;
    }
  }
}

/** Reads the manifest and opens the cache; fetches no other file (see PackageSource). */
export async function openPackage(
  baseUrl: string,
  options: FetchOptions = {},
): Promise<PackageSource> {
  const manifestUrl = packageUrl(baseUrl, 'manifest.json');
  options.onProgress?.({ phase: 'manifest', loadedBytes: 0, totalBytes: 0 });
  const manifestBytes = await fetchManifest(baseUrl, manifestUrl, options.signal);
  const manifest = parseManifest(manifestJsonOf(baseUrl, manifestUrl, manifestBytes));
  const unused = new Set((await options.onManifest?.(manifest))?.unused ?? []);
  const wanted = manifest.files.filter((f) => !unused.has(f.path));
  const manifestSha256 = await sha256Hex(manifestBytes);
  const { cache, problem } = await packageCache(options, baseUrl, wanted);
  const totalBytes = wanted.reduce((n, f) => n + f.bytes, 0);
  const persistAbove = options.persistAboveBytes ?? PERSIST_ABOVE_BYTES;
  const persisted = totalBytes >= persistAbove ? await askPersistence() : null;
  return new OpenedPackage(
    manifest,
    baseUrl,
    manifestSha256,
    persisted,
    cache,
    problem,
    totalBytes,
    options,
  );
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
