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
import { trainBpeTokenizer } from '../../../../src/build/train/bpe.js';
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

  it('counts a weighted text as if repeated, without repeating it', () => {
    const texts = ['the vpn drops', ' the vpn drops', 'mail is slow', 'STATE:\n', 'the wifi'];
    const repeated = [...texts, ...Array.from({ length: 40 }, () => 'SCHEMA and STATE')];
    const counted = trainBpeTokenizer({
      vocabSize: 300,
      corpus: texts,
      counted: [['SCHEMA and STATE', 40]],
      minPairCount: 1,
    });
    expect(counted).toEqual(
      trainBpeTokenizer({ vocabSize: 300, corpus: repeated, minPairCount: 1 }),
    );
    // Counted two billion times: as an array of copies it could not be built. (On CLINC150 with
    // descriptions the template counts 5.5 million times; as copies, 27 million array entries,
    // the trainer's peak was 2.1-2.6 GiB, counted 1.6 GiB.)
    const heavy = trainBpeTokenizer({
      vocabSize: 300,
      corpus: texts,
      counted: [['SCHEMA and STATE', 2e9]],
      minPairCount: 1,
    });
    const vocab = (heavy.tokenizerJson as { model: { vocab: Record<string, number> } }).model.vocab;
    expect(Object.keys(vocab)).toContain('SCHEMA');
  });
});
