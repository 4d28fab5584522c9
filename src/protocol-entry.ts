/**
 * `clef-web/protocol`: the System One contract in TypeScript, for people who want it without
 * the engine. Pure: no DOM, no ML runtime, importable in Node. Every name is listed here on
 * purpose; test/unit/package/api-report.test.ts pins the list.
 */
export type {
  Answer,
  ChoiceAnswer,
  ErrorBody,
  JsonValue,
  ModelCard,
  ModelLimits,
  NoulAnswer,
  Question,
  ScoreAnswer,
  SystemOneRequest,
  SystemOneResponse,
  Usage,
  ValidationIssue,
  ValidQuestion,
  ValidRequest,
} from './protocol/types.js';
export { CLEF_FLASH_LIMITS } from './protocol/types.js';
export { SystemOneError, isSystemOneError } from './protocol/errors.js';
export { parseRequestJson } from './protocol/json.js';
export { validateRequest, type ValidateOptions } from './protocol/validate.js';
export { renderValue } from './protocol/render.js';
export { pythonRound } from './protocol/round.js';
export { buildResponse, serializeResponse, softmaxF32 } from './protocol/answers.js';
export {
  encodeRequest,
  type EncodedQuestion,
  type EncodedRequest,
  type EncodeOptions,
  type TextTokenizer,
} from './clef/prompt.js';
