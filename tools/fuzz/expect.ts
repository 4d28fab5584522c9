/**
 * What a fuzz case must get back, written from system-one.md ("Errors", "Request body",
 * "Response body") and the 422 issue vocabulary of src/protocol/validate-types.ts, never from
 * running the code under test.
 */
import type { ExpectedAnswer } from './valid.js';

export interface ExpectedIssue {
  loc: Array<string | number>;
  type: string;
  /** Checked when given (pydantic's wording for the fixed-text issues). */
  msg?: string;
}

export type Expectation =
  | {
      status: 200;
      model: string;
      answers: ExpectedAnswer[];
      /**
       * Small enough for a 1,024-token context: must be answered. Otherwise a model with a small
       * context may instead refuse it with 400 max_tokens_exceeded (never truncate it).
       */
      small: boolean;
    }
  | {
      status: 400;
      errorType: 'api_usage_error';
      /** not-json: parse failure; not-object: JSON but not an object; unknown-model. */
      reason: 'not-json' | 'not-object' | 'unknown-model';
      /** The exact message when the contract fixes it (`Unknown model: <name>`). */
      message?: string;
    }
  | { status: 422; issues: ExpectedIssue[] };

export interface FuzzCase {
  /** What was generated, for summaries: `wrong-type:state`, `non-json:truncated`, ... */
  kind: string;
  body: string | Uint8Array;
  expect: Expectation;
}

const FIXED_MSG: Record<string, string> = {
  missing: 'Field required',
  extra_forbidden: 'Extra inputs are not permitted',
  string_type: 'Input should be a valid string',
  dict_type: 'Input should be a valid dictionary',
  list_type: 'Input should be a valid list',
  literal_error: "Input should be 'noul', 'choice' or 'score'",
  string_too_short: 'String should have at least 1 character',
  string_too_long: 'String should have at most 100 characters',
  string_pattern_mismatch: "String should match pattern '^[A-Za-z0-9_.-]+$'",
  state_type: 'Input should be a valid string, dictionary or list',
  description_type: 'Input should be a valid string, dictionary, list or null',
};

/** An expected issue, with pydantic's fixed message for its type when it has one. */
export function issueAt(loc: Array<string | number>, type: string): ExpectedIssue {
  const msg = FIXED_MSG[type];
  return msg === undefined ? { loc, type } : { loc, type, msg };
}

/** A count issue (`too_short` / `too_long`) with pydantic's message. */
export function countIssue(
  loc: Array<string | number>,
  container: 'Dictionary' | 'List',
  bound: number,
  actual: number,
): ExpectedIssue {
  const long = actual > bound;
  const items = `${bound} item${bound === 1 ? '' : 's'}`;
  return {
    loc,
    type: long ? 'too_long' : 'too_short',
    msg: `${container} should have at ${long ? 'most' : 'least'} ${items} after validation, not ${actual}`,
  };
}
