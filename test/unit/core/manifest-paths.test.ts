// Package paths in the browser: a manifest's file path becomes a URL relative to the package
// directory (`new URL(path, packageUrl)`), so whatever `isSafePackagePath` accepts must resolve
// inside that directory. Checked on hostile examples and on random strings over an alphabet of
// URL-significant characters (seeded, so a failure reproduces).
import { describe, expect, it } from 'vitest';
import { isSafePackagePath } from '../../../src/core/manifest.js';

const BASE = 'https://example.test/models/pkg/';

function insideBase(path: string): boolean {
  const url = new URL(path, BASE);
  return url.origin === 'https://example.test' && url.href.startsWith(BASE) && !url.search;
}

describe('isSafePackagePath', () => {
  it('accepts the names the converter writes', () => {
    for (const p of [
      'backbone.onnx',
      'backbone.onnx.data',
      'backbone.onnx.data.1',
      'lm_head_rows.bin',
      'tokenizer_config.json',
      'weights/part-00001.bin',
    ]) {
      expect(isSafePackagePath(p), p).toBe(true);
      expect(insideBase(p), p).toBe(true);
    }
  });

  it('refuses paths that leave the directory once read as a URL', () => {
    for (const p of [
      '../x',
      'a/../../x',
      '/etc/passwd',
      '%2e%2e/x',
      '%2E%2E/x',
      '.%2e/x',
      'a%2f..%2f..%2fx',
      '..\\x',
      'a\\..\\..\\x',
      'https://evil.example/x',
      '//evil.example/x',
      'x?y=../../z',
      'x#frag',
      'a//b',
      '',
      '.',
      'a/./b',
      'x'.repeat(513),
    ]) {
      expect(isSafePackagePath(p), p).toBe(false);
    }
  });

  it('whatever it accepts among 20,000 random paths resolves inside the package', () => {
    const alphabet = ['a', 'b', '.', '/', '\\', '%', '2', 'e', 'f', 'E', '5', 'c', '?', '#', ':'];
    let x = 20261130;
    const next = () => {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      return x;
    };
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const len = 1 + (next() % 12);
      let p = '';
      for (let j = 0; j < len; j++) p += alphabet[next() % alphabet.length];
      if (!isSafePackagePath(p)) continue;
      accepted++;
      expect(insideBase(p), p).toBe(true);
    }
    // The property is only worth something if some random paths were accepted.
    expect(accepted).toBeGreaterThan(500);
  });
});
