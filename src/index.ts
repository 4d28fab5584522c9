/**
 * clef-web's package root. Importable in Node without a DOM: nothing here touches `window`,
 * `document` or the ML runtime at import time.
 */
export * from './protocol/index.js';
export {
  encodeRequest,
  type EncodedRequest,
  type EncodedQuestion,
  type EncodeOptions,
  type TextTokenizer,
} from './clef/prompt.js';
