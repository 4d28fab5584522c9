import { prepare } from './exp-common.js';
import { parseLabelledExamples } from './src/calibrate/examples.js';
import { validateRequest } from './src/protocol/validate.js';
import { orderJsonl } from './tools/train/planted.js';
import { fitModel, predictAll } from './src/node/train/learner.js';
const parse = (t: string) => parseLabelledExamples(t, { validateRequest: (b: any) => validateRequest(b) });
const train = parse(orderJsonl(Number(process.env.N ?? 240), 5)); const test = parse(orderJsonl(400, 99));
const p = prepare(train, test);
for (const pl of (process.env.PL ?? '0.01').split(',').map(Number)) {
  const t0 = Date.now();
  const fit = fitModel(p.setup, p.tr, { settings: { lambda: 0.1, normScale: 0.3, bias: 1, pairLambda: pl }, maxIterations: Number(process.env.IT ?? 400) });
  const acc = (ex: any[], lg: any[]) => ex.filter((e, i) => { const l = lg[i][0]; let b = 0; l.forEach((v: number, k: number) => { if (v > l[b]) b = k; }); return b === e.questions[0].label; }).length / ex.length;
  console.log(`pl ${pl}: iters ${fit.iterations} train ${acc(p.tr, predictAll(fit.params, p.tr)).toFixed(3)} test ${acc(p.te, predictAll(fit.params, p.te)).toFixed(3)} ${((Date.now()-t0)/1000).toFixed(1)}s`);
}
