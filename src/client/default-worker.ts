/**
 * The engine's worker, dedicated or shared (the same script serves both). In the checkout Vite
 * bundles workers/clef.worker.ts from here; the library build replaces this module by one that
 * says `new Worker(new URL('./clef.worker.js', import.meta.url), { type: 'module' })` (and the
 * same with `SharedWorker`) next to the prebuilt worker (vite.lib.config.ts), the pattern
 * consumers' bundlers (Vite, webpack 5, Parcel, Rollup with its URL plugin) resolve and copy.
 */
export function defaultWorker(): Worker {
  return new Worker(new URL('../../workers/clef.worker.ts', import.meta.url), {
    type: 'module',
    name: 'clef-web',
  });
}

/** The engine's worker as a SharedWorker named `name` (one per package and options). */
export function defaultSharedWorker(name: string): SharedWorker {
  return new SharedWorker(new URL('../../workers/clef.worker.ts', import.meta.url), {
    type: 'module',
    name,
  });
}
