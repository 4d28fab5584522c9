/**
 * A worker thread running a module that sits beside the caller: the built .js, or (when the
 * caller runs from source under tsx, as in the unit tests) the .ts through tsx's loader,
 * registered inside the worker (a worker does not inherit the loaders of the thread that starts
 * it).
 */
import { Worker } from 'node:worker_threads';

/** `here`: the caller's import.meta.url; `name`: the module's file name without extension. */
export function moduleWorker(here: string, name: string, workerData: unknown): Worker {
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), { workerData });
  const source = JSON.stringify(new URL(`./${name}.ts`, here).href);
  const code = `import('tsx/esm/api').then(({ register }) => { register(); return import(${source}); })`;
  return new Worker(code, { eval: true, workerData });
}
