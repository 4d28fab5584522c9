/**
 * `trainDecisionModel` in Node: the pipeline (pipeline.ts) on the disk, the package verified on
 * onnxruntime-node, WASM-prepared graphs written. Before any work: onnxruntime-node is there,
 * the output folders can be written, the input reads (input.ts); partial folders a dead run
 * left are removed, and this run's are removed on SIGINT/SIGTERM (interrupts.ts). The fits run
 * on worker threads (shard-pool.ts, over src/build/train/thread-pool.ts), which end with the run
 * however it ends.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { loadNodePackage } from '../engine.js';
import { loadOrtNode } from '../ort-node.js';
import { nodeBuildRuntime } from '../build-runtime.js';
import { TrainError } from '../../build/train/errors.js';
import { readPlainInput, resolveTrainInput, type TrainInput } from '../../build/train/input.js';
import type { PlainQuestion } from '../../build/train/question.js';
import { labelWithTeacher } from './teacher.js';
import { guardPartials, removeStalePartials } from './interrupts.js';
import type { TrainResult } from '../../build/train/options.js';
import { runTraining } from '../../build/train/pipeline.js';
import { MAX_DEFAULT_THREADS, nodeShardPool, type NodeShardPool } from './shard-pool.js';

/** What needs onnxruntime-node, as the missing-dependency message says it. */
export const TRAIN_NEEDS_ORT = 'Training (the package it writes is verified on onnxruntime-node)';

/** An output folder that cannot be made or written is refused before any work. */
export function checkOutputDir(dir: string, option: string): void {
  const path = resolve(dir);
  if (existsSync(path) && !statSync(path).isDirectory()) {
    throw new TrainError(
      'train_options_invalid',
      `${dir} is a file: give ${option} a directory (nothing was written)`,
    );
  }
  let existing = path;
  while (!existsSync(existing)) existing = dirname(existing);
  if (!statSync(existing).isDirectory()) {
    throw new TrainError(
      'train_options_invalid',
      `${dir} cannot be made: ${existing} is a file (nothing was written)`,
    );
  }
  try {
    accessSync(existing, constants.W_OK);
  } catch {
    throw new TrainError(
      'train_options_invalid',
      `${dir} cannot be written: ${existing} is not writable (nothing was written)`,
    );
  }
}

/** The texts, labelled by the teacher (its confident answers only). */
async function teacherLabels(input: TrainInput, out: string) {
  if (input.texts === undefined) {
    throw new TrainError('train_options_invalid', '--teacher labels texts: give them with --texts');
  }
  if (input.question === undefined) {
    throw new TrainError(
      'train_options_invalid',
      '--teacher needs --question: the question the teacher answers, whose options become the labels',
    );
  }
  const read = readPlainInput(input, 'ignored');
  const teacher = input.teacher as NonNullable<TrainInput['teacher']>;
  const { rows } = await labelWithTeacher(
    read.rows,
    read.question as PlainQuestion,
    { ...teacher, dir: teacher.dir ?? `${out}-teacher` },
    input.onProgress,
  );
  return { rows, question: read.question as PlainQuestion };
}

/** The fit's threads by default: the cores this process may use, at most MAX_DEFAULT_THREADS. */
export function defaultTrainThreads(): number {
  return Math.max(1, Math.min(availableParallelism(), MAX_DEFAULT_THREADS));
}

function threadsOf(input: TrainInput): number {
  const threads = input.threads ?? defaultTrainThreads();
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) {
    throw new TrainError(
      'train_options_invalid',
      `threads must be an integer from 1 to 64, got ${threads} (nothing was written)`,
    );
  }
  return threads;
}

export async function trainDecisionModel(input: TrainInput): Promise<TrainResult> {
  const threads = threadsOf(input);
  await loadOrtNode(TRAIN_NEEDS_ORT);
  const out = resolve(input.out);
  const releaseDir = resolve(input.releaseDir ?? `${out}-release`);
  checkOutputDir(input.out, '--out');
  checkOutputDir(input.releaseDir ?? `${input.out}-release`, '--release');
  const options = resolveTrainInput(
    input,
    input.teacher === undefined ? undefined : await teacherLabels(input, out),
  );
  const runTag = String(process.pid);
  for (const removed of removeStalePartials([out, releaseDir], runTag)) {
    options.onProgress?.({
      phase: 'check',
      done: 0,
      total: 1,
      message: `removed ${removed}, left by an interrupted run`,
    });
  }
  const held: { guard?: ReturnType<typeof guardPartials> } = {};
  const pool: NodeShardPool | undefined = threads > 1 ? nodeShardPool(threads) : undefined;
  const onProgress = options.onProgress;
  try {
    return await runTraining(
      {
        ...options,
        onProgress: (p) => {
          held.guard?.check();
          onProgress?.(p);
        },
      },
      {
        openPackage: (dir) => loadNodePackage(dir, { threads: 1 }),
        runTag,
        wasmGraphs: true,
        convertRuntime: nodeBuildRuntime,
        engineName: 'onnxruntime-node',
        shardPool: pool,
        writing: (partials) => (held.guard = guardPartials(partials)),
      },
    );
  } finally {
    held.guard?.dispose();
    await pool?.close();
  }
}
