/**
 * The only module of the Node product that imports onnxruntime-node, and only when a command
 * needs it (serve, decide, verify, calibrate): it is an optional peer dependency, so a browser
 * user's `npm install clef-web` never downloads it. Missing, it is a typed error whose message
 * names the install command (the CLI prints that one line).
 */
import type * as OrtNode from 'onnxruntime-node';
import {
  MissingDependencyError,
  ORT_NODE_INSTALL,
  ORT_NODE_VERSION,
} from './missing-dependency.js';

export type OrtNodeModule = typeof OrtNode;
export type NodeSessionOptions = OrtNode.InferenceSession.SessionOptions;

export { MissingDependencyError, ORT_NODE_VERSION };

let loaded: Promise<OrtNodeModule> | null = null;

function notFound(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
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
