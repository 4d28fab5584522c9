/**
 * The check and tokenizer phases: the file parsed and checked (every problem before any work),
 * the held-out split, the tokenizer trained on the training part, and every example encoded.
 */
import { parseLabelledExamples, type LabelledExample } from '../../calibrate/examples.js';
import { isCalibrationError } from '../../calibrate/errors.js';
import { requiredAnswers } from '../../calibrate/fit.js';
import { Rng } from '../../calibrate/prng.js';
import type { JsonValue } from '../../protocol/types.js';
import { validateRequest } from '../../protocol/validate.js';
import { checkExamples, encodeExamples, prepareTokenizer } from './data.js';
import { TrainError } from './errors.js';
import { CROSS_FIT_MAX, orderConsidered } from './fit.js';
import { hiddenOf } from './learner-setup.js';
import { checkModelNames } from './model-names.js';
import {
  DEFAULT_HOLDOUT,
  defaultVocab,
  type TrainOptions,
  type TrainPhase,
  type TrainProgress,
} from './options.js';
import { DEFAULT_PAIR_SHAPE } from './pairs.js';
import { firstCopies, repeatReport } from './repeats.js';
import { SCOPE_WORDS } from './scope.js';

function mostCommon(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return sorted[0]?.[0] ?? 'clef-trained';
}

export function parse(text: string, what: string): LabelledExample[] {
  try {
    return parseLabelledExamples(text, {
      validateRequest: (body: JsonValue) => validateRequest(body),
    });
  } catch (e) {
    if (isCalibrationError(e)) {
      throw new TrainError('examples_invalid', `${what}: ${e.message}`, e.details);
    }
    throw e;
  }
}

/**
 * Stratified by each example's first labelled answer, seeded: every option keeps its share. With
 * `firstCopy` (repeats.ts firstCopies), only the first of the examples whose states read the same
 * is drawn, and its copies go to the same side.
 */
export function splitHoldout(
  examples: readonly LabelledExample[],
  fraction: number,
  seed: number,
  firstCopy?: readonly number[],
) {
  const groups = new Map<string, LabelledExample[]>();
  for (const [i, e] of examples.entries()) {
    if (firstCopy !== undefined && firstCopy[i] !== i) continue;
    const [first] = e.labels.entries();
    const key = first === undefined ? '' : `${first[0]}\u0000${first[1]}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = []));
    group.push(e);
  }
  const rng = new Rng(seed ^ 0x2545f491);
  const held = new Set<LabelledExample>();
  for (const key of [...groups.keys()].sort()) {
    const pool = [...(groups.get(key) as LabelledExample[])];
    const take = Math.round(pool.length * fraction);
    for (let i = 0; i < take; i++)
      held.add(pool.splice(rng.int(pool.length), 1)[0] as LabelledExample);
  }
  firstCopy?.forEach((first, i) => {
    if (first !== i && held.has(examples[first] as LabelledExample))
      held.add(examples[i] as LabelledExample);
  });
  return {
    train: examples.filter((e) => !held.has(e)),
    heldOut: examples.filter((e) => held.has(e)),
  };
}

/**
 * check and tokenizer: every problem with the file before any work, then the tokenizer and the
 * encoded examples. A function of its own so that the parsed training examples (the biggest
 * thing a run holds: CLINC150's 15,100 requests of 151 options) are garbage once it returns.
 */
export function prepare(
  options: TrainOptions,
  seed: number,
  contextTokens: number,
  coverage: number,
  progress: (p: TrainProgress) => void,
  endPhase: (phase: TrainPhase) => void,
) {
  progress({ phase: 'check', done: 0, total: 1 });
  const all = parse(options.examples, 'examples');
  const holdout = options.holdout ?? (all.length <= CROSS_FIT_MAX ? 0 : DEFAULT_HOLDOUT);
  const firstCopy = firstCopies(all);
  const split =
    options.heldOutExamples !== undefined
      ? { train: all, heldOut: parse(options.heldOutExamples, 'held-out examples') }
      : holdout > 0
        ? splitHoldout(all, holdout, seed, firstCopy)
        : { train: all, heldOut: [] };
  const repeats = repeatReport(all, firstCopy, split);
  const needAnswers = requiredAnswers({ coverage }).total;
  const questions = checkExamples(split.train, needAnswers);
  const name = options.name ?? mostCommon(all.map((e) => e.valid.model));
  checkModelNames(split.train.concat(split.heldOut), name);
  // The lines as written (lossless), for the calibration's own parse.
  const linesOf = (text: string, examples: readonly LabelledExample[]) => {
    const lines = text.replace(/^\uFEFF/, '').split('\n');
    const byLine = new Map<number, string>();
    for (const e of examples) {
      const line = lines[e.line - 1] as string;
      byLine.set(e.line, line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    return byLine;
  };
  const heldOutLines = linesOf(options.heldOutExamples ?? options.examples, split.heldOut);
  const trainLines = linesOf(options.examples, split.train);
  progress({ phase: 'check', done: 1, total: 1, message: `${all.length} examples` });
  endPhase('check');

  progress({ phase: 'tokenizer', done: 0, total: 1 });
  const classes = questions.reduce((n, q) => n + q.options.length, 0);
  const data = prepareTokenizer(
    split.train,
    options.vocabSize ??
      defaultVocab(
        hiddenOf(
          classes,
          options.normDims,
          orderConsidered(options.order ?? 'auto', split.train.length) ? DEFAULT_PAIR_SHAPE.m : 0,
        ),
      ),
    // The scope layer's cue words, kept whole, where `auto` may try it (layer-search.ts).
    (options.order ?? 'auto') === 'auto' && orderConsidered('auto', split.train.length)
      ? SCOPE_WORDS
      : [],
  );
  const trained = new Set(questions.map((q) => q.id));
  const train = encodeExamples(split.train, data, contextTokens, trained);
  const heldOut = encodeExamples(split.heldOut, data, contextTokens, trained);
  progress({
    phase: 'tokenizer',
    done: 1,
    total: 1,
    message: `${data.files.vocabSize} tokens`,
  });
  endPhase('tokenizer');
  return {
    questions,
    name,
    data,
    trained,
    train,
    heldOut,
    trainExamples: split.train,
    heldOutExamples: split.heldOut,
    trainLines,
    heldOutLines,
    needAnswers,
    repeats,
  };
}
