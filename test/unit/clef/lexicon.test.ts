// The lm_head rows file: format (src/clef/lexicon.ts), the streaming writer
// (src/build/convert/lexicon.ts) on the tiny fixture, and the error bounds of its encodings.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeLexiconRow,
  encodeLexiconHeader,
  encodeLexiconRow,
  float16BitsToFloat32,
  float32ToFloat16Bits,
  Lexicon,
  LEXICON_HEADER_BYTES,
  parseLexiconHeader,
  RangeLexicon,
} from '../../../src/clef/lexicon.js';
import { buildLexicon } from '../../../src/build/convert/lexicon.js';
import { writeTinyFixture } from '../../../tools/fixture/cli.js';
import { Rng } from '../../../tools/fixture/weights.js';
import { SafetensorsFile } from '../../../src/build/safetensors.js';

describe('fp16 conversion', () => {
  it('round-trips every finite half and rounds to nearest even', () => {
    const broken: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      if ((bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0) continue; // NaN
      if (float32ToFloat16Bits(float16BitsToFloat32(bits)) !== bits) broken.push(bits);
    }
    expect(broken).toEqual([]);
    const cases: Array<[number, number]> = [
      [1, 0x3c00],
      [-2, 0xc000],
      [65504, 0x7bff],
      [65519, 0x7bff],
      [65520, 0x7c00], // halfway to the next binade rounds up to inf
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000], // tie → even (0)
      [1.5 * 2 ** -24, 0x0002], // tie → even (2)
      [1 + 2 ** -11, 0x3c00], // tie → even
      [1 + 3 * 2 ** -11, 0x3c02], // tie → even (up)
      [2 ** -14 - 2 ** -25, 0x0400], // largest subnormal + half ulp rounds into the normals
    ];
    for (const [value, bits] of cases) expect(float32ToFloat16Bits(value)).toBe(bits);
    expect(float16BitsToFloat32(0x3555)).toBeCloseTo(0.333251953125, 12);
  });
});

describe('row records', () => {
  it('int8: every element within scale/2, scale = max|row|/127', () => {
    const rng = new Rng(5);
    const header = parseLexiconHeader(encodeLexiconHeader('int8', 1, 37));
    const rows = [
      Float32Array.from({ length: 37 }, () => rng.normal() * 3),
      Float32Array.from({ length: 37 }, (_, i) => (i === 4 ? -50 : rng.normal() * 1e-3)),
      new Float32Array(37),
    ];
    for (const row of rows) {
      const record = encodeLexiconRow('int8', row);
      expect(record.length).toBe(header.rowStride);
      const scale = new DataView(record.buffer).getFloat32(0, true);
      const max = row.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      expect(scale).toBeCloseTo(max / 127, 6);
      const decoded = decodeLexiconRow(header, record);
      row.forEach((v, i) =>
        expect(Math.abs(v - decoded[i]!)).toBeLessThanOrEqual(scale / 2 + 1e-12),
      );
      if (max > 0) expect(Math.max(...decoded.map(Math.abs))).toBeCloseTo(max, 5);
    }
  });

  it('fp16: every element within half an fp16 ulp', () => {
    const rng = new Rng(6);
    const header = parseLexiconHeader(encodeLexiconHeader('fp16', 1, 10));
    const row = Float32Array.from({ length: 10 }, () => rng.normal() * 4);
    const decoded = decodeLexiconRow(header, encodeLexiconRow('fp16', row));
    row.forEach((v, i) =>
      expect(Math.abs(v - decoded[i]!)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11 + 2 ** -25),
    );
  });

  it('the header names the layout and refuses anything else', () => {
    const bytes = encodeLexiconHeader('int8', 1000, 65);
    expect(parseLexiconHeader(bytes)).toEqual({
      version: 1,
      vocab: 1000,
      hidden: 65,
      dtype: 'int8',
      rowStride: 72, // 4-byte scale + 65 values, padded to a multiple of 4
      rowsOffset: 64,
    });
    expect(parseLexiconHeader(encodeLexiconHeader('fp16', 3, 5)).rowStride).toBe(12);
    const badMagic = bytes.slice();
    badMagic[0] = 0x58;
    expect(() => parseLexiconHeader(badMagic)).toThrow(/magic/);
    const badVersion = bytes.slice();
    new DataView(badVersion.buffer).setUint32(8, 2, true);
    expect(() => parseLexiconHeader(badVersion)).toThrow(/version/);
    const badDtype = bytes.slice();
    new DataView(badDtype.buffer).setUint32(24, 9, true);
    expect(() => parseLexiconHeader(badDtype)).toThrow(/dtype/);
    expect(() => parseLexiconHeader(bytes.subarray(0, 40))).toThrow(/64 bytes/);
    expect(() => new Lexicon(bytes)).toThrow(/truncated/);
  });
});

