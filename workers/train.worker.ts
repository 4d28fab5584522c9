/// <reference lib="webworker" />
// The playground's train worker: the pipeline `clef-web train` runs (src/build/train/pipeline.ts)
// on files held in memory (src/train-web/memory-files.ts, handed to the build tools below), with
// the package verified by the page's own engine through `host`. Nothing is fetched and nothing
// leaves the page.
import * as Comlink from 'comlink';
import { inspectTrainInput, pickedInput, resolveTrainInput } from '../src/build/train/input.js';
import { runTraining } from '../src/build/train/pipeline.js';
import { useFiles } from '../src/build/host/files.js';
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
    try {
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
      });
      return {
        ok: true,
        result,
        files: Object.fromEntries(filesUnder(OUT)),
        release: Object.fromEntries(filesUnder(`${OUT}-release`)),
      };
    } catch (e) {
      return { ok: false, failure: failure(e) };
    } finally {
      clearFiles();
    }
  },
};

Comlink.expose(api);
