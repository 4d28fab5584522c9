/**
 * The `lm_head` rows file: the backbone's untied output embedding, one row per token id, which
 * the joint head's lexical prior needs (clef-recipe.md §3 step 4: `lex` = mean of the rows at an
 * option span's token ids). The LM head itself is never run, so only random rows are read:
 * the file is laid out so that row `id` is one contiguous byte range found by arithmetic
 * (one `Blob.slice` or HTTP Range request per row; no index).
 *
 * Layout (all numbers little-endian):
 *
 *   offset  size  field
 *   0       8     magic, ASCII "CLEFROWS"
 *   8       4     u32 format version (1)
 *   12      4     u32 header bytes = offset of row 0 (64)
 *   16      4     u32 vocab: number of rows
 *   20      4     u32 hidden: values per row
 *   24      4     u32 dtype: 1 = int8 rows with one fp32 scale, 2 = fp16 rows
 *   28      4     u32 row stride in bytes (a multiple of 4)
 *   32      32    reserved, zero
 *   64      ...   vocab row records, record `id` at 64 + id * stride
 *
 * int8 record: fp32 scale, then `hidden` int8 values q; value = q * scale, where
 * scale = max|row| / 127 (rounded to fp32) and q = round(x / scale): error at most scale / 2.
 * fp16 record: `hidden` IEEE half floats. Records are zero-padded up to the stride.
 *
 * Pure TypeScript (no fs, no onnxruntime): the converter writes with the encoders below and the
 * engine reads with the decoders.
 */

const LEXICON_MAGIC = 'CLEFROWS';
const LEXICON_VERSION = 1;
export const LEXICON_HEADER_BYTES = 64;

/** int8 rows with a scale (shipping default), fp16, or fp32 (exact: the fp32 test variant). */
export type LexiconDtype = 'int8' | 'fp16' | 'fp32';
const DTYPE_CODES: Record<LexiconDtype, number> = { int8: 1, fp16: 2, fp32: 3 };

export interface LexiconHeader {
  version: number;
  vocab: number;
  hidden: number;
  dtype: LexiconDtype;
  /** Bytes per row record. */
  rowStride: number;
  /** Byte offset of row 0. */
  rowsOffset: number;
}

/** Bytes per row record: the payload rounded up to a multiple of 4. */
export function lexiconRowStride(dtype: LexiconDtype, hidden: number): number {
  const payload = dtype === 'int8' ? 4 + hidden : dtype === 'fp16' ? 2 * hidden : 4 * hidden;
  return Math.ceil(payload / 4) * 4;
}

/** Total file size for a vocab × hidden table. */
export function lexiconFileBytes(dtype: LexiconDtype, vocab: number, hidden: number): number {
  return LEXICON_HEADER_BYTES + vocab * lexiconRowStride(dtype, hidden);
}

function asBytes(data: ArrayBuffer | ArrayBufferView): Uint8Array {
  return data instanceof Uint8Array
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);
}

export function encodeLexiconHeader(
  dtype: LexiconDtype,
  vocab: number,
  hidden: number,
): Uint8Array {
  const bytes = new Uint8Array(LEXICON_HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < LEXICON_MAGIC.length; i++) bytes[i] = LEXICON_MAGIC.charCodeAt(i);
  view.setUint32(8, LEXICON_VERSION, true);
  view.setUint32(12, LEXICON_HEADER_BYTES, true);
  view.setUint32(16, vocab, true);
  view.setUint32(20, hidden, true);
  view.setUint32(24, DTYPE_CODES[dtype], true);
  view.setUint32(28, lexiconRowStride(dtype, hidden), true);
  return bytes;
}

/** Reads the header from the file's first bytes (at least 64). Throws on anything unexpected. */
export function parseLexiconHeader(data: ArrayBuffer | ArrayBufferView): LexiconHeader {
  const bytes = asBytes(data);
  if (bytes.byteLength < LEXICON_HEADER_BYTES) {
    throw new Error(`lm_head rows file: header needs ${LEXICON_HEADER_BYTES} bytes`);
  }
  const magic = String.fromCharCode(...bytes.subarray(0, LEXICON_MAGIC.length));
  if (magic !== LEXICON_MAGIC) throw new Error('lm_head rows file: bad magic');
  const view = new DataView(bytes.buffer, bytes.byteOffset, LEXICON_HEADER_BYTES);
  const version = view.getUint32(8, true);
  if (version !== LEXICON_VERSION) {
    throw new Error(`lm_head rows file: unsupported version ${version}`);
  }
  const rowsOffset = view.getUint32(12, true);
  const vocab = view.getUint32(16, true);
  const hidden = view.getUint32(20, true);
  const code = view.getUint32(24, true);
  const dtype = (Object.keys(DTYPE_CODES) as LexiconDtype[]).find((d) => DTYPE_CODES[d] === code);
  if (dtype === undefined) throw new Error(`lm_head rows file: unknown dtype code ${code}`);
  const rowStride = view.getUint32(28, true);
  if (rowStride !== lexiconRowStride(dtype, hidden) || rowsOffset < LEXICON_HEADER_BYTES) {
    throw new Error('lm_head rows file: inconsistent header');
  }
  return { version, vocab, hidden, dtype, rowStride, rowsOffset };
}

/** Byte range [start, end) of token `id`'s record. */
function lexiconRowRange(header: LexiconHeader, id: number): [number, number] {
  if (!Number.isInteger(id) || id < 0 || id >= header.vocab) {
    throw new RangeError(`token id ${id} outside the lm_head rows (vocab ${header.vocab})`);
  }
  const start = header.rowsOffset + id * header.rowStride;
  return [start, start + header.rowStride];
}

