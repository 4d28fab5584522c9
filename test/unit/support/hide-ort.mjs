// `node --import ./hide-ort.mjs ...`: onnxruntime-node resolves as if it were not installed
// (ERR_MODULE_NOT_FOUND, as for a user who never ran its npm install), so a test can see what a
// command says without it. Only that package is hidden; everything else resolves as usual.
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, next) {
  if (specifier === 'onnxruntime-node' || specifier.startsWith('onnxruntime-node/')) {
    const error = new Error("Cannot find package 'onnxruntime-node' (hidden by hide-ort.mjs)");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
