/**
 * A training file's bytes as text, the same way on every surface (`clef-web train`, the
 * library, the playground's Train panel): UTF-8 with or without a byte-order mark, UTF-16 (LE or
 * BE) with one. Anything else is refused before any work, naming the first bad line and its
 * byte offset; a Latin-1 file is never read with U+FFFD in place of its accented letters.
 * Runtime-neutral (no Node API): the train worker runs it on the page's bytes.
 */
import { TrainError } from './errors.js';

/** How a file was read (said in the check phase's message). */
export type TextEncodingName = 'utf-8' | 'utf-8 (BOM)' | 'utf-16le (BOM)' | 'utf-16be (BOM)';

export interface DecodedText {
  text: string;
  encoding: TextEncodingName;
}

/** 1-based line of the byte at `offset` (lines end at 0x0A, as in UTF-8 and Latin-1). */
function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}

const hex = (b: number): string => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`;

/** Where the first byte that is not well-formed UTF-8 is, or -1 (RFC 3629: no surrogates, ≤ U+10FFFF, shortest form). */
export function firstInvalidUtf8(bytes: Uint8Array, from = 0): number {
  const n = bytes.length;
  let i = from;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined) return i;
      const [min, max] = k === 1 ? [lo, hi] : [0x80, 0xbf];
      if (c < min || c > max) return i;
    }
    i += need + 1;
  }
  return -1;
}

function refuse(file: string, message: string, details: Record<string, unknown>): never {
  throw new TrainError('examples_encoding', `${file}: ${message}`, { file, ...details });
}

/** UTF-16 code units after the BOM, or a refusal at the first unpaired surrogate. */
function decodeUtf16(bytes: Uint8Array, littleEndian: boolean, file: string): string {
  if ((bytes.length - 2) % 2 !== 0) {
    refuse(
      file,
      `the file starts with a UTF-16 byte-order mark but has an odd number of bytes (${bytes.length}): it is cut short or not UTF-16`,
      { offset: bytes.length - 1 },
    );
  }
  const units = new Uint16Array((bytes.length - 2) / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let k = 0; k < units.length; k++) units[k] = view.getUint16(2 + 2 * k, littleEndian);
  let line = 1;
  for (let k = 0; k < units.length; k++) {
    const u = units[k] as number;
    if (u === 0x0a) line++;
    const high = u >= 0xd800 && u <= 0xdbff;
    const low = u >= 0xdc00 && u <= 0xdfff;
    const next = units[k + 1] ?? 0;
    if (high && next >= 0xdc00 && next <= 0xdfff) {
      k++;
      continue;
    }
    if (high || low) {
      refuse(
        file,
        `line ${line}, byte offset ${2 + 2 * k}: an unpaired UTF-16 surrogate (0x${u.toString(16).toUpperCase()}): the file is not valid UTF-16; save it as UTF-8`,
        { line, offset: 2 + 2 * k },
      );
    }
    if (u === 0) {
      refuse(
        file,
        `line ${line}, byte offset ${2 + 2 * k}: a NUL character: a text file has none; save it as UTF-8`,
        { line, offset: 2 + 2 * k },
      );
    }
  }
  let text = '';
  for (let k = 0; k < units.length; k += 8192) {
    text += String.fromCharCode(...units.subarray(k, k + 8192));
  }
  return text;
}

/**
 * Decodes a training file. `file` names it in messages (the path as given, or the picked
 * file's name). Throws TrainError `examples_encoding` with the first bad line and byte offset.
 */
export function decodeTrainingText(bytes: Uint8Array, file: string): DecodedText {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { text: decodeUtf16(bytes, true, file), encoding: 'utf-16le (BOM)' };
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    return { text: decodeUtf16(bytes, false, file), encoding: 'utf-16be (BOM)' };
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const start = bom ? 3 : 0;
  const bad = firstInvalidUtf8(bytes, start);
  if (bad >= 0) {
    const line = lineAt(bytes, bad);
    const b = bytes[bad] as number;
    // A lone byte 0xA0-0xFF is a letter in Latin-1 / Windows-1252: say which one it would be.
    const latin1 =
      b >= 0xa0
        ? ` (in Latin-1 it would be "${String.fromCharCode(b)}": the file looks Latin-1 or Windows-1252)`
        : '';
    refuse(
      file,
      `line ${line}, byte offset ${bad}: byte ${hex(b)} is not UTF-8${latin1}. Save the file as UTF-8 (or UTF-16 with a byte-order mark) and try again`,
      { line, offset: bad },
    );
  }
  const nul = bytes.indexOf(0, start);
  if (nul >= 0) {
    const line = lineAt(bytes, nul);
    refuse(
      file,
      `line ${line}, byte offset ${nul}: a NUL byte: a text file has none (a UTF-16 file needs its byte-order mark). Save the file as UTF-8 and try again`,
      { line, offset: nul },
    );
  }
  const text = new TextDecoder('utf-8').decode(bytes.subarray(start));
  return { text, encoding: bom ? 'utf-8 (BOM)' : 'utf-8' };
}

/** A string input as is, or bytes decoded (the library takes either). */
export function trainingText(input: string | Uint8Array, file: string): string {
  return typeof input === 'string'
    ? input.replace(/^\uFEFF/, '')
    : decodeTrainingText(input, file).text;
}
