/**
 * One engine of `clef-web serve --workers N`, in a worker thread: it loads the package and
 * decides the bodies the pool (engine-pool.ts) sends it, one at a time. Tokenizing and the model
 * run here, so the server's event loop never waits for them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CalibrationAsk } from '../../calibrate/index.js';
import { handleRoute } from '../../http/routes.js';
import type { ModelCard } from '../../protocol/types.js';
import { toWireError } from '../../wire/wire.js';
import { loadNodePackage, type NodeEngine, type NodeEngineOptions } from '../engine.js';
import type { PoolReply, PoolRequest } from './engine-pool.js';
import { escapeLoneSurrogates } from '../../http/json-text.js';

const port = parentPort;
if (port === null) throw new Error('engine-worker.ts runs as a worker thread only');
const { dir, options } = workerData as { dir: string; options: NodeEngineOptions };

const post = (message: PoolReply, transfer: ArrayBuffer[] = []) =>
  port.postMessage(message, transfer);

/** The request as handleRoute answers it in `clef-web serve`'s own process (server.ts). */
async function route(
  engine: NodeEngine,
  cards: ModelCard[],
  m: Extract<PoolRequest, { type: 'route' }>,
): Promise<void> {
  const request = new Request(m.url, {
    method: m.method,
    headers: { 'content-type': m.contentType },
    ...(m.body ? { body: m.body } : {}),
  });
  // As server.ts's queue does: UTF-8 cannot carry a lone surrogate the engine echoes.
  const escaped = <T extends { json: string }>(d: T) => ({
    ...d,
    json: escapeLoneSurrogates(d.json),
  });
  const response = await handleRoute(request, {
    decide: (b) => engine.decide(b).then(escaped),
    models: () => cards,
    decideCalibrated: (b, ask) => engine.decide(b, { calibration: ask }).then(escaped),
  });
  const body = await response.arrayBuffer();
  const headers: Array<[string, string]> = [];
  response.headers.forEach((value, name) => headers.push([name, value]));
  post({ type: 'routed', id: m.id, status: response.status, headers, body }, [body]);
}

try {
  const engine = await loadNodePackage(dir, options);
  const { model, variant } = engine.manifest;
  const cards = engine.models.map((name) => ({
    name,
    description: `${model.name} (${variant.dtype}) served by clef-web on onnxruntime-node`,
    release_date: model.releaseDate,
  }));
  port.on('message', (m: PoolRequest | { type: 'dispose' }) => {
    if (m.type === 'dispose') {
      void engine.dispose().then(() => port.close());
      return;
    }
    if (m.type === 'route') {
      route(engine, cards, m).catch((e: unknown) =>
        post({ type: 'failed', id: m.id, error: toWireError(e) }),
      );
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
  post({ type: 'ready', manifest: engine.manifest, cards });
} catch (e) {
  post({ type: 'load-failed', error: toWireError(e) });
}
