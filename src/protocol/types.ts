/**
 * System One ("Jev") wire types, as docs/system-one.md defines them.
 * Pure types: nothing here may import a runtime.
 */

/**
 * A JSON number parsed from text by `parseRequestJson`, keeping the lexeme so it renders the way
 * Python renders what `json.loads` returns (`1.0` stays a float, `12345678901234567890` an int).
 */
export interface PyNumber {
  readonly kind: 'py-number';
  /** The number exactly as written in the JSON text. */
  readonly lexeme: string;
  /** True when Python's json.loads would give an int (no '.', 'e' or 'E' in the lexeme). */
  readonly isInt: boolean;
}

/**
 * Any JSON value this project handles. Objects parsed from text are `JsonMap`s (a `Map` keeps
 * the written key order, integer-like keys included); objects built in JavaScript are plain.
 */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | PyNumber
  | JsonValue[]
  | JsonMap
  | { [key: string]: JsonValue };
export type JsonMap = Map<string, JsonValue>;

export type QuestionType = 'noul' | 'choice' | 'score';

/** A description of an option or level: a string, an object, an array, or null (none). */
export type Description = JsonValue;

export interface NoulQuestion {
  type: 'noul';
  instructions?: JsonValue;
  criteria?: { true?: Description; false?: Description } | null;
}
export interface ChoiceQuestion {
  type: 'choice';
  instructions?: JsonValue;
  /** option name → description; 2 to 255 options. */
  criteria: Record<string, Description>;
}
export interface ScoreQuestion {
  type: 'score';
  instructions?: JsonValue;
  /** level descriptions, index = level; 2 to 10 levels. */
  criteria: Description[];
}
export type Question = NoulQuestion | ChoiceQuestion | ScoreQuestion;

/** A request as a page script writes it. */
export interface SystemOneRequest {
  model: string;
  state: string | JsonValue[] | { [key: string]: JsonValue } | JsonMap;
  questions: Record<string, Question> | Map<string, Question>;
}

/** One question after validation, in request order, with its options in prompt order. */
export interface ValidQuestion {
  id: string;
  type: QuestionType;
  /** The question as sent (instructions missing, null or "" are still as sent). */
  instructions: JsonValue | undefined;
  /**
   * The options as the request lists them: choice in the request's criteria order, noul as
   * the criteria given (may be empty), score as `"0"`, `"1"`, ... with each level.
   */
  criteria: Array<[string, Description]>;
}

/** A request that passed `validateRequest`: question order is explicit. */
export interface ValidRequest {
  model: string;
  state: JsonValue;
  questions: ValidQuestion[];
}

export interface NoulAnswer {
  type: 'noul';
  noul: number;
}
export interface ChoiceAnswer {
  type: 'choice';
  choice: string;
  confidence: number;
  probabilities: Record<string, number>;
}
export interface ScoreAnswer {
  type: 'score';
  score: number;
  confidence: number;
  legend: Record<string, Description>;
  probabilities: Record<string, number>;
}
export type Answer = NoulAnswer | ChoiceAnswer | ScoreAnswer;

export interface Usage {
  input_tokens: number;
  output_tokens: 0;
  /** Present only when the engine was told to truncate and did: tokens cut from the state. */
  truncated_state_tokens?: number;
}

export interface SystemOneResponse {
  model: string;
  answers: Record<string, Answer>;
  usage: Usage;
}

/** One entry of a 422 body. */
export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}
export type ApiErrorType =
  'api_usage_error' | 'max_tokens_exceeded' | 'overloaded' | 'internal_error';
export type ErrorBody =
  { detail: ValidationIssue[] } | { detail: { error_type: ApiErrorType; message: string } };

/** Per-model limits; the defaults are Clef-flash's. */
export interface ModelLimits {
  contextTokens: number;
  maxQuestions: number;
  minChoiceOptions: number;
  maxChoiceOptions: number;
  minScoreLevels: number;
  maxScoreLevels: number;
}

export const CLEF_FLASH_LIMITS: Readonly<ModelLimits> = Object.freeze({
  contextTokens: 65_536,
  maxQuestions: 64,
  minChoiceOptions: 2,
  maxChoiceOptions: 255,
  minScoreLevels: 2,
  maxScoreLevels: 10,
});

export interface ModelCard {
  name: string;
  description: string;
  /** YYYY-MM-DD */
  release_date: string;
}
