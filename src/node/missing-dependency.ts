/**
 * The optional peer dependency's version and the error for its absence, apart from the module
 * that imports it (ort-node.ts): `clef-web/node`'s declarations name these without naming
 * onnxruntime-node, so they compile where it is not installed.
 */

/** The onnxruntime-node version the package's graphs are tested with. */
export const ORT_NODE_VERSION = '1.30.0';

/**
 * The install command the missing-dependency error names. The variable skips onnxruntime-node's
 * optional CUDA download (clef-web runs on the CPU build it ships); as an environment variable,
 * not `--onnxruntime-node-install=skip`, which npm 11 warns is an unknown config.
 */
export const ORT_NODE_INSTALL = `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@${ORT_NODE_VERSION}`;

export class MissingDependencyError extends Error {
  readonly code = 'missing_dependency';
  constructor(
    readonly dependency: string,
    readonly install: string,
    why: string,
  ) {
    super(`${why} needs ${dependency}, which is not installed: run \`${install}\``);
    this.name = 'MissingDependencyError';
  }
}
