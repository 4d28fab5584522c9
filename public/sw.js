// @ts-check
/// <reference lib="webworker" />
/**
 * The playground's service worker: after the first visit the playground works offline.
 *
 * - Navigations: network first, the cached page when offline (responses keep their headers,
 *   COOP/COEP included, so the page stays cross-origin isolated offline).
 * - /ort/ (the runtime's wasm): cache first.
 * - /models/ and /clef-web/models/ (the bundled clef-nano): manifest.json network first (a
 *   rebuilt package is seen at once and its stale files are dropped); other files cache first.
 *   Package files usually live in the engine's own Cache Storage: they are served from there
 *   (read by src/sw/engine-cache.ts, bundled into sw-engine-cache.js, with the engine's cache
 *   name, keys and parts) and never stored twice.
 * - /local-packages/<id>/...: files of a folder the user picked, read through the directory
 *   handle the page stored in IndexedDB (src/playground/local-package-store.ts, bundled into
 *   sw-local-packages.js, names the database for both).
 * - Anything else same-origin (the app's code, Vite's modules in dev): network first, cached.
 * - Message {type: 'precache', urls}: makes sure each URL is available offline; replies on the
 *   given port with {cached, failed}.
 *
 * Plain JavaScript in public/ so that dev (Vite) and build serve it at /sw.js with scope /.
 */

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

/** Model packages: the dev models under /models/, the bundled one the plugin serves. */
/** @param {string} pathname */
const isPackagePath = (pathname) =>
  pathname.startsWith('/models/') || pathname.startsWith('/clef-web/models/');

// The System One routes (POST /v1/systemone, /v1/decisions, GET /v1/models, the Workers AI
// shape) on this origin, answered by a controlled page's engine: see src/sw/route.ts,
// bundled into sw-routes.js by tools/sw/build-routes.mjs. Pages opt in with
// registerSystemOneRoute(clef).
importScripts('/sw-routes.js', '/sw-engine-cache.js');
const systemOne = /** @type {any} */ (sw).clefSystemOne.createSystemOneRoute(sw);
/** @type {(url: string, sha256: string) => Promise<Response | undefined>} */
const enginePackageFile = /** @type {any} */ (sw).clefEngineCache.enginePackageFile;
// The playground's picked folders, with the page's own database and path names:
// src/playground/local-package-store.ts, bundled into sw-local-packages.js.
importScripts('/sw-local-packages.js');
/** @type {{LOCAL_PACKAGES_PATH: string, storedDirectory(id: string): Promise<FileSystemDirectoryHandle | undefined>}} */
const local = /** @type {any} */ (sw).clefLocalPackages;

const CACHE = 'clef-playground-v1';
const LOCAL_PREFIX = local.LOCAL_PACKAGES_PATH;
/**
 * Stored responses are matched by URL only: a dev server's `Vary: Origin` would otherwise make
 * a module script's request (CORS mode, with Origin) miss what a precache fetch stored.
 */
const MATCH = { ignoreVary: true };

sw.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // The app shell; the rest is cached as it is used or when the page asks (precache).
      await cache.add('/').catch(() => undefined);
      await sw.skipWaiting();
    })(),
  );
});

sw.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith('clef-playground-') && name !== CACHE) await caches.delete(name);
      }
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener('fetch', (event) => {
  const request = event.request;
  if (systemOne.matches(request)) {
    event.respondWith(systemOne.respond(event));
    return;
  }
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== sw.location.origin) return;
  // Vite's dev client pings the server to decide when to reload: never answer it from cache.
  if (request.headers.get('accept') === 'text/x-vite-ping') return;
  if (url.pathname.startsWith(LOCAL_PREFIX)) {
    event.respondWith(localFile(url));
  } else if (request.mode === 'navigate') {
    event.respondWith(networkFirst(request, event, { fallback: '/' }));
  } else if (url.pathname.startsWith('/ort/')) {
    event.respondWith(cacheFirst(request, event));
  } else if (isPackagePath(url.pathname)) {
    event.respondWith(
      url.pathname.endsWith('/manifest.json')
        ? manifestNetworkFirst(request, event)
        : packageFile(request, event),
    );
  } else {
    event.respondWith(networkFirst(request, event, {}));
  }
});

sw.addEventListener('message', (event) => {
  if (systemOne.onMessage(event)) return;
  const data = event.data;
  const port = event.ports[0];
  if (!data || data.type !== 'precache' || !Array.isArray(data.urls) || !port) return;
  event.waitUntil(
    precache(data.urls).then(
      (result) => port.postMessage(result),
      (error) => port.postMessage({ cached: [], failed: [String(error)] }),
    ),
  );
});

/** Pending cache writes, so a precache answer waits for what fetches are still storing. */
const pendingPuts = new Set();

/**
 * @param {Request | string} key
 * @param {Response} response
 * @param {ExtendableEvent} [event]
 */
function store(key, response, event) {
  if (!response.ok || response.status !== 200) return;
  const put = caches
    .open(CACHE)
    .then((cache) => cache.put(key, response))
    .catch(() => undefined)
    .finally(() => pendingPuts.delete(put));
  pendingPuts.add(put);
  event?.waitUntil(put);
}

/**
 * @param {Request} request
 * @param {FetchEvent} event
 * @param {{fallback?: string}} options
 */
async function networkFirst(request, event, options) {
  try {
    const response = await fetch(request);
    store(request, response.clone(), event);
    return response;
  } catch (error) {
    const cache = await caches.open(CACHE);
    const hit =
      (await cache.match(request, {
        ignoreVary: true,
        ignoreSearch: request.mode === 'navigate',
      })) ?? (options.fallback ? await cache.match(options.fallback, MATCH) : undefined);
    if (hit) return hit;
    throw error;
  }
}

