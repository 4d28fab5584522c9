/// <reference lib="webworker" />
// The playground's train worker: the pipeline `clef-web train` runs (src/build/train/pipeline.ts)
// on files held in memory (src/train-web/memory-files.ts, handed to the build tools below), with
// the package verified by the page's own engine through `host`. The fits run on a pool of the
// thread workers the page started (train-thread.worker.ts, a port each) where it started two or
// more, as `clef-web train --threads N` runs them on worker threads: the same bytes either way.
// Nothing is fetched and nothing leaves the page.
import * as Comlink from 'comlink';
import { inspectTrainInput, pickedInput, resolveTrainInput } from '../src/build/train/input.js';
import { runTraining } from '../src/build/train/pipeline.js';
import { useFiles } from '../src/build/host/files.js';
import { TrainError } from '../src/build/train/errors.js';
import { threadPool, type TrainThreadPool } from '../src/build/train/thread-pool.js';
import type { ShardReply, StartThread } from '../src/build/train/thread-wire.js';
import { clearFiles, filesUnder, memoryFiles } from '../src/train-web/memory-files.js';
import type {
  PageTrainFailure,
  TrainProgress,
  TrainWorkerApi,
} from '../src/train-web/train-wire.js';

const OUT = '/train/package';

useFiles(memoryFiles);

/** A refusal or failure as the page shows it: the code and message `clef-web train` prints. */
function failure(e: unknown): PageTrainFailure {
  const error = e as Error & { code?: unknown; details?: unknown };
  return {
    code: typeof error.code === 'string' ? error.code : 'train_failed',
    message: error.message,
    ...(error.details === undefined ? {} : { details: error.details }),
  };
}

/**
 * The pool over the thread workers the page started (one port each), or none for fewer than two.
 * Their shared buffers need a cross-origin-isolated page (COOP/COEP), as onnxruntime's threaded
 * WASM does.
 */
function poolFor(ports: readonly MessagePort[] | undefined): TrainThreadPool | undefined {
  if (ports === undefined || ports.length < 2) return undefined;
  if (!self.crossOriginIsolated) {
    throw new TrainError(
      'train_options_invalid',
      `${ports.length} threads need a cross-origin-isolated page (served with COOP/COEP, as the ` +
        'clef-web/vite plugin and `clef-web static` serve it); set Threads to 1',
    );
  }
  const free = [...ports];
  // The pool starts a thread at most `ports.length` times: each takes the next port.
  const startThread: StartThread = (events) => {
    const port = free.shift() as MessagePort;
    port.onmessage = (e: MessageEvent<ShardReply>) => events.reply(e.data);
    port.onmessageerror = () => events.error('a message could not be read', {});
    return {
      post: (message) => port.postMessage(message),
      // The page ends the worker itself after the run (an error there ends the run too).
      terminate: async () => {
        port.close();
        events.exit({});
      },
    };
  };
  return threadPool(ports.length, { start: startThread, oneThread: 'set Threads to 1' });
}

const api: TrainWorkerApi = {
  async inspect(file) {
    try {
      return {
        ok: true,
        summary: inspectTrainInput(file.bytes, file.name, {
          question: file.question,
          plain: file.plain,
        }),
      };
    } catch (e) {
      return { ok: false, failure: failure(e) };
    }
  },

  async train(request, onProgress, host) {
    clearFiles();
    let pool: TrainThreadPool | undefined;
    try {
      pool = poolFor(request.threads);
      const options = resolveTrainInput({
        ...pickedInput(request.file),
        out: OUT,
        name: request.name,
        seed: request.seed,
        holdout: request.holdout,
        fidelityRequests: 0,
        onProgress: (p) => void onProgress(p as TrainProgress),
      });
      const result = await runTraining(options, {
        openPackage: async (dir) => {
          await host.open(Object.fromEntries(filesUnder(dir)));
          return {
            decide: async (r) => ({ logits: await host.decide(r) }),
            dispose: () => host.close(),
          };
        },
        runTag: 'page',
        wasmGraphs: false,
        engineName: "the training page's engine, onnxruntime-web",
        shardPool: pool,
      });
      return {
        ok: true,
        result,
        files: Object.fromEntries(filesUnder(OUT)),
        release: Object.fromEntries(filesUnder(`${OUT}-release`)),
        threads: Math.max(1, pool?.running() ?? 1),
      };
    } catch (e) {
      return { ok: false, failure: failure(e) };
    } finally {
      await pool?.close();
      clearFiles();
    }
  },
};

Comlink.expose(api);