// --- IEEE half floats -----------------------------------------------------------------------

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → fp16 bits, round to nearest even (as numpy / torch `.half()`). */
export function float32ToFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0); // inf / nan
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow → inf
  if (e <= 0) {
    // Subnormal half (or zero): shift the full mantissa, rounding to nearest even.
    if (e < -10) return sign;
    const full = mant | 0x800000;
    const shift = 14 - e;
    const half = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    const round = rest > midpoint || (rest === midpoint && (half & 1) === 1) ? 1 : 0;
    return sign | (half + round);
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  const round = rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1) ? 1 : 0;
  return sign | (half + round); // a carry into the exponent is the correct rounding
}

export function float16BitsToFloat32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// --- Row records ------------------------------------------------------------------------------

/** One row as a record of `lexiconRowStride(dtype, row.length)` bytes. */
export function encodeLexiconRow(dtype: LexiconDtype, row: ArrayLike<number>): Uint8Array {
  const record = new Uint8Array(lexiconRowStride(dtype, row.length));
  const view = new DataView(record.buffer);
  if (dtype === 'fp16') {
    for (let i = 0; i < row.length; i++) {
      view.setUint16(2 * i, float32ToFloat16Bits(row[i] as number), true);
    }
    return record;
  }
  if (dtype === 'fp32') {
    for (let i = 0; i < row.length; i++) view.setFloat32(4 * i, row[i] as number, true);
    return record;
  }
  let max = 0;
  for (let i = 0; i < row.length; i++) max = Math.max(max, Math.abs(row[i] as number));
  // The scale is stored as fp32: quantize against the stored value so that the decoded error
  // is bounded by (stored scale) / 2.
  const scale = Math.fround(max / 127);
  view.setFloat32(0, scale, true);
  if (scale === 0) return record;
  for (let i = 0; i < row.length; i++) {
    const q = Math.max(-127, Math.min(127, Math.round((row[i] as number) / scale)));
    view.setInt8(4 + i, q);
  }
  return record;
}

/** Decodes one record into `out` (a new Float32Array of `hidden` values by default). */
export function decodeLexiconRow(
  header: LexiconHeader,
  record: ArrayBuffer | ArrayBufferView,
  out: Float32Array = new Float32Array(header.hidden),
): Float32Array {
  const bytes = asBytes(record);
  if (bytes.byteLength < header.rowStride) throw new Error('lm_head rows file: short record');
  const view = new DataView(bytes.buffer, bytes.byteOffset, header.rowStride);
  if (header.dtype === 'fp16') {
    for (let i = 0; i < header.hidden; i++) {
      out[i] = float16BitsToFloat32(view.getUint16(2 * i, true));
    }
    return out;
  }
  if (header.dtype === 'fp32') {
    for (let i = 0; i < header.hidden; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  const scale = view.getFloat32(0, true);
  for (let i = 0; i < header.hidden; i++) out[i] = view.getInt8(4 + i) * scale;
  return out;
}

function meanOfRows(hidden: number, rows: Float32Array[]): Float32Array {
  if (rows.length === 0) throw new Error('span mean of no tokens');
  const sum = new Float64Array(hidden);
  for (const row of rows) for (let i = 0; i < hidden; i++) sum[i] += row[i] as number;
  const mean = new Float32Array(hidden);
  for (let i = 0; i < hidden; i++) mean[i] = (sum[i] as number) / rows.length;
  return mean;
}

/** The whole rows file in memory (tests, small models). */
export class Lexicon {
  readonly header: LexiconHeader;
  private readonly bytes: Uint8Array;

  constructor(file: ArrayBuffer | ArrayBufferView) {
    this.bytes = asBytes(file);
    this.header = parseLexiconHeader(this.bytes);
    const needed = lexiconFileBytes(this.header.dtype, this.header.vocab, this.header.hidden);
    if (this.bytes.byteLength < needed) throw new Error('lm_head rows file: truncated');
  }

  get hidden(): number {
    return this.header.hidden;
  }

  row(tokenId: number): Float32Array {
    const [start, end] = lexiconRowRange(this.header, tokenId);
    return decodeLexiconRow(this.header, this.bytes.subarray(start, end));
  }

  /** Mean of the rows at `ids` (accumulated in float64). */
  spanMean(ids: ArrayLike<number>): Float32Array {
    return meanOfRows(
      this.hidden,
      Array.from(ids, (id) => this.row(id)),
    );
  }
}

/** Reads bytes [start, end) of the rows file, e.g. `blob.slice(start, end).arrayBuffer()`. */
export type ByteRangeReader = (start: number, end: number) => Promise<ArrayBuffer | Uint8Array>;

/**
 * The rows file read row by row (a cached Blob, an OPFS file, HTTP Range requests): the real
 * model's table is about 1 GB at int8, which need not sit in memory for a few rows a request.
 */
export class RangeLexicon {
  private constructor(
    readonly header: LexiconHeader,
    private readonly read: ByteRangeReader,
  ) {}

  static async open(read: ByteRangeReader): Promise<RangeLexicon> {
    return new RangeLexicon(parseLexiconHeader(await read(0, LEXICON_HEADER_BYTES)), read);
  }

  get hidden(): number {
    return this.header.hidden;
  }

  async row(tokenId: number): Promise<Float32Array> {
    const [start, end] = lexiconRowRange(this.header, tokenId);
    return decodeLexiconRow(this.header, await this.read(start, end));
  }

  async spanMean(ids: ArrayLike<number>): Promise<Float32Array> {
    const unique = [...new Set(Array.from(ids))];
    const rows = new Map<number, Float32Array>();
    await Promise.all(unique.map(async (id) => rows.set(id, await this.row(id))));
    return meanOfRows(
      this.hidden,
      Array.from(ids, (id) => rows.get(id) as Float32Array),
    );
  }
}
