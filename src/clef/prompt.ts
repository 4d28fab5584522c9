/**
 * The Clef prompt, token by token (docs/clef-recipe.md §2, and the reference
 * `encode_record` in joint_schema_model.py, which wins where the two differ).
 *
 * Every piece is tokenized on its own and the token lists are concatenated: tokenizing the
 * joined text would merge tokens across piece boundaries and shift the spans the head reads.
 */
import { maxTokensExceededError } from '../protocol/errors.js';
// compareCodePoints: Python sorts str by code point; JS `<` compares UTF-16 code units.
import { compareCodePoints, renderValue } from '../protocol/render.js';
import type {
  Description,
  JsonValue,
  QuestionType,
  ValidQuestion,
  ValidRequest,
} from '../protocol/types.js';

/** Turns text into token ids without inserting any special token (BOS, EOS, ...). */
export interface TextTokenizer {
  encode(text: string): number[];
  /** A lower bound on `encode(text).length` in constant time (ClefTokenizer has one). */
  minTokens?(text: string): number;
  /** `encode`, or a lower bound over `limit` found without tokenizing (ClefTokenizer's). */
  encodeWithin?(text: string, limit: number): { ids: number[] } | { atLeast: number };
}

const SYSTEM_PROMPT =
  'Read the complete state and schema. Decide every field jointly. Each answer ' +
  "must be exactly one of that field's allowed options.";
export const PROMPT_PREFIX = `<|im_start|>system\n${SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\nSTATE:\n`;
export const SCHEMA_HEADER = '\n\nSCHEMA FIELDS:\n';
export const ALLOWED_OPTIONS_HEADER = '\nALLOWED OPTIONS:\n';
const OPTION_END = '\n';
export const FIELD_END = 'END FIELD\n';
export const PROMPT_SUFFIX =
  '\n<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nJOINT SCHEMA DECISIONS:';
const NOUL_DEFAULT_TRUE = 'The proposition is true or the answer is yes.';
const NOUL_DEFAULT_FALSE = 'The proposition is false or the answer is no.';

/** `\nFIELD {i}\nID: {id}\nTYPE: {type}\nINSTRUCTION: ` with i 1-based. */
export function fieldHeader(index1: number, id: string, type: QuestionType): string {
  return `\nFIELD ${index1}\nID: ${id}\nTYPE: ${type}\nINSTRUCTION: `;
}

/** `OPTION {j}: ` with j 1-based. */
export function optionLabel(index1: number): string {
  return `OPTION ${index1}: `;
}

/** The head's type embedding index. */
const QUESTION_TYPE_IDS = { noul: 0, choice: 1, score: 2 } as const;
type QuestionTypeId = (typeof QUESTION_TYPE_IDS)[QuestionType];

export interface EncodedQuestion {
  id: string;
  type: QuestionType;
  typeId: QuestionTypeId;
  /** Token range of the rendered instructions, absolute in inputIds, end exclusive. */
  span: [number, number];
  /** Option ids in prompt order (noul true/false, choice sorted, score "0".."n-1"). */
  optionIds: string[];
  /** Token range of each option's rendered semantics, absolute in inputIds, end exclusive. */
  optionSpans: Array<[number, number]>;
}

export interface EncodedRequest {
  inputIds: number[];
  /** In request order. */
  questions: EncodedQuestion[];
  prefixTokens: number;
  /** State tokens kept in inputIds (after any truncation). */
  stateTokens: number;
  /** Index where the schema starts: inputIds[0, stateEnd) is the cacheable prefix + state. */
  stateEnd: number;
  /** Tokens cut from the end of the state; 0 unless truncateState was asked for and needed. */
  truncatedStateTokens: number;
}

export interface EncodeOptions {
  /** The model's context length: inputIds may hold at most this many tokens. */
  maxTokens: number;
  /** Cut the state's last tokens to fit instead of refusing (explicit opt-in only). */
  truncateState?: boolean;
}

/**
 * Pieces that do not depend on the request, tokenized once per tokenizer: they repeat on every
 * request (and "OPTION j: " up to 255 times per question). Weakly keyed so a dropped tokenizer
 * frees its cache. Only template text is cached, never request content, so the size is bounded.
 */
const fixedPieceCache = new WeakMap<TextTokenizer, Map<string, readonly number[]>>();

function fixedPiece(tokenizer: TextTokenizer, text: string): readonly number[] {
  let cache = fixedPieceCache.get(tokenizer);
  if (cache === undefined) {
    cache = new Map();
    fixedPieceCache.set(tokenizer, cache);
  }
  let ids = cache.get(text);
  if (ids === undefined) {
    ids = Object.freeze(tokenizer.encode(text).slice());
    cache.set(text, ids);
  }
  return ids;
}

function append(target: number[], ids: readonly number[]): void {
  // A loop rather than push(...ids): a long state would overflow the argument limit.
  for (const id of ids) target.push(id);
}

/** A question's options in prompt order, as the reference's `question_options` lists them. */
export function promptOptions(question: ValidQuestion): Array<[string, Description]> {
  if (question.type === 'noul') {
    // Given criteria replace the defaults, a given null included (then no description).
    const descriptions = new Map<string, Description>([
      ['true', NOUL_DEFAULT_TRUE],
      ['false', NOUL_DEFAULT_FALSE],
    ]);
    for (const [key, description] of question.criteria) {
      if (descriptions.has(key)) descriptions.set(key, description);
    }
    return [
      ['true', descriptions.get('true') as Description],
      ['false', descriptions.get('false') as Description],
    ];
  }
  if (question.type === 'choice') {
    return [...question.criteria].sort(([a], [b]) => compareCodePoints(a, b));
  }
  return question.criteria.map(([, description], index) => [String(index), description]);
}

