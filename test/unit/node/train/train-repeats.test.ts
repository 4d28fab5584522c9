/**
 * A file whose lines repeat, trained by `clef-web train` (real onnxruntime-node): its figures stay
 * on text the model did not see. The labels here are coin tosses, so no model can beat chance on
 * a line it did not see; a cross-fit that judged a line by a model fitted on its copy in another
 * fold reported 100% out of fold and the sign tests counted each copy (before repeats.ts; and
 * 86% where the copies differed by a comma and a "!", before stateKey set punctuation aside). The
 * card and the CLI's lines name the copies and the text whose labels disagree.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../../../src/calibrate/prng.js';
import { trainDecisionModel } from '../../../../src/node/train/train.js';
import { figuresLines } from '../../../../src/node/train/cli.js';

const root = mkdtempSync(join(tmpdir(), 'clef-train-repeats-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const WORDS = 'amber basil cedar delta ember fjord grove harbor indigo juniper kestrel lumen'.split(
  ' ',
);

/**
 * 40 lines of made-up words, labels tossed; each written three times (once in capitals, once with
 * a comma and a "!"); one text both ways.
 */
function noiseFile(seed: number): string {
  const rng = new Rng(seed);
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) {
    const text = Array.from({ length: 4 }, () => WORDS[rng.int(WORDS.length)]).join(' ') + ` ${i}`;
    const label = rng.int(2) === 0 ? 'yes' : 'no';
    for (let c = 0; c < 3; c++)
      lines.push(
        JSON.stringify({
          text: [text, text.toUpperCase(), `${text.replace(' ', ', ')}!`][c],
          label,
        }),
      );
  }
  lines.push(JSON.stringify({ text: 'amber basil 0 conflict', label: 'yes' }));
  lines.push(JSON.stringify({ text: 'Amber,  basil 0 conflict.', label: 'no' }));
  return lines.join('\n');
}

describe('a file whose lines repeat', () => {
  it('is judged on text the model did not see: chance out of fold, each copy counted once, the copies and the conflict named', async () => {
    const result = await trainDecisionModel({
      texts: noiseFile(5),
      plain: { format: 'jsonl', labelColumn: 'label' },
      out: join(root, 'noise'),
      fit: { lambda: 0.01, normScale: 0.3, bias: 1 },
      order: 'off',
      fidelityRequests: 0,
      onProgress: () => {},
    });
    const accuracy = result.heldOut.questions[0]?.accuracy ?? NaN;
    console.log(
      `[train-repeats] out-of-fold accuracy on tossed labels ${(100 * accuracy).toFixed(1)}%`,
    );
    expect(result.evaluatedOn).toBe('cross-fit');
    // 41 different texts of tossed labels: at chance, not the copies' 100%.
    expect(accuracy).toBeLessThan(0.75);
    const d = result.baseline.questions[0]?.disagreements;
    expect(d).toBeDefined();
    expect((d?.modelOnly ?? 0) + (d?.baselineOnly ?? 0)).toBeLessThanOrEqual(42);
    expect(result.repeats).toMatchObject({ repeated: 81, conflictCount: 1, heldOutSeen: 0 });
    const lines = figuresLines(result);
    expect(lines).toContain(result.notes[0]);
    expect(result.notes[0]).toMatch(/^81 lines repeat the text of an earlier line/);
    expect(result.notes[1]).toContain(
      '"amber basil 0 conflict" (label): yes on line 121, no on line 122.',
    );
    const card = readFileSync(join(result.packageDir, 'README.md'), 'utf8');
    expect(card).toContain('## Repeated lines');
    expect(card).toContain(`- ${result.notes[1]}`);
  }, 240_000);
});
