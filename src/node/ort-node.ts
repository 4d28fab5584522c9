/**
 * The only module of the Node product that imports onnxruntime-node, and only when a command
 * needs it (serve, decide, verify, calibrate): it is an optional peer dependency, so a browser
 * user's `npm install clef-web` never downloads it. Missing, it is a typed error whose message
 * names the install command (the CLI prints that one line).
 */
import { createRequire } from 'node:module';
import type * as OrtNode from 'onnxruntime-node';
import { MissingDependencyError, ORT_NODE_VERSION } from './missing-dependency.js';

export type OrtNodeModule = typeof OrtNode;
export type NodeSessionOptions = OrtNode.InferenceSession.SessionOptions;

export { MissingDependencyError, ORT_NODE_VERSION };

let loaded: Promise<OrtNodeModule> | null = null;

function notFound(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/** The install command the missing-dependency error names. */
// The variable skips its optional CUDA download (clef-web runs on the CPU build it ships); as an
// environment variable, not `--onnxruntime-node-install=skip`, which npm 11 warns is unknown.
export const ORT_NODE_INSTALL = `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@${ORT_NODE_VERSION}`;

/**
 * Throws the missing-dependency error (naming `why` and the install) when onnxruntime-node
 * cannot be found, without loading it: for a command that runs it in worker threads, so the
 * error is said once, in the main thread.
 */
export function requireOrtNode(why: string): void {
  try {
    createRequire(import.meta.url).resolve('onnxruntime-node');
  } catch (e) {
    if (notFound(e)) throw new MissingDependencyError('onnxruntime-node', ORT_NODE_INSTALL, why);
    throw e;
  }
}

/** onnxruntime-node, imported once; `why` names what needs it for the error message. */
export function loadOrtNode(why = 'Running a package in Node'): Promise<OrtNodeModule> {
  loaded ??= import('onnxruntime-node').then(
    (m) => ((m as { default?: OrtNodeModule }).default ?? m) as OrtNodeModule,
    (e: unknown) => {
      loaded = null;
      if (notFound(e)) {
        throw new MissingDependencyError('onnxruntime-node', ORT_NODE_INSTALL, why);
      }
      throw e;
    },
  );
  return loaded;
}
