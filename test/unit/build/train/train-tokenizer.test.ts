/**
 * The trainer's tokenizer keeps the template's marker words whole even when many distinct
 * schemas outweigh the template in the corpus (CLINC150 with descriptions: 15,000 schemas at
 * 1,603 tokens split STATE). Here 300 requests, each with its own 10 described options, at the
 * smallest vocabulary: at the template's usual weight the BPE splits a marker word, and training
 * used to stop with "splits the template word".
 */
import { describe, expect, it } from 'vitest';
import { parseLabelledExamples } from '../../../../src/calibrate/examples.js';
import { prepareTokenizer } from '../../../../src/build/train/data.js';
import { validateRequest } from '../../../../src/protocol/validate.js';

function manySchemas(n: number): string {
  const words = Array.from({ length: 300 }, (_, i) => `w${((i * 7919) % 10007).toString(36)}qz`);
  const word = (i: number) => words[i % words.length] as string;
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const options = Array.from({ length: 10 }, (_, k) => `${word(i * 13 + k * 31)}${k}`);
    const criteria = Object.fromEntries(
      options.map((o, k) => [o, `${word(i + k)} ${word(i * 3 + k)} stated`]),
    );
    lines.push(
      JSON.stringify({
        request: {
          model: 'm',
          state: `${word(i)} ${word(i * 5)} went ${word(i * 11)}`,
          questions: { q: { type: 'choice', criteria } },
        },
        labels: { q: options[i % 10] },
      }),
    );
  }
  return lines.join('\n');
}

describe("the trainer's tokenizer", () => {
  it('keeps STATE and SCHEMA whole tokens when distinct schemas crowd the corpus', () => {
    const examples = parseLabelledExamples(manySchemas(300), {
      validateRequest: (b) => validateRequest(b),
    });
    const data = prepareTokenizer(examples, 512);
    expect(data.tokenizer.encode('STATE')).toEqual([data.markers.state]);
    expect(data.tokenizer.encode('SCHEMA')).toEqual([data.markers.schema]);
  });
});
