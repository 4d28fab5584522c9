/**
 * `clef-web calibrate` end to end on the tiny package (real onnxruntime-node): labels are drawn
 * from softmax(logits / 2) of the package's own logits, so the choice temperature the CLI must
 * fit is known (2); the calibrated package still verifies, its plain answers are byte-identical,
 * and its opt-in answers follow the file it wrote. Refusals write nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CalibrationError, uniforms, parseCalibration } from '../../../../src/calibrate/index.js';
import {
  referenceCalibrated,
  referenceProbabilities,
} from '../../../support/calibration-reference.js';
import { main } from '../../../../src/node/cli.js';
import { loadNodePackage } from '../../../../src/node/engine.js';
import { IntegrityError } from '../../../../src/wire/errors.js';
import { buildTinyPackage, TINY_MODEL, type TinyPackage } from '../../support/tiny-package.js';

const T0 = 2;
const OPTIONS = ['alpha', 'beta', 'gamma', 'delta'];

function request(i: number) {
  return {
    model: TINY_MODEL,
    state: `message number ${i}: ${'abcdefgh'.slice(0, 1 + (i % 8))} ${i * 7919}`,
    questions: {
      route: { type: 'choice', criteria: Object.fromEntries(OPTIONS.map((o) => [o, null])) },
      ok: { type: 'noul' },
    },
  };
}

let pkg: TinyPackage;
let examples: string;
let plainJson: string[];
const N = 120;

beforeAll(async () => {
  pkg = await buildTinyPackage('clef-calibrate-');
  const engine = await loadNodePackage(pkg.dir);
  const uniform = uniforms(42);
  const draw = (p: number[]) => {
    let u = uniform();
    let k = 0;
    while (k < p.length - 1 && u >= p[k]!) u -= p[k++]!;
    return k;
  };
  const lines: string[] = [];
  plainJson = [];
  for (let i = 0; i < N; i++) {
    const d = await engine.decide(request(i));
    plainJson.push(d.json);
    const route = d.encoded.questions[0]!.optionIds[draw(referenceProbabilities(d.logits[0]!, T0))];
    const ok = draw(referenceProbabilities(d.logits[1]!, 1)) === 0;
    lines.push(JSON.stringify({ request: request(i), labels: { route, ok } }));
  }
  await engine.dispose();
  examples = join(pkg.dir, '..', 'labelled.jsonl');
  writeFileSync(examples, `${lines.join('\n')}\n`);
}, 120_000);

afterAll(() => pkg?.remove());

async function run(args: string[]) {
  const out: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a) => void out.push(a.join(' ')));
  try {
    return { code: await main(['calibrate', ...args, '--quiet']), text: out.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('clef-web calibrate', () => {
  it('refuses bad lines by number and writes nothing', async () => {
    const bad = join(pkg.dir, '..', 'bad.jsonl');
    const good = readFileSync(examples, 'utf8').split('\n');
    writeFileSync(bad, [good[0], '{"request": 1}', good[1], '{"labels": {}}', 'nope'].join('\n'));
    const manifest = readFileSync(join(pkg.dir, 'manifest.json'), 'utf8');
    const r = await run([pkg.dir, '--examples', bad]);
    expect(r.code).toBe(1);
    expect(r.text).toMatch(/3 bad lines/);
    expect(r.text).toMatch(/line 2: /);
    expect(r.text).toMatch(/line 4: /);
    expect(r.text).toMatch(/line 5: not JSON/);
    expect(readFileSync(join(pkg.dir, 'manifest.json'), 'utf8')).toBe(manifest);
    expect(existsSync(join(pkg.dir, 'calibration.json'))).toBe(false);
  });

  it('refuses too few answers, saying how many it needs', async () => {
    const few = join(pkg.dir, '..', 'few.jsonl');
    writeFileSync(few, readFileSync(examples, 'utf8').split('\n').slice(0, 30).join('\n'));
    const r = await run([pkg.dir, '--examples', few]);
    expect(r.code).toBe(1);
    expect(r.text).toMatch(/noul has 30, needs 38; choice has 30, needs 38/);
    expect(existsSync(join(pkg.dir, 'calibration.json'))).toBe(false);
  });

  it('fits the known temperature and writes a verifiable calibrated package', async () => {
    const out = join(pkg.dir, '..', 'calibrated');
    const r = await run([pkg.dir, '--examples', examples, '--coverage', '0.8', '--out', out]);
    expect(r.text).toMatch(/before +ECE/);
    expect(r.text).toMatch(/after +ECE/);
    expect(r.code).toBe(0);
    expect(existsSync(join(pkg.dir, 'calibration.json'))).toBe(false); // the source is untouched
    const text = readFileSync(join(out, 'calibration.json'), 'utf8');
    const file = parseCalibration(text);
    // 90 fit answers of a 4-option choice whose labels come from softmax(z / 2): the MLE of
    // 1/T has sd ≈ 1/sqrt(n·Var(z)) ≈ 0.07 around 0.5 here; ×/÷ 1.6 is several sd.
    expect(file.types.choice!.temperature).toBeGreaterThan(T0 / 1.6);
    expect(file.types.choice!.temperature).toBeLessThan(T0 * 1.6);
    expect(file.types.choice!.coverage).toBe(0.8);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    const entry = manifest.files.find((f: { role: string }) => f.role === 'calibration');
    expect(entry).toEqual({
      path: 'calibration.json',
      role: 'calibration',
      bytes: Buffer.byteLength(text),
      sha256: createHash('sha256').update(text).digest('hex'),
    });

    const engine = await loadNodePackage(out);
    try {
      for (const i of [0, 17, 99]) {
        const plain = await engine.decide(request(i));
        expect(plain.json).toBe(plainJson[i]);
        expect(plain.calibrated).toBeUndefined();
        const asked = await engine.decide(request(i), { calibration: { abstainBelow: 0.99 } });
        expect(asked.json).toBe(plainJson[i]);
        const q = asked.calibrated!.questions[0]!;
        if (!q.calibrated) throw new Error('choice is calibrated');
        // Expected from the test's own implementation of the file's meaning, not src's.
        const want = referenceCalibrated(file.types.choice!, asked.logits[0]!, 0.99);
        q.probabilities.forEach((p, k) => expect(p).toBeCloseTo(want.probabilities[k]!, 12));
        expect(q.options).toEqual(asked.encoded.questions[0]!.optionIds);
        expect(q.set).toEqual(want.set.map((k) => q.options[k]));
        expect(q.top).toBe(q.options[want.top]);
        expect(q.abstain).toBe(want.abstain);
        expect(asked.calibrated!.abstain).toBe(
          asked.calibrated!.questions.some((x) => x.calibrated && x.abstain),
        );
      }
    } finally {
      await engine.dispose();
    }

    // A changed calibration file no longer verifies.
    writeFileSync(
      join(out, 'calibration.json'),
      text.replace('"coverage": 0.8', '"coverage": 0.5'),
    );
    await expect(loadNodePackage(out)).rejects.toBeInstanceOf(IntegrityError);
  }, 120_000);

  it('refuses calibrated answers from a package without a calibration', async () => {
    const engine = await loadNodePackage(pkg.dir);
    try {
      expect(engine.calibration).toBeNull();
      const refused = engine.decide(request(1), { calibration: true });
      await expect(refused).rejects.toBeInstanceOf(CalibrationError);
      await expect(refused).rejects.toMatchObject({ code: 'calibration_unavailable' });
      expect((await engine.decide(request(1))).json).toBe(plainJson[1]);
    } finally {
      await engine.dispose();
    }
  });
});
