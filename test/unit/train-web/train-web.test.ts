// What the build tools run on in the playground's train worker, where there is no Node: SHA-256
// and POSIX paths (src/build/host) against Node's own on fresh random inputs, the in-memory
// files' semantics as the converter relies on them (src/train-web/memory-files.ts), and the
// Train panel's stored .zip read back. (The whole pipeline over them is test/browser/playground-train.spec.ts,
// which compares the page's converted files with the disk run's, byte for byte.)
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Sha256 } from '../../../src/build/host/sha256.js';
import * as path from '../../../src/build/host/posix-paths.js';
import * as fs from '../../../src/train-web/memory-files.js';
import { useFiles } from '../../../src/build/host/files.js';
import { sha256File } from '../../../src/build/convert/sha256-file.js';
import { crc32, zipStored } from '../../../src/playground/zip.js';
import { nameFromFile, SHOWN_LABELS, shownLabels } from '../../../src/playground/train-view.js';
import { folderName } from '../../../src/playground/trained-store.js';
import { Rng } from '../../../src/calibrate/prng.js';
import { testSeed } from '../../support/seed.js';

const seed = testSeed('train-web stand-ins');
const rng = new Rng(seed);
const msg = `seed ${seed}`;

function randomBytes(n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => rng.int(256));
}

