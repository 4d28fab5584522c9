/**
 * Bodies that are not JSON (system-one.md: 400 api_usage_error), built by breaking a valid body
 * in ways that cannot leave it valid, and bodies that are not UTF-8 (RFC 8259 §8.1 requires
 * UTF-8 between systems, so such bytes are not JSON text either).
 */
import { MAX_JSON_DEPTH } from '../../src/protocol/json.js';
import type { Rng } from './prng.js';

/** Values that are not JSON values, to stand where `state`'s value goes. */
const NOT_VALUES = [
  'NaN',
  'Infinity',
  '-Infinity',
  'undefined',
  "'single'",
  '01',
  '1.',
  '.5',
  '+1',
  '1e',
  '1e+',
  '-',
  '0x10',
  '1_000',
  'True',
  'nul',
  '"\\x41"',
  '"\\u12"',
  '"\\U0041"',
  '"\\ud8"',
  '"tab\there"',
  '"line\nbreak"',
  '"nul\u0000char"',
  '"unterminated',
  '[1,]',
  '[1 2]',
  '{"a" 1}',
  '{"a":1,}',
  '{a:1}',
  '{"a":1',
];

/** Whole bodies that are not JSON. */
const NOT_BODIES = [
  '',
  ' ',
  '\r\n\t',
  'hello',
  'model=clef-tiny&state=x',
  '<request><model>clef-tiny</model></request>',
  '{}{}',
  '{} x',
  '/* comment */ {}',
  '{"model":"clef-tiny"} // trailing',
  "{'model':'clef-tiny'}",
  '\u0000',
  '\ufeff\ufeff{}',
  '{"model":"clef-tiny",}',
  ']',
  '}',
  '"',
];

export interface BrokenText {
  kind: string;
  text: string;
}

/** One way of making `valid` (a compact JSON object text) not JSON. */
export function breakText(rng: Rng, valid: string): BrokenText {
  const way = rng.int(0, 6);
  if (way === 0) return { kind: 'non-json:body', text: rng.pick(NOT_BODIES) };
  if (way === 1) {
    // Any proper prefix of an object text is incomplete: its closing brace is its last char.
    return { kind: 'non-json:truncated', text: valid.slice(0, rng.int(0, valid.length - 1)) };
  }
  if (way === 2) {
    const tail = rng.pick(['x', '}', ',', '{}', '[]', '"', '\u0000', 'null', ' 1']);
    return { kind: 'non-json:trailing', text: valid + tail };
  }
  if (way === 3) {
    const value = rng.pick(NOT_VALUES);
    return {
      kind: 'non-json:value',
      text: `{"model":"clef-tiny","state":${value},"questions":{}}`,
    };
  }
  if (way === 4) {
    // Past the documented nesting cap (src/protocol/json.ts MAX_JSON_DEPTH; system-one.md sets
    // none, Python's json.loads itself fails near 1,000): refused as not JSON, never a crash.
    const depth = rng.pick([MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 1000, 10_000, 100_000]);
    const inner = '['.repeat(depth) + ']'.repeat(depth);
    return { kind: 'non-json:too-deep', text: `{"model":"clef-tiny","state":${inner}}` };
  }
  if (way === 5) {
    // Unbalanced: more openers than closers can never be a complete value.
    const depth = rng.int(1, 50);
    return {
      kind: 'non-json:unbalanced',
      text: '{"state":' + '['.repeat(depth) + ']'.repeat(depth - 1),
    };
  }
  return { kind: 'non-json:trailing-comma', text: `${valid.slice(0, -1)},}` };
}

/** Byte sequences UTF-8 forbids. */
const BAD_UTF8: ReadonlyArray<readonly number[]> = [
  [0xff],
  [0xfe],
  [0x80], // a lone continuation byte
  [0xc0, 0x80], // overlong NUL
  [0xc1, 0xbf], // overlong
  [0xe0, 0x80, 0x80], // overlong
  [0xed, 0xa0, 0x80], // a UTF-16 surrogate (U+D800) encoded as UTF-8 (CESU)
  [0xed, 0xbf, 0xbf], // U+DFFF
  [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
  [0xf5, 0x80, 0x80, 0x80],
  [0xe2, 0x82], // truncated sequence
  [0xc3], // truncated at the end of the string
];

/**
 * A valid body's bytes with an invalid UTF-8 sequence placed inside its `state` string (or
 * anywhere, for a body with a non-string state).
 */
export function invalidUtf8(rng: Rng, valid: string): Uint8Array {
  const bytes = Buffer.from(valid, 'utf8');
  const marker = Buffer.from('"state":"', 'utf8');
  const at = bytes.indexOf(marker);
  const cut = at >= 0 ? at + marker.length : rng.int(1, bytes.length - 1);
  const bad = rng.pick(BAD_UTF8);
  return new Uint8Array(
    Buffer.concat([bytes.subarray(0, cut), Buffer.from(bad), bytes.subarray(cut)]),
  );
}
