/**
 * One engine of `clef-web serve --workers N`, in a worker thread: it loads the package and
 * decides the bodies the pool (engine-pool.ts) sends it, one at a time. Tokenizing and the model
 * run here, so the server's event loop never waits for them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CalibrationAsk } from '../../calibrate/index.js';
import { toWireError } from '../../wire/wire.js';
import { loadNodePackage, type NodeEngineOptions } from '../engine.js';
import type { PoolReply, PoolRequest } from './engine-pool.js';

const port = parentPort;
if (port === null) throw new Error('engine-worker.ts runs as a worker thread only');
const { dir, options } = workerData as { dir: string; options: NodeEngineOptions };

const post = (message: PoolReply) => port.postMessage(message);

try {
  const engine = await loadNodePackage(dir, options);
  port.on('message', (m: PoolRequest | { type: 'dispose' }) => {
    if (m.type === 'dispose') {
      void engine.dispose().then(() => port.close());
      return;
    }
    const ask: CalibrationAsk | undefined = m.ask;
    const run =
      ask !== undefined ? engine.decide(m.body, { calibration: ask }) : engine.decide(m.body);
    run.then(
      (d) => post({ type: 'answer', id: m.id, json: d.json, calibrated: d.calibrated }),
      (e: unknown) => post({ type: 'failed', id: m.id, error: toWireError(e) }),
    );
  });
  const { model, variant } = engine.manifest;
  post({
    type: 'ready',
    manifest: engine.manifest,
    cards: engine.models.map((name) => ({
      name,
      description: `${model.name} (${variant.dtype}) served by clef-web on onnxruntime-node`,
      release_date: model.releaseDate,
    })),
  });
} catch (e) {
  post({ type: 'load-failed', error: toWireError(e) });
}
