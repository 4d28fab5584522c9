/**
 * What `onnxruntime-node` resolves to in the train worker: nothing. The page pipeline asks the
 * converter for no fidelity pass and no WASM-prepared graphs (the two steps that need it) and
 * verifies through the page's own engine instead; a call that still reaches for it fails here,
 * by name, rather than bundling a native module into a page.
 */
throw new Error('onnxruntime-node is not available in a page (the train worker cannot load it)');
