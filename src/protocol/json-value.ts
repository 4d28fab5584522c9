/**
 * Helpers over `JsonValue`: objects arrive either as plain JS objects (page scripts) or as
 * `Map`s (bodies parsed losslessly from text), numbers as JS numbers or `PyNumber`s.
 */
import type { JsonMap, JsonValue, PyNumber } from './types.js';

export function isPyNumber(v: unknown): v is PyNumber {
  return typeof v === 'object' && v !== null && (v as PyNumber).kind === 'py-number';
}

/** A JSON object of either form (a Map or a plain, non-array object; not a PyNumber). */
export function isJsonObject(v: unknown): v is JsonMap | { [key: string]: JsonValue } {
  if (v instanceof Map) return true;
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isPyNumber(v);
}

/** Entries of a JSON object in its order: written order for a Map, JS order for an object. */
export function objectEntries(
  v: JsonMap | { [key: string]: JsonValue },
): Array<[string, JsonValue]> {
  return v instanceof Map ? [...v.entries()] : Object.entries(v);
}
