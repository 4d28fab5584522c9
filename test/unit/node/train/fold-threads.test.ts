/**
 * A small file's cross-fit on worker threads (select.ts FoldRunner, src/node/train/shard-pool.ts
 * fitFolds) gives the same bits as one fit after another on this thread: each fit is the same code
 * on the same inputs, and its answers are put back by job, not by when they came back. Checked on
 * the planted task (the plain bag) and the status task with the scope layer and the pointer, on 2
 * and 3 threads. The check is sharp enough to see two jobs' answers swapped. Progress still
 * counts every fit once and reports the iterations of one fit at a time; an interrupt (a progress
 * callback that throws) and a failing thread end the cross-fit, and the threads end with the pool.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { parseLabelledExamples } from '../../../../src/calibrate/examples.js';
import { RMS_EPS } from '../../../../src/build/train/construct.js';
import {
  checkExamples,
  encodeExamples,
  prepareTokenizer,
} from '../../../../src/build/train/data.js';
import { TrainError } from '../../../../src/build/train/errors.js';
import { fitPhase, learnerSetup, type FitPhase } from '../../../../src/build/train/fit.js';
import type { FitReport } from '../../../../src/build/train/fit-progress.js';
import { fitModel, startsFor, type FittedModel } from '../../../../src/build/train/learner.js';
import type { LearnerSetup } from '../../../../src/build/train/learner-setup.js';
import type { ModelExample } from '../../../../src/build/train/model.js';
import { DEFAULT_PAIR_SHAPE } from '../../../../src/build/train/pairs.js';
import { pointerShape } from '../../../../src/build/train/pointer.js';
import {
  CANDIDATES,
  crossFit,
  DEFAULT_SETTINGS,
  fitStarts,
  type CrossFit,
  type TrainPool,
} from '../../../../src/build/train/select.js';
import { nodeShardPool, type NodeShardPool } from '../../../../src/node/train/shard-pool.js';
import { validateRequest } from '../../../../src/protocol/validate.js';
import { orderJsonl, plantedJsonl, statusJsonl } from '../../../../tools/train/planted.js';
import { fitProgress } from '../../support/planted-fit.js';
import { seedLine, testSeed } from '../../../support/seed.js';

const SEED = testSeed('fold-threads');
const MAX_ITERATIONS = 40;

function parsed(jsonl: string) {
  const lines = parseLabelledExamples(jsonl, { validateRequest: (b) => validateRequest(b) });
  const questions = checkExamples(lines);
  const data = prepareTokenizer(lines, 512);
  const encoded = encodeExamples(lines, data, 4096, new Set(questions.map((q) => q.id)));
  return { lines, questions, data, encoded };
}

function task(jsonl: string, layer: Parameters<typeof learnerSetup>[4]) {
  const { lines, questions, data, encoded } = parsed(jsonl);
  const setup = learnerSetup(
    data,
    questions,
    [{ examples: lines, encoded }],
    { rmsEps: RMS_EPS },
    layer,
  );
  return { setup, encoded };
}

const planted = task(plantedJsonl(120, SEED), null);
/** The status task's two options (tools/train/planted.ts): the pointer's shape needs them. */
const status = task(statusJsonl(100, SEED), { cues: 'nominal', pairs: pointerShape(2) });

const pools: NodeShardPool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});
function pool(threads: number): NodeShardPool {
  const p = nodeShardPool(threads);
  pools.push(p);
  return p;
}

interface Run {
  cross: CrossFit;
  /** `done` of each onFit call, in order. */
  fitted: number[];
  /** The iterations reported, in order. */
  iterations: number[];
}

async function run(
  { setup, encoded }: { setup: LearnerSetup; encoded: readonly ModelExample[] },
  threads?: TrainPool,
): Promise<Run> {
  const fitted: number[] = [];
  const iterations: number[] = [];
  const cross = await crossFit(setup, encoded, {
    seed: SEED,
    maxIterations: MAX_ITERATIONS,
    onFit: (done) => fitted.push(done),
    onIteration: (i) => iterations.push(i),
    pool: threads,
  });
  return { cross, fitted, iterations };
}

