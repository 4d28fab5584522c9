import { readFileSync } from 'node:fs';
import { parseLabelledExamples } from './src/calibrate/examples.js';
import { validateRequest } from './src/protocol/validate.js';
import { prepareTokenizer, encodeExamples, checkExamples } from './src/node/train/data.js';
import { setupLearner, classDims } from './src/node/train/learner.js';
import { promptOptions } from './src/clef/prompt.js';
import { RMS_EPS } from './src/node/train/construct.js';
import { DEFAULT_PAIR_SHAPE } from './src/node/train/pairs.js';
export function loadTask(qfile: string, qid: string, trainFile: string, testFile: string, filter?: string) {
  let question = JSON.parse(readFileSync(qfile, 'utf8'));
  if (filter) question = question[filter];
  const rows = (f: string) => readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((r: any) => !filter || r.question === filter);
  const tr = rows(trainFile); const te = rows(testFile);
  const line = (r: any) => JSON.stringify({ request: { model: 'm', state: r.text, questions: { [qid]: question } }, labels: { [qid]: r.label } });
  const parse = (x: any[]) => parseLabelledExamples(x.map(line).join('\n'), { validateRequest: (b: any) => validateRequest(b) });
  return { train: parse(tr), test: parse(te), trainRows: tr, testRows: te };
}
export function prepare(train: any[], test: any[], vocab = 4000, tokTrain?: any[]) {
  const questions = checkExamples(train);
  const data = prepareTokenizer(tokTrain ?? train, vocab);
  const trained = new Set(questions.map((q) => q.id));
  const tr = encodeExamples(train, data, 4096, trained);
  const te = encodeExamples(test, data, 4096, trained);
  const { dimOf, width } = classDims(questions.map((q) => q.options));
  const spans: { tokens: Int32Array; dim: number }[] = [];
  const seen = new Set<Int32Array>();
  // option spans: from encoded examples (same Int32Array instances per distinct span)
  const qIndex = new Map(questions.map((q, k) => [q.id, k]));
  for (const [ex, enc] of [...train.map((e, i) => [e, tr[i]]), ...test.map((e, i) => [e, te[i]])] as any) {
    const qs = ex.valid.questions.filter((q: any) => trained.has(q.id));
    qs.forEach((q: any, j: number) => {
      const opts = promptOptions(q);
      enc.questions[j].options.forEach((span: Int32Array, o: number) => {
        if (seen.has(span)) return; seen.add(span);
        spans.push({ tokens: span, dim: dimOf.get(`${qIndex.get(q.id)}\u0000${opts[o][0]}`)! });
      });
    });
  }
  const setup = setupLearner(data.tokenizer, data.files.vocabSize, data.markers, data.template, width, spans, RMS_EPS, Number(process.env.NORMDIMS ?? 32), process.env.PAIRS ? DEFAULT_PAIR_SHAPE : null);
  return { questions, data, tr, te, setup };
}
