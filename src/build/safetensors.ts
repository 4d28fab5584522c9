/**
 * Safetensors files, read lazily and written through host/'s files (Node's, or the train
 * worker's in memory).
 *
 * A safetensors file is: 8 bytes little-endian header length N, N bytes of JSON header
 * (`{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {str: str}}`), then the
 * tensor bytes, offsets relative to the end of the header. Tensors here are read one at a time
 * through a file handle (never the whole file in memory), so a converter can stream a 9B release.
 * Release directories, made of these files, are opened by release.ts.
 */
import { closeSync, openSync, readSync, writeSync } from './host/files.js';

/** Dtypes this module decodes to numbers. Others (F8, BOOL ...) can only be read raw. */
export type SafetensorsDType = 'BF16' | 'F16' | 'F32' | 'F64' | 'I8' | 'U8' | 'I16' | 'I32' | 'I64';
export type WritableDType = 'BF16' | 'F16' | 'F32';

// prettier-ignore
const DTYPE_BYTES: Record<string, number> = {
  BOOL: 1, U8: 1, I8: 1, F8_E4M3: 1, F8_E5M2: 1,
  BF16: 2, F16: 2, I16: 2, U16: 2,
  F32: 4, I32: 4, U32: 4,
  F64: 8, I64: 8, U64: 8,
};

/** Where one tensor lives: `begin`/`end` are absolute byte offsets in `file`. */
export interface TensorInfo {
  name: string;
  dtype: string;
  shape: number[];
  file: string;
  begin: number;
  end: number;
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** One safetensors file opened for random access. Call `close()` when done. */
export class SafetensorsFile {
  readonly path: string;
  /** `__metadata__` (string → string), empty when absent. */
  readonly metadata: Record<string, string>;
  private readonly fd: number;
  private readonly tensors = new Map<string, TensorInfo>();

  private constructor(path: string) {
    this.path = path;
    this.fd = openSync(path, 'r');
    const lengthBytes = new Uint8Array(8);
    readExactly(this.fd, lengthBytes, 0);
    const headerLength = Number(new DataView(lengthBytes.buffer).getBigUint64(0, true));
    const headerBytes = new Uint8Array(headerLength);
    readExactly(this.fd, headerBytes, 8);
    const header = JSON.parse(new TextDecoder().decode(headerBytes)) as Record<string, unknown>;
    const dataStart = 8 + headerLength;
    this.metadata = {};
    for (const [name, entry] of Object.entries(header)) {
      if (name === '__metadata__') {
        Object.assign(this.metadata, entry as Record<string, string>);
        continue;
      }
      const { dtype, shape, data_offsets } = entry as {
        dtype: string;
        shape: number[];
        data_offsets: [number, number];
      };
      // Sizes are checked for the dtypes this module knows; others pass through for readRaw.
      const width = DTYPE_BYTES[dtype];
      const expected =
        width === undefined ? data_offsets[1] - data_offsets[0] : elementCount(shape) * width;
      if (data_offsets[1] - data_offsets[0] !== expected) {
        throw new Error(
          `${path}: ${name} has ${data_offsets[1] - data_offsets[0]} bytes, expected ${expected}`,
        );
      }
      this.tensors.set(name, {
        name,
        dtype,
        shape,
        file: path,
        begin: dataStart + data_offsets[0],
        end: dataStart + data_offsets[1],
      });
    }
  }

  static open(path: string): SafetensorsFile {
    return new SafetensorsFile(path);
  }

  /** Tensor names in header order. */
  names(): string[] {
    return [...this.tensors.keys()];
  }

  has(name: string): boolean {
    return this.tensors.has(name);
  }

  info(name: string): TensorInfo {
    const info = this.tensors.get(name);
    if (info === undefined) throw new Error(`${this.path}: no tensor ${name}`);
    return info;
  }

  /** The tensor's bytes as stored (little-endian), in a fresh aligned buffer. */
  readRaw(name: string): Uint8Array {
    const { begin, end } = this.info(name);
    return this.readBytes(begin, end - begin);
  }

  /** Whole tensor as float32 (BF16/F16/F32 exactly; F64 and integers rounded to float32). */
  read(name: string): Float32Array {
    const info = this.info(name);
    return Float32Array.from(decode(info.dtype, this.readRaw(name)));
  }

  /** Whole tensor as float64 (every decodable dtype exactly, I64 beyond 2^53 rounded). */
  read64(name: string): Float64Array {
    const info = this.info(name);
    return Float64Array.from(decode(info.dtype, this.readRaw(name)));
  }

  /**
   * Rows [start, start + count) along the first dimension, as float32: the way to read a
   * 248,320-row embedding or a few lm_head rows without loading the rest.
   */
  readRows(name: string, start: number, count: number): Float32Array {
    const info = this.info(name);
    const rows = info.shape[0] ?? 1;
    if (start < 0 || count < 0 || start + count > rows) {
      throw new Error(`${name}: rows ${start}..${start + count} out of ${rows}`);
    }
    const rowBytes = (info.end - info.begin) / rows;
    const bytes = this.readBytes(info.begin + start * rowBytes, count * rowBytes);
    return Float32Array.from(decode(info.dtype, bytes));
  }

  close(): void {
    closeSync(this.fd);
  }