/** @param {Request} request @param {FetchEvent} event */
async function cacheFirst(request, event) {
  const hit = await (await caches.open(CACHE)).match(request, MATCH);
  if (hit) return hit;
  const response = await fetch(request);
  store(request, response.clone(), event);
  return response;
}

/** @param {Request} request @param {FetchEvent} event */
async function manifestNetworkFirst(request, event) {
  const cache = await caches.open(CACHE);
  let response;
  try {
    response = await fetch(request);
  } catch (error) {
    const hit = await cache.match(request.url, MATCH);
    if (hit) return hit;
    throw error;
  }
  if (response.ok) {
    const text = await response.clone().text();
    const previous = await cache.match(request.url, MATCH);
    if (previous && (await previous.text()) !== text) await dropPackageFiles(cache, request.url);
    store(request.url, response.clone(), event);
  }
  return response;
}

/** A package changed: its files stored here are stale. @param {Cache} cache @param {string} manifestUrl */
async function dropPackageFiles(cache, manifestUrl) {
  const base = manifestUrl.slice(0, manifestUrl.length - 'manifest.json'.length);
  for (const key of await cache.keys()) {
    if (key.url.startsWith(base) && key.url !== manifestUrl) await cache.delete(key);
  }
}

/**
 * The engine's cached copy of a package file, found through the package's cached manifest.
 * @param {string} url
 * @returns {Promise<Response | undefined>}
 */
async function engineCopy(url) {
  const own = await caches.open(CACHE);
  // The package root is the nearest folder above the file with a cached manifest.
  let base = url.slice(0, url.lastIndexOf('/') + 1);
  while (base.length > sw.location.origin.length + '/models/'.length) {
    const manifestResponse = await own.match(`${base}manifest.json`, MATCH);
    if (manifestResponse) {
      /** @type {{files?: Array<{path: string, sha256: string}>}} */
      const manifest = await manifestResponse.json().catch(() => ({}));
      const file = manifest.files?.find((f) => base + f.path === url);
      return file ? enginePackageFile(url, file.sha256) : undefined;
    }
    base = base.slice(0, base.lastIndexOf('/', base.length - 2) + 1);
  }
  return undefined;
}

/** @param {Request} request @param {FetchEvent} event */
async function packageFile(request, event) {
  const hit =
    (await (await caches.open(CACHE)).match(request, MATCH)) ?? (await engineCopy(request.url));
  if (hit) return hit;
  // Not stored here: the engine keeps what it verified; precache stores the rest.
  void event;
  return fetch(request);
}

/**
 * Makes each URL available offline: already cached (here, or a package file in the engine's
 * cache) or fetched now and stored.
 * @param {string[]} urls
 */
async function precache(urls) {
  await Promise.all([...pendingPuts]);
  const cache = await caches.open(CACHE);
  /** @type {string[]} */
  const cached = [];
  /** @type {string[]} */
  const failed = [];
  for (const raw of urls) {
    const url = new URL(raw, sw.location.origin);
    if (url.origin !== sw.location.origin || url.pathname.startsWith(LOCAL_PREFIX)) continue;
    const key = url.href;
    try {
      const isPackageFile = isPackagePath(url.pathname) && !url.pathname.endsWith('/manifest.json');
      if ((await cache.match(key, MATCH)) || (isPackageFile && (await engineCopy(key)))) {
        cached.push(key);
        continue;
      }
      const response = await fetch(key);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      await cache.put(key, response);
      cached.push(key);
    } catch (error) {
      failed.push(`${key}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const ort = (await cache.keys()).filter((r) => new URL(r.url).pathname.startsWith('/ort/'));
  return { cached, failed, ort: ort.map((r) => r.url) };
}

/** @param {number} status @param {string} message */
function textResponse(status, message) {
  return new Response(message, {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
  });
}

const TYPES = /** @type {Record<string, string>} */ ({
  json: 'application/json',
  onnx: 'application/octet-stream',
  data: 'application/octet-stream',
  bin: 'application/octet-stream',
});

/** A file of a picked folder: /local-packages/<id>/<path>. @param {URL} url */
async function localFile(url) {
  const [id, ...segments] = url.pathname.slice(LOCAL_PREFIX.length).split('/');
  const names = segments.map(decodeURIComponent);
  if (!id || names.length === 0 || names.some((n) => n === '' || n === '.' || n === '..')) {
    return textResponse(404, 'Not a file of a local package');
  }
  try {
    const root = await local.storedDirectory(id);
    if (!root) return textResponse(404, `No local package ${id}: pick the folder again`);
    // queryPermission is Chromium's File System Access API (not in TypeScript's DOM types).
    const withPermission =
      /** @type {{queryPermission?: (o: {mode: string}) => Promise<string>}} */ (
        /** @type {unknown} */ (root)
      );
    const permission = await withPermission.queryPermission?.({ mode: 'read' });
    if (permission && permission !== 'granted') {
      return textResponse(
        403,
        `Reading ${root.name} needs permission again: pick the folder again`,
      );
    }
    let dir = root;
    for (const name of names.slice(0, -1)) dir = await dir.getDirectoryHandle(name);
    const file = await (await dir.getFileHandle(names[names.length - 1] ?? '')).getFile();
    const ext = file.name.split('.').pop() ?? '';
    return new Response(file, {
      headers: {
        'content-type': TYPES[ext] ?? 'application/octet-stream',
        'content-length': String(file.size),
        'cross-origin-resource-policy': 'same-origin',
      },
    });
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    if (name === 'NotFoundError' || name === 'TypeMismatchError') {
      return textResponse(404, `${names.join('/')} is not in the picked folder`);
    }
    return textResponse(500, `Could not read ${names.join('/')}: ${String(error)}`);
  }
}
