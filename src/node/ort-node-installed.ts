/**
 * Whether onnxruntime-node is installed, asked without loading it: for a command that runs it in
 * worker threads (`serve`), so that its absence is said once, in the main thread. Apart from
 * ort-node.ts, which the page's train worker bundles (node:module has no stand-in there).
 */
import { createRequire } from 'node:module';
import { MissingDependencyError, ORT_NODE_INSTALL } from './missing-dependency.js';

/** Throws the missing-dependency error (naming `why` and the install) when it is absent. */
export function requireOrtNode(why: string): void {
  try {
    createRequire(import.meta.url).resolve('onnxruntime-node');
  } catch (e) {
    const code = (e as { code?: string } | null)?.code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') {
      throw new MissingDependencyError('onnxruntime-node', ORT_NODE_INSTALL, why);
    }
    throw e;
  }
}