  private readBytes(position: number, length: number): Uint8Array {
    const buffer = new Uint8Array(length);
    readExactly(this.fd, buffer, position);
    return buffer;
  }
}

/** readSync in pieces of at most 1 GiB (one call cannot read 2 GiB or more). */
export function readExactly(
  fd: number,
  target: Uint8Array,
  position: number,
  what = 'safetensors file',
): void {
  const piece = 1 << 30;
  let done = 0;
  while (done < target.length) {
    const length = Math.min(piece, target.length - done);
    const n = readSync(fd, target, done, length, position + done);
    if (n === 0) throw new Error(`unexpected end of ${what}`);
    done += n;
  }
}

/** Little-endian bytes of `dtype` → numbers (a typed array view or a converted copy). */
function decode(dtype: string, bytes: Uint8Array): ArrayLike<number> {
  const buf = bytes.buffer;
  const off = bytes.byteOffset;
  const n = bytes.byteLength / (DTYPE_BYTES[dtype] ?? 1);
  switch (dtype) {
    case 'F32':
      return new Float32Array(buf, off, n);
    case 'F64':
      return new Float64Array(buf, off, n);
    case 'BF16': {
      // bf16 is the top half of a float32: shift it back up.
      const halves = new Uint16Array(buf, off, n);
      const words = new Uint32Array(n);
      for (let i = 0; i < n; i++) words[i] = (halves[i] as number) << 16;
      return new Float32Array(words.buffer);
    }
    case 'F16': {
      const halves = new Uint16Array(buf, off, n);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = f16BitsToNumber(halves[i] as number);
      return out;
    }
    case 'I8':
      return new Int8Array(buf, off, n);
    case 'U8':
    case 'BOOL':
      return new Uint8Array(buf, off, n);
    case 'I16':
      return new Int16Array(buf, off, n);
    case 'I32':
      return new Int32Array(buf, off, n);
    case 'I64':
      return Array.from(new BigInt64Array(buf, off, n), Number);
    default:
      throw new Error(`cannot decode dtype ${dtype} to numbers (read it with readRaw)`);
  }
}

/** IEEE binary16 bits → number. */
function f16BitsToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 bits of `x` (after rounding x to float32). */
function f32Bits(x: number): number {
  f32[0] = x;
  return u32[0] as number;
}

/** x (rounded to float32 first) → bf16 bits, round to nearest, ties to even; NaN stays NaN. */
export function toBf16Bits(x: number): number {
  const bits = f32Bits(x);
  if ((bits & 0x7fffffff) > 0x7f800000) return ((bits >>> 16) | 0x40) & 0xffff;
  const lsb = (bits >>> 16) & 1;
  return ((bits + 0x7fff + lsb) >>> 16) & 0xffff;
}

/** x (rounded to float32 first) → binary16 bits, round to nearest even, overflow to ±inf. */
export function toF16Bits(x: number): number {
  const bits = f32Bits(x);
  const sign = (bits >>> 16) & 0x8000;
  const exp32 = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp32 === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const exp = exp32 - 127 + 15;
  if (exp >= 0x1f) return sign | 0x7c00;
  if (exp <= 0) {
    // Subnormal half (or zero): shift the full significand right, then round.
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    const half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    const up = rest > halfway || (rest === halfway && (half & 1) === 1) ? 1 : 0;
    return sign | (half + up);
  }
  const rest = mant & 0x1fff;
  let out = (exp << 10) | (mant >>> 13);
  if (rest > 0x1000 || (rest === 0x1000 && (out & 1) === 1)) out += 1; // may carry into inf: right
  return sign | out;
}

export interface TensorToWrite {
  name: string;
  dtype: WritableDType;
  shape: number[];
  data: Float32Array;
}

/**
 * Writes a safetensors file, tensors in the given order, encoding each on its own (peak memory
 * is one tensor). BF16/F16 round to nearest even. The header is padded with spaces to a
 * multiple of 8 bytes, as the reference writer does, so data starts aligned.
 */
export function writeSafetensors(
  path: string,
  tensors: readonly TensorToWrite[],
  metadata?: Record<string, string>,
): void {
  const header: Record<string, unknown> = {};
  if (metadata !== undefined) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    if (t.data.length !== elementCount(t.shape)) {
      throw new Error(`${t.name}: ${t.data.length} values for shape [${t.shape.join(', ')}]`);
    }
    if (t.name in header) throw new Error(`duplicate tensor ${t.name}`);
    const bytes = t.data.length * (DTYPE_BYTES[t.dtype] as number);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  const jsonBytes = new TextEncoder().encode(json).length;
  json += ' '.repeat((8 - (jsonBytes % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const length = new Uint8Array(8);
  new DataView(length.buffer).setBigUint64(0, BigInt(headerBytes.length), true);

  const fd = openSync(path, 'w');
  try {
    writeSync(fd, length);
    writeSync(fd, headerBytes);
    for (const t of tensors) writeSync(fd, encode(t.dtype, t.data));
  } finally {
    closeSync(fd);
  }
}

function encode(dtype: WritableDType, data: Float32Array): Uint8Array {
  if (dtype === 'F32') return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const out = new Uint16Array(data.length);
  const convert = dtype === 'BF16' ? toBf16Bits : toF16Bits;
  for (let i = 0; i < data.length; i++) out[i] = convert(data[i] as number);
  return new Uint8Array(out.buffer);
}
