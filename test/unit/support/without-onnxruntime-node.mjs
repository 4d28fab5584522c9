// `node --import ./test/unit/support/without-onnxruntime-node.mjs ...`: the process resolves no
// `onnxruntime-node`, as where the optional peer dependency was never installed (its import fails
// with ERR_MODULE_NOT_FOUND, the error Node gives for a missing package).
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, next) {
  if (specifier === 'onnxruntime-node' || specifier.startsWith('onnxruntime-node/')) {
    const error = new Error("Cannot find package 'onnxruntime-node' imported from " + context.parentURL);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