describe('lm_head rows file from the tiny fixture', () => {
  let dir: string;
  let original: Float32Array;
  let vocab: number;
  let hidden: number;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'clef-lex-'));
    writeTinyFixture(dir, { dtype: 'bf16', seed: 2 });
    const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
    const file = SafetensorsFile.open(join(dir, index.weight_map['lm_head.weight']));
    [vocab, hidden] = file.info('lm_head.weight').shape as [number, number];
    original = file.read('lm_head.weight');
    file.close();
  }, 60_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('int8: header, size, and every row within scale/2 of lm_head.weight', () => {
    const path = join(dir, 'rows-int8.bin');
    // An uneven block size: blocks must join seamlessly.
    const written = buildLexicon(dir, path, { dtype: 'int8', rowsPerBlock: 37 });
    expect(written).toMatchObject({ vocab, hidden, dtype: 'int8', tensor: 'lm_head.weight' });
    const bytes = readFileSync(path);
    const lexicon = new Lexicon(bytes);
    const { rowStride } = lexicon.header;
    expect(lexicon.header).toMatchObject({ vocab, hidden, dtype: 'int8' });
    expect(statSync(path).size).toBe(LEXICON_HEADER_BYTES + vocab * rowStride);
    let worstRelative = 0;
    let violations = 0;
    for (let id = 0; id < vocab; id++) {
      const row = original.subarray(id * hidden, (id + 1) * hidden);
      const max = row.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      // The scale as stored (fp32) at the start of the row's record.
      const scale = bytes.readFloatLE(LEXICON_HEADER_BYTES + id * rowStride);
      expect(Math.abs(scale - max / 127)).toBeLessThanOrEqual((max / 127) * 2 ** -23);
      const decoded = lexicon.row(id);
      row.forEach((v, i) => {
        const error = Math.abs(v - decoded[i]!);
        // scale/2 from rounding q, plus the fp32 rounding of q × scale when decoding.
        if (error > scale / 2 + Math.abs(v) * 2 ** -24) violations++;
        worstRelative = Math.max(worstRelative, error / scale);
      });
    }
    expect(violations).toBe(0);
    console.log(`int8 rows: worst element error ${worstRelative.toFixed(4)} × scale`);
    expect(() => lexicon.row(vocab)).toThrow(RangeError);
  });

  it('fp16: every row within half an fp16 ulp', () => {
    const path = join(dir, 'rows-fp16.bin');
    buildLexicon(dir, path, { dtype: 'fp16', rowsPerBlock: 500 });
    const lexicon = new Lexicon(readFileSync(path));
    expect(lexicon.header.dtype).toBe('fp16');
    for (let id = 0; id < vocab; id += 7) {
      const decoded = lexicon.row(id);
      for (let i = 0; i < hidden; i++) {
        const v = original[id * hidden + i]!;
        expect(Math.abs(v - decoded[i]!)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11 + 2 ** -25);
      }
    }
  });

  it('spanMean is the mean of the rows; a range reader gives the same rows', async () => {
    const path = join(dir, 'rows-int8-b.bin');
    buildLexicon(dir, path, { dtype: 'int8' });
    const bytes = new Uint8Array(readFileSync(path));
    const lexicon = new Lexicon(bytes);
    const reads: Array<[number, number]> = [];
    const ranged = await RangeLexicon.open(async (start, end) => {
      reads.push([start, end]);
      return bytes.slice(start, end);
    });
    const ids = [3, 17, 3, vocab - 1];
    const mean = lexicon.spanMean(ids);
    for (let i = 0; i < hidden; i++) {
      const expected = ids.reduce((s, id) => s + lexicon.row(id)[i]!, 0) / ids.length;
      expect(mean[i]).toBeCloseTo(expected, 6);
    }
    expect(Array.from(await ranged.spanMean(ids))).toEqual(Array.from(mean));
    // Header, then one read per distinct row.
    expect(reads.length).toBe(1 + 3);
    expect(reads[0]).toEqual([0, LEXICON_HEADER_BYTES]);
  });
});
