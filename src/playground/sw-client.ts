/**
 * The page's side of public/sw.js: registration, waiting until the page is controlled (so the
 * engine's worker, created afterwards, is controlled too and everything it fetches is cached),
 * and asking the worker to make a list of URLs available offline.
 */

export interface PrecacheResult {
  cached: string[];
  failed: string[];
  /** The runtime files (/ort/...) the service worker holds. */
  ort: string[];
}

export type OfflineStatus =
  | { state: 'unsupported'; reason: string }
  | { state: 'installing' }
  | { state: 'caching' }
  | { state: 'ready'; cachedFiles: number }
  | { state: 'failed'; reason: string };

export async function registerServiceWorker(): Promise<ServiceWorkerRegistration | null> {
  if (!('serviceWorker' in navigator)) return null;
  return navigator.serviceWorker.register('/sw.js', { scope: '/' });
}

/** Resolves true once a service worker controls this page, false after `timeoutMs`. */
export function waitForController(timeoutMs: number): Promise<boolean> {
  if (!('serviceWorker' in navigator)) return Promise.resolve(false);
  if (navigator.serviceWorker.controller) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    navigator.serviceWorker.addEventListener(
      'controllerchange',
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      { once: true },
    );
  });
}

export function precache(urls: string[]): Promise<PrecacheResult> {
  const controller = navigator.serviceWorker?.controller;
  if (!controller) return Promise.reject(new Error('No service worker controls this page'));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data as PrecacheResult);
    controller.postMessage({ type: 'precache', urls }, [channel.port2]);
  });
}

/** Same-origin resources this page has loaded (its scripts, styles, and the page itself). */
export function pageResources(): string[] {
  const urls = new Set<string>([new URL('/', location.href).href, location.href]);
  for (const entry of performance.getEntriesByType('resource') as PerformanceResourceTiming[]) {
    // A resource that failed (a 404) is not part of the app.
    if (entry.responseStatus >= 400) continue;
    const url = new URL(entry.name);
    if (url.origin !== location.origin) continue;
    if (url.pathname.startsWith('/local-packages/') || url.pathname.startsWith('/models/'))
      continue;
    urls.add(url.href);
  }
  return [...urls];
}