describe('sha256 (host/sha256.ts, without Node) against node:crypto', () => {
  it('every length around the block and padding edges, and random pieces', () => {
    for (const n of [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 1000, 70_001]) {
      const bytes = randomBytes(n);
      expect(new Sha256().update(bytes).digest('hex'), `${msg} n=${n}`).toBe(
        createHash('sha256').update(bytes).digest('hex'),
      );
    }
    for (let trial = 0; trial < 20; trial++) {
      const bytes = randomBytes(rng.int(5000));
      const h = new Sha256();
      for (let at = 0; at < bytes.length;) {
        const step = 1 + rng.int(200);
        h.update(bytes.subarray(at, at + step));
        at += step;
      }
      expect(h.digest('hex'), msg).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    expect(new Sha256().update('héllo').digest('hex')).toBe(
      createHash('sha256').update('héllo').digest('hex'),
    );
  });
});

describe('paths (host/posix-paths.ts) against node:path.posix', () => {
  // Paths as the pipeline forms them: segments joined by single slashes, absolute or not (no
  // empty segments or trailing slashes, whose corner cases Node keeps and the pipeline never makes).
  const parts = ['a', 'b', '..', '.', 'c.json', 'dir'];
  const draw = () =>
    (rng.int(2) ? '/' : '') +
    Array.from({ length: 1 + rng.int(4) }, () => parts[rng.int(parts.length)] as string).join('/');
  it('join, resolve (cwd /), dirname, basename, relative', () => {
    for (let i = 0; i < 300; i++) {
      const a = draw();
      const b = draw();
      const m = `${msg} ${JSON.stringify([a, b])}`;
      expect(path.join(a, b), m).toBe(posix.join(a, b));
      expect(path.resolve(a, b), m).toBe(posix.resolve('/', a, b));
      if (a !== '') {
        expect(path.dirname(a), m).toBe(posix.dirname(a));
        expect(path.basename(a), m).toBe(posix.basename(a));
      }
      expect(path.relative(`/${a}`, `/${b}`), m).toBe(posix.relative(`/${a}`, `/${b}`));
    }
  });
});

describe('the in-memory files (memory-files.ts)', () => {
  it('writes through a descriptor, reads back at positions, renames and removes directories', () => {
    fs.clearFiles();
    fs.mkdirSync('/out/sub', { recursive: true });
    const fd = fs.openSync('/out/sub/big.bin', 'w');
    const bytes = randomBytes(200_000); // past the first buffer: it grows
    for (let at = 0; at < bytes.length; at += 7_001) {
      fs.writeSync(fd, bytes, at, Math.min(7_001, bytes.length - at));
    }
    fs.closeSync(fd);
    expect(fs.statSync('/out/sub/big.bin').size, msg).toBe(bytes.length);
    const r = fs.openSync('/out/sub/big.bin', 'r');
    const part = new Uint8Array(10);
    expect(fs.readSync(r, part, 0, 10, 123_456), msg).toBe(10);
    expect([...part], msg).toEqual([...bytes.subarray(123_456, 123_466)]);
    fs.closeSync(r);
    fs.writeFileSync('/out/a.json', '{"x":1}');
    expect(fs.readdirSync('/out')).toEqual(['a.json', 'sub']);
    expect(() => fs.writeFileSync('/missing/a', 'x')).toThrow(/ENOENT/);
    expect(() => fs.readFileSync('/out/none')).toThrow(/ENOENT/);

    fs.renameSync('/out', '/final');
    expect(fs.existsSync('/out')).toBe(false);
    expect(fs.readFileSync('/final/a.json', 'utf8')).toBe('{"x":1}');
    expect([...fs.filesUnder('/final').keys()]).toEqual(['a.json', 'sub/big.bin']);
    expect(fs.filesUnder('/final').get('sub/big.bin'), msg).toEqual(bytes);
    fs.rmSync('/final', { recursive: true, force: true });
    expect(fs.existsSync('/final/sub/big.bin')).toBe(false);
    expect(() => fs.rmSync('/final')).toThrow(/ENOENT/);
    fs.rmSync('/final', { force: true });
  });
});

describe('the build tools on files handed in (useFiles), as the train worker runs them', () => {
  it("read the in-memory files, not the disk, until Node's are asked for again", () => {
    fs.clearFiles();
    const bytes = randomBytes(100_000);
    fs.mkdirSync('/handed-in', { recursive: true });
    fs.writeFileSync('/handed-in/w.bin', bytes);
    const want = createHash('sha256').update(bytes).digest('hex');
    expect(() => sha256File('/handed-in/w.bin')).toThrow(/ENOENT/);
    useFiles(fs.memoryFiles);
    try {
      expect(sha256File('/handed-in/w.bin'), msg).toBe(want);
    } finally {
      useFiles(undefined);
    }
    expect(existsSync('/handed-in')).toBe(false);
    expect(() => sha256File('/handed-in/w.bin')).toThrow(/ENOENT/);
  });
});

describe("the Train panel's .zip, names and label table", () => {
  it('crc32 of the standard check string, and entries that read back', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    const files: Array<[string, Uint8Array]> = [
      ['m/manifest.json', new TextEncoder().encode('{}')],
      ['m/w.bin', randomBytes(3000)],
    ];
    const zip = Buffer.from(zipStored(files));
    let at = 0;
    for (const [name, data] of files) {
      const m = `${msg} ${name}`;
      expect(zip.readUInt32LE(at), m).toBe(0x04034b50);
      const size = zip.readUInt32LE(at + 18);
      const n = zip.readUInt16LE(at + 26);
      expect(zip.subarray(at + 30, at + 30 + n).toString(), m).toBe(name);
      expect(zip.readUInt32LE(at + 14), m).toBe(crc32(data));
      expect(new Uint8Array(zip.subarray(at + 30 + n, at + 30 + n + size)), m).toEqual(data);
      at += 30 + n + size;
    }
    const end = zip.length - 22;
    expect(zip.readUInt32LE(end), msg).toBe(0x06054b50);
    expect(zip.readUInt16LE(end + 10), msg).toBe(2);
    expect(zip.readUInt32LE(end + 16), msg).toBe(at); // the central directory starts after them
  });

  it('names folders and archives safely after the model (no slashes, no leading dot)', () => {
    expect(folderName('support-router')).toBe('support-router');
    expect(folderName('@cf/acme/router v2')).toBe('_cf_acme_router_v2');
    expect(folderName('..')).toBe('_');
    expect(folderName('')).toBe('model');
  });

  it('summarises a long label table: the first rows, then how many more and their examples', () => {
    const labels = Array.from({ length: 5000 }, (_, i) => ({
      question: 'label',
      option: `l${i}`,
      count: 1 + (i % 3),
    }));
    const { rows, more } = shownLabels(labels);
    expect(rows).toEqual(labels.slice(0, SHOWN_LABELS));
    expect(more).toEqual({
      labels: 5000 - SHOWN_LABELS,
      examples: labels.slice(SHOWN_LABELS).reduce((n, l) => n + l.count, 0),
    });
    expect(shownLabels(labels.slice(0, 3)).more).toBeNull();
  });

  it("names a plain file's model after the file", () => {
    expect(nameFromFile('tickets.csv')).toBe('tickets');
    expect(nameFromFile('my tickets.v2.jsonl')).toBe('my_tickets.v2');
    expect(nameFromFile('.csv')).toBe('model');
  });
});
