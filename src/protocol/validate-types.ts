/**
 * The `type` / `msg` strings of the 422 issues `validateRequest` emits, pydantic v2 style so
 * clients written against TypeSafe's hosted API read them as they read the host's own.
 *
 * | type                      | msg                                                                   | when |
 * |---------------------------|-----------------------------------------------------------------------|------|
 * | `missing`                 | `Field required`                                                      | a required field is absent |
 * | `extra_forbidden`         | `Extra inputs are not permitted`                                      | an unknown field (top level, question, noul criteria) |
 * | `string_type`             | `Input should be a valid string`                                      | `model` (or a Map key) not a string |
 * | `dict_type`               | `Input should be a valid dictionary`                                  | `questions`, a question, noul/choice `criteria` not an object |
 * | `list_type`               | `Input should be a valid list`                                        | score `criteria` not an array |
 * | `literal_error`           | `Input should be 'noul', 'choice' or 'score'`                         | question `type` outside the three |
 * | `too_short`               | `Dictionary should have at least N item(s) after validation, not K`   | too few questions / choice options |
 * | `too_long`                | `Dictionary should have at most N item(s) after validation, not K`    | too many questions / choice options |
 * | `too_short` / `too_long`  | `List should have at least / at most N item(s) after validation, not K` | score levels |
 * | `string_too_short`        | `String should have at least 1 character`                             | empty question id |
 * | `string_too_long`         | `String should have at most 100 characters`                           | question id over 100 characters |
 * | `string_pattern_mismatch` | `String should match pattern '^[A-Za-z0-9_.-]+$'`                    | question id with other characters |
 * | `state_type`              | `Input should be a valid string, dictionary or list`                  | `state` a number, boolean or null |
 * | `description_type`        | `Input should be a valid string, dictionary, list or null`            | `instructions` or a description a number or boolean |
 * | `json_invalid`            | `Value is not JSON: <what>` (NaN, Infinity, undefined, a function...) | a JS value `JSON.stringify` cannot write faithfully |
 *
 * Where this differs from what pydantic itself would print, on purpose:
 * - pydantic reports a union field (`state`, `instructions`, descriptions) as one issue per union
 *   member (`string_type`, `dict_type`, `list_type` at `[..., "str"]`, ...); we report one issue
 *   at the field itself (`state_type` / `description_type`), which is what a user can act on.
 * - locs carry no union tags (pydantic writes `["questions","q1","noul","criteria"]`) and a bad
 *   question id is reported at `["body","questions",id]`, not `[..., id, "[key]"]`.
 * - `json_invalid` cannot happen with a JSON body; it covers JS values handed over by a page.
 */
import type { ValidationIssue } from './types.js';

export type IssueLoc = Array<string | number>;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The pattern a question id must match, exactly as the 422 message quotes it. */
export const QUESTION_ID_PATTERN = /^[A-Za-z0-9_.-]+$/;
export const QUESTION_ID_PATTERN_TEXT = '^[A-Za-z0-9_.-]+$';
export const QUESTION_ID_MAX_LENGTH = 100;

/** Builders for each issue kind; keys always in the order loc, msg, type. */
export const issue = {
  missing: (loc: IssueLoc): ValidationIssue => ({ loc, msg: 'Field required', type: 'missing' }),
  extraForbidden: (loc: IssueLoc): ValidationIssue => ({
    loc,
    msg: 'Extra inputs are not permitted',
    type: 'extra_forbidden',
  }),
  stringType: (loc: IssueLoc): ValidationIssue => ({
    loc,
    msg: 'Input should be a valid string',
    type: 'string_type',
  }),
  dictType: (loc: IssueLoc): ValidationIssue => ({
    loc,
    msg: 'Input should be a valid dictionary',
    type: 'dict_type',
  }),
  listType: (loc: IssueLoc): ValidationIssue => ({
    loc,
    msg: 'Input should be a valid list',
    type: 'list_type',
  }),
  questionType: (loc: IssueLoc): ValidationIssue => ({
    loc,
    msg: "Input should be 'noul', 'choice' or 'score'",
    type: 'literal_error',
  }),
  tooShort: (
    loc: IssueLoc,
    container: 'Dictionary' | 'List',
    min: number,
    actual: number,
  ): ValidationIssue => ({
    loc,
    msg: `${container} should have at least ${plural(min, 'item')} after validation, not ${actual}`,
    type: 'too_short',
  }),
  tooLong: (
    loc: IssueLoc,
    container: 'Dictionary' | 'List',
    max: number,
    actual: number,
  ): ValidationIssue => ({
    loc,
    msg: `${container} should have at most ${plural(max, 'item')} after validation, not ${actual}`,
    type: 'too_long',
  }),
  stringTooShort: (loc: IssueLoc, min: number): ValidationIssue => ({
    loc,
    msg: `String should have at least ${plural(min, 'character')}`,
    type: 'string_too_short',
  }),
  stringTooLong: (loc: IssueLoc, max: number): ValidationIssue => ({
    loc,
    msg: `String should have at most ${plural(max, 'character')}`,
    type: 'string_too_long',
  }),
  patternMismatch: (loc: IssueLoc, pattern: string): ValidationIssue => ({
    loc,
    msg: `String should match pattern '${pattern}'`,
    type: 'string_pattern_mismatch',
  }),
  stateType: (loc: IssueLoc): ValidationIssue => ({
    loc,
    msg: 'Input should be a valid string, dictionary or list',
    type: 'state_type',
  }),
  descriptionType: (loc: IssueLoc): ValidationIssue => ({
    loc,
    msg: 'Input should be a valid string, dictionary, list or null',
    type: 'description_type',
  }),
  notJson: (loc: IssueLoc, what: string): ValidationIssue => ({
    loc,
    msg: `Value is not JSON: ${what}`,
    type: 'json_invalid',
  }),
};