const hex = (a: Float64Array): string =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');

/** Every out-of-fold logit's bits, and the scores, as one comparable value. */
function bits(cross: CrossFit): string[] {
  return [
    ...cross.outOfFold.flatMap((e) => e.map(hex)),
    JSON.stringify(cross.scores),
    JSON.stringify(cross.best),
  ];
}

describe("a small file's cross-fit on worker threads", () => {
  it.each([
    ['the planted task, the plain bag', planted],
    ['the status task, the scope layer and the pointer', status],
  ])(
    'gives the same bits on 2 and 3 threads as on this one (%s)',
    async (_, data) => {
      const here = await run(data);
      const two = pool(2);
      const three = pool(3);
      const onTwo = await run(data, two);
      const onThree = await run(data, three);
      // Threads ran: a small file's single fit never starts one (shards.ts shardCount).
      expect(two.running(), 'both threads ran').toBe(2);
      expect(three.running(), 'three threads ran').toBe(3);
      expect(bits(onTwo.cross), seedLine('fold-threads', SEED)).toEqual(bits(here.cross));
      expect(bits(onThree.cross), seedLine('fold-threads', SEED)).toEqual(bits(here.cross));
      const total = CANDIDATES.length * 5;
      for (const r of [here, onTwo, onThree])
        expect(r.fitted, 'each fit counted once').toEqual(
          Array.from({ length: total }, (_, i) => i + 1),
        );
      // One fit's iterations at a time: the reports count up by one, but where the fit
      // reported on ends (the next one may be under way already), at most once a fit; two fits'
      // reports interleaved would break the count at nearly every report.
      for (const r of [here, onTwo, onThree]) {
        expect(r.iterations[0]).toBe(1);
        const breaks = r.iterations.filter(
          (it, i) => i > 0 && it !== (r.iterations[i - 1] as number) + 1,
        );
        expect(breaks.length, 'where the reported fit changes').toBeLessThan(total);
        expect(r.iterations.length, 'reports').toBeGreaterThan(5 * total);
      }
      expect(here.iterations.filter((it) => it === 1).length, 'each fit from 1 here').toBe(total);
      await Promise.all([two.close(), three.close()]);
      expect(two.running() + three.running(), 'no thread left after close').toBe(0);
    },
    120_000,
  );

  it('would show two jobs answered in the wrong places', async () => {
    const here = await run(planted);
    const threads = pool(2);
    const swapped: TrainPool = {
      threads: 2,
      open: (fit) => threads.open(fit),
      fitFolds: async (...args) => {
        const answers = await threads.fitFolds(...args);
        // Folds 0 and 1 of the first candidate hold the same number of examples here.
        [answers[0], answers[1]] = [answers[1] as Float64Array[][], answers[0] as Float64Array[][]];
        return answers;
      },
    };
    const slipped = await run(planted, swapped);
    expect(bits(slipped.cross)).not.toEqual(bits(here.cross));
    await threads.close();
  }, 60_000);

  it('stops taking fits when a progress callback throws (an interrupt), and the threads end', async () => {
    const threads = pool(2);
    let calls = 0;
    const interrupted = await crossFit(planted.setup, planted.encoded, {
      seed: SEED,
      maxIterations: MAX_ITERATIONS,
      onFit: (done) => {
        calls = done;
        if (done === 3) throw new Error('interrupted');
      },
      pool: threads,
    }).catch((e: unknown) => e);
    expect((interrupted as Error).message).toBe('interrupted');
    // At most the fit each thread already had under way finishes after the interrupt.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(calls).toBe(3);
    await threads.close();
    expect(threads.running()).toBe(0);
  }, 60_000);

  it('fails with train_thread_failed when a thread fails, and ends its threads', async () => {
    const threads = pool(2);
    const bad = [...planted.encoded] as ModelExample[];
    // A question the threads cannot read (its options missing).
    const broken = bad[7] as ModelExample;
    bad[7] = {
      ...broken,
      questions: broken.questions.map((q) => ({ ...q, options: null as never })),
    };
    const error = await Promise.race([
      crossFit(planted.setup, bad, { seed: SEED, maxIterations: 5, pool: threads }).catch(
        (e: unknown) => e,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 30 s'), 30_000)),
    ]);
    expect(error).toBeInstanceOf(TrainError);
    expect((error as TrainError).code).toBe('train_thread_failed');
    expect((error as TrainError).message).toMatch(/a training thread failed: .*--threads 1/);
    await threads.close();
    expect(threads.running()).toBe(0);
  }, 60_000);

  // The order layer's probe starts on a thread right after the plain model's cross-fit, beside
  // the scope layer's and the pointer's (layer-search.ts earlyOrderProbe), and is judged in its
  // place: the whole search must choose and fit the same as on this thread.
  it('searches the layers to the same bits on 2 threads, the order layer probed beside the rest', async () => {
    // The planted order task: no bag of words and no scope reading answers it, so the order
    // layer is probed (and its probe judged) on every seed.
    const order = parsed(orderJsonl(80, SEED));
    const search = (threads?: TrainPool) => {
      const progress = fitProgress();
      const reports: FitReport[] = [];
      const onFit = (r: FitReport): void => {
        reports.push(r);
        progress.onFit(r);
      };
      return fitPhase(
        order.data,
        order.questions,
        { examples: order.lines, encoded: order.encoded },
        { examples: [], encoded: [] },
        { seed: SEED, rmsEps: RMS_EPS, pool: threads, onFit },
      ).then((fitted) => ({ fitted, progress, reports }));
    };
    const phaseBits = ({ model, outOfFold, selection }: FitPhase) => [
      JSON.stringify(selection),
      hex(model.params.theta),
      hex(model.params.rows),
      ...(outOfFold ?? []).flatMap((e) => e.map(hex)),
    ];
    const here = await search();
    const threads = pool(2);
    // Which fits went to the threads, in the order asked for: the size of each batch, and
    // whether its setup has the order layer's heads.
    const asked: string[] = [];
    const watched: TrainPool = {
      threads: 2,
      open: (fit) => threads.open(fit),
      fitFolds: (setup, ...rest) => {
        asked.push(
          `${rest[2].length}${setup.shape.pairs?.heads.some((h) => h.kind === 'memory') === true ? ' order' : ''}`,
        );
        return threads.fitFolds(setup, ...rest);
      },
      fitStarts: (setup, examples, settings, seeds, options) => {
        asked.push(`starts ${seeds.join(',')}`);
        return threads.fitStarts(setup, examples, settings, seeds, options);
      },
    };
    const onTwo = await search(watched);
    expect(
      here.fitted.selection.scores.some((s) => s.layer === 'order'),
      'the order layer was tried',
    ).toBe(true);
    expect(asked[0], 'the plain grid first').toBe(`${CANDIDATES.length * 5}`);
    expect(asked[1], 'then the order layer probe, on one fold').toBe('1 order');
    expect(asked.length, 'and the scope readings after it').toBeGreaterThan(2);
    // Where the order layer is kept, its final fit's two starts ran on the threads, last.
    if (here.fitted.selection.order) expect(asked.at(-1)).toBe('starts 1,2');
    else expect(asked.filter((a) => a.startsWith('starts'))).toEqual([]);
    expect(phaseBits(onTwo.fitted), seedLine('fold-threads', SEED)).toEqual(phaseBits(here.fitted));
    // Progress as honest as on one thread: the same fits counted, the same settled total.
    expect(onTwo.progress.miscounted()).toEqual([]);
    expect(onTwo.progress.calls).toEqual(here.progress.calls);
    // The early probe's iterations are reported only once the search waits for it, not among the
    // steps it ran beside: from its first report to its end, every report is the order layer's.
    const { reports } = onTwo;
    const probeDone = reports.findIndex((r) => r.kind === 'order' && r.iteration === undefined);
    const firstTick = reports.findIndex((r) => r.kind === 'order' && r.iteration !== undefined);
    expect(probeDone, 'the probe finished').toBeGreaterThan(0);
    if (firstTick >= 0 && firstTick < probeDone)
      expect(reports.slice(firstTick, probeDone).map((r) => r.kind)).toEqual(
        Array<string>(probeDone - firstTick).fill('order'),
      );
    await threads.close();
  }, 240_000);

  // The order layer's kept model is fitted from two starts (learner.ts ORDER_STARTS), the lower
  // objective kept: on the threads they run at once, and the same start must be kept.
  it("fits a model's starts at once to the same bits as one after another here", async () => {
    const order = task(orderJsonl(80, SEED), DEFAULT_PAIR_SHAPE);
    expect(startsFor(order.setup)).toBe(2);
    const options = { settings: DEFAULT_SETTINGS, maxIterations: MAX_ITERATIONS, starts: 2 };
    const here = await fitModel(order.setup, order.encoded, options);
    const threads = pool(2);
    let models: FittedModel[] = [];
    const started: number[] = [];
    const iterations: number[] = [];
    const watched: TrainPool = {
      threads: 2,
      open: (fit) => threads.open(fit),
      fitStarts: async (...args) => (models = await threads.fitStarts(...args)),
    };
    const onTwo = await fitStarts(order.setup, order.encoded, {
      ...options,
      pool: watched,
      onStartFitted: (s) => started.push(s),
      onIteration: (i) => iterations.push(i),
    });
    expect(models.length, 'both starts ran on the threads').toBe(2);
    expect(threads.running()).toBe(2);
    // The two starts end apart, so keeping the wrong one would show in the bits.
    expect(models[0]?.objective).not.toBe(models[1]?.objective);
    const modelBits = (m: FittedModel) => [
      m.objective,
      m.iterations,
      hex(m.params.theta),
      hex(m.params.rows),
      hex(m.params.emb ?? new Float64Array()),
      hex(m.weights.u),
      hex(m.weights.g),
    ];
    expect(modelBits(onTwo), seedLine('fold-threads', SEED)).toEqual(modelBits(here));
    expect(started.sort()).toEqual([0, 1]);
    // The earliest start's iterations, then the other's still to come: they count up by one,
    // changing start at most once.
    expect(iterations[0]).toBe(1);
    const breaks = iterations.filter((it, i) => i > 0 && it !== (iterations[i - 1] as number) + 1);
    expect(breaks.length, 'where the reported start changes').toBeLessThanOrEqual(1);
    expect(iterations.length).toBeGreaterThanOrEqual(10);
    await threads.close();
  }, 120_000);

  it('ends a cross-fit still queued when the pool is closed, rather than leave it waiting', async () => {
    const threads = pool(1);
    const fold = planted.encoded.map((_, i) => i % 5);
    const ask = () =>
      threads
        .fitFolds(planted.setup, planted.encoded, fold, [{ settings: CANDIDATES[0]!, fold: 0 }], {
          maxIterations: MAX_ITERATIONS,
          onFitted: () => undefined,
        })
        .catch((e: unknown) => e);
    // One thread: the first cross-fit's fit runs, the second's waits in the queue.
    const running = ask();
    const queued = ask();
    // A cross-fit of no fits is answered at once, not left in the queue.
    await expect(
      threads.fitFolds(planted.setup, planted.encoded, fold, [], {
        maxIterations: MAX_ITERATIONS,
        onFitted: () => undefined,
      }),
    ).resolves.toEqual([]);
    await threads.close();
    const outcome = await Promise.race([
      Promise.all([running, queued]),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000)),
    ]);
    expect(outcome).toEqual([expect.any(Error), expect.any(Error)]);
    expect(((outcome as Error[])[1] as Error).message).toBe('the shard pool was closed');
    expect(threads.running()).toBe(0);
  }, 30_000);
});
