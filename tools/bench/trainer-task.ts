/**
 * A small task (small-tasks.ts) prepared as `clef-web train` prepares a cross-fitted file, for the
 * benchmarks that run the trainer's own function on it (dev only): its lines as labelled
 * requests, the tokenizer at `train`'s vocabulary size with the scope layer's words whole, the
 * encoded training and test examples, and the learner's setup for a choice of layers.
 */
import { parseLabelledExamples } from '../../src/calibrate/examples.js';
import { RMS_EPS } from '../../src/build/train/construct.js';
import { checkExamples, encodeExamples, prepareTokenizer } from '../../src/build/train/data.js';
import { learnerSetup } from '../../src/build/train/fit.js';
import { hiddenOf, type LayerChoice } from '../../src/build/train/learner-setup.js';
import { DEFAULT_PAIR_SHAPE } from '../../src/build/train/pairs.js';
import { defaultVocab } from '../../src/build/train/options.js';
import { SCOPE_WORDS } from '../../src/build/train/scope.js';
import { validateRequest } from '../../src/protocol/validate.js';
import type { Task } from './small-tasks.js';

export function prepareTrainerTask(task: Task) {
  const line = (text: string, label: string) =>
    JSON.stringify({
      request: { model: task.name, state: text, questions: { [task.questionId]: task.question } },
      labels: { [task.questionId]: label },
    });
  const parse = (lines: readonly { text: string; label: string }[]) =>
    parseLabelledExamples(lines.map((l) => line(l.text, l.label)).join('\n'), {
      validateRequest: (b) => validateRequest(b),
    });
  const train = parse(task.train);
  const test = parse(task.test);
  const questions = checkExamples(train);
  const classes = questions.reduce((n, q) => n + q.options.length, 0);
  const data = prepareTokenizer(
    train,
    defaultVocab(hiddenOf(classes, undefined, DEFAULT_PAIR_SHAPE.m)),
    SCOPE_WORDS,
  );
  const trained = new Set(questions.map((q) => q.id));
  const encoded = encodeExamples(train, data, 4096, trained);
  const setup = (layer: LayerChoice) =>
    learnerSetup(data, questions, [{ examples: train, encoded }], { rmsEps: RMS_EPS }, layer);
  const options = (questions[0] as (typeof questions)[number]).options;
  return {
    data,
    encoded,
    encodedTest: encodeExamples(test, data, 4096, trained),
    setup,
    options,
  };
}