/** What the model reads as a question's instruction: missing, null or "" → the question id. */
export function effectiveInstructions(question: ValidQuestion): JsonValue {
  const { instructions } = question;
  return instructions === undefined || instructions === null || instructions === ''
    ? question.id
    : instructions;
}

/** `{"option_id": id}` plus `"description"` unless null; rendered with sorted keys. */
export function renderOptionSemantics(optionId: string, description: Description): string {
  const semantics: { [key: string]: JsonValue } = { option_id: optionId };
  if (description !== null) semantics.description = description;
  return renderValue(semantics);
}

/** Schema tokens with spans relative to the schema's start. */
interface EncodedSchema {
  ids: number[];
  questions: EncodedQuestion[];
}

function encodeSchema(tokenizer: TextTokenizer, request: ValidRequest): EncodedSchema {
  const ids: number[] = [];
  append(ids, fixedPiece(tokenizer, SCHEMA_HEADER));
  const questions = request.questions.map((question, index): EncodedQuestion => {
    append(ids, tokenizer.encode(fieldHeader(index + 1, question.id, question.type)));
    const start = ids.length;
    append(ids, tokenizer.encode(renderValue(effectiveInstructions(question))));
    const span: [number, number] = [start, ids.length];
    append(ids, fixedPiece(tokenizer, ALLOWED_OPTIONS_HEADER));
    const optionIds: string[] = [];
    const optionSpans: Array<[number, number]> = [];
    promptOptions(question).forEach(([optionId, description], optionIndex) => {
      append(ids, fixedPiece(tokenizer, optionLabel(optionIndex + 1)));
      const optionStart = ids.length;
      append(ids, tokenizer.encode(renderOptionSemantics(optionId, description)));
      optionIds.push(optionId);
      optionSpans.push([optionStart, ids.length]);
      append(ids, fixedPiece(tokenizer, OPTION_END));
    });
    append(ids, fixedPiece(tokenizer, FIELD_END));
    return {
      id: question.id,
      type: question.type,
      typeId: QUESTION_TYPE_IDS[question.type],
      span,
      optionIds,
      optionSpans,
    };
  });
  return { ids, questions };
}

function shift([start, end]: [number, number], offset: number): [number, number] {
  return [start + offset, end + offset];
}

/**
 * Refuses, before any tokenizing, a request whose text is so long that it cannot fit: the
 * tokenizer's constant-time lower bound over the state, the instructions and the options'
 * semantics. Tokenizing is linear-ish in the text, and a 1 MiB body would otherwise take
 * seconds of CPU just to learn it is too long.
 */
function refuseOverLong(
  tokenizer: TextTokenizer,
  request: ValidRequest,
  stateText: string,
  maxTokens: number,
): void {
  const minTokens = tokenizer.minTokens?.bind(tokenizer);
  if (!minTokens) return;
  let bound = minTokens(stateText);
  for (const question of request.questions) {
    bound += minTokens(renderValue(effectiveInstructions(question)));
    // Each description is tokenized inside its option's rendered semantics, which holds it.
    for (const [, description] of question.criteria) {
      if (description !== null) bound += minTokens(renderValue(description));
    }
    if (bound > maxTokens) break;
  }
  if (bound > maxTokens) throw maxTokensExceededError(bound, maxTokens, true);
}

/**
 * Encodes a validated request as the model's input. Refuses (max_tokens_exceeded) when the
 * input is longer than `maxTokens`; with `truncateState` it instead keeps the state's first
 * tokens, as the reference does, and refuses only when even an empty state does not fit.
 */
export function encodeRequest(
  tokenizer: TextTokenizer,
  request: ValidRequest,
  options: EncodeOptions,
): EncodedRequest {
  const { maxTokens, truncateState = false } = options;
  const prefix = fixedPiece(tokenizer, PROMPT_PREFIX);
  const suffix = fixedPiece(tokenizer, PROMPT_SUFFIX);
  const stateText = renderValue(request.state);
  if (!truncateState) refuseOverLong(tokenizer, request, stateText, maxTokens);
  const schema = encodeSchema(tokenizer, request);
  let state: number[];
  const within = truncateState ? undefined : tokenizer.encodeWithin?.bind(tokenizer);
  if (within) {
    const fixed = prefix.length + schema.ids.length + suffix.length;
    const encoded = within(stateText, maxTokens - fixed);
    if ('atLeast' in encoded)
      throw maxTokensExceededError(fixed + encoded.atLeast, maxTokens, true);
    state = encoded.ids;
  } else state = tokenizer.encode(stateText);

  const fixedLength = prefix.length + schema.ids.length + suffix.length;
  const fullLength = fixedLength + state.length;
  let truncatedStateTokens = 0;
  if (fullLength > maxTokens) {
    if (!truncateState || fixedLength > maxTokens) {
      throw maxTokensExceededError(fullLength, maxTokens);
    }
    truncatedStateTokens = fullLength - maxTokens;
    state = state.slice(0, state.length - truncatedStateTokens);
  }

  const stateEnd = prefix.length + state.length;
  const inputIds: number[] = [];
  append(inputIds, prefix);
  append(inputIds, state);
  append(inputIds, schema.ids);
  append(inputIds, suffix);
  const questions = schema.questions.map((question) => ({
    ...question,
    span: shift(question.span, stateEnd),
    optionSpans: question.optionSpans.map((span) => shift(span, stateEnd)),
  }));
  return {
    inputIds,
    questions,
    prefixTokens: prefix.length,
    stateTokens: state.length,
    stateEnd,
    truncatedStateTokens,
  };
}
