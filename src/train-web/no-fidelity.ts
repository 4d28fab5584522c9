/**
 * What the converter's fidelity pass (src/node/verify/fidelity.ts, loaded only when asked for)
 * resolves to in the train worker: the pass runs the float64 reference beside onnxruntime-node,
 * neither of which a page has. The page pipeline asks for no fidelity requests; its verify
 * phase (the page's engine against the fitted function) is the check that stands.
 */
export function measureFidelity(): never {
  throw new Error('the fidelity pass needs onnxruntime-node and does not run in a page');
}
