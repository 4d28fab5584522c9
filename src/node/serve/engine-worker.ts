/**
 * One engine of `clef-web serve --workers N`, in a worker thread: it loads the package and
 * decides the bodies the pool (engine-pool.ts) sends it, one at a time. Tokenizing and the model
 * run here, so the server's event loop never waits for them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CalibrationAsk } from '../../calibrate/index.js';
import { handleRoute } from '../../http/routes.js';
import type { ModelCard } from '../../protocol/types.js';
import { toWireError } from '../../wire/error-wire.js';
import { loadNodePackage, type NodeEngine } from '../engine.js';
import { recordLine } from '../../core/record.js';
import { recordingEngine, type RecordLog } from '../record/log.js';
import { nodeModelCards } from './model-cards.js';
import type { EngineWorkerData, PoolReply, PoolRequest, RecordedReply } from './engine-pool.js';
import { escapeLoneSurrogates } from '../../http/json-text.js';

const port = parentPort;
if (port === null) throw new Error('engine-worker.ts runs as a worker thread only');
const { dir, options, record } = workerData as EngineWorkerData;

const post = (message: PoolReply, transfer: ArrayBuffer[] = []) =>
  port.postMessage(message, transfer);

/** Record lines go to the pool's one log file (engine-pool.ts) and settle once it has synced. */
const waitingRecords = new Map<number, { done: () => void; failed: (e: Error) => void }>();
let nextRecord = 0;
const poolLog: Pick<RecordLog, 'appendLine'> = {
  appendLine: (line) =>
    new Promise<void>((done, failed) => {
      const seq = nextRecord++;
      waitingRecords.set(seq, { done, failed });
      post({ type: 'record', seq, line });
    }),
};

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
  const loaded: NodeEngine = await loadNodePackage(dir, options);
  const engine = record
    ? recordingEngine(
        loaded,
        { append: (r) => poolLog.appendLine(recordLine(r)) },
        { surface: 'serve', requestSha256Only: record.requestSha256Only },
      )
    : loaded;
  const cards = nodeModelCards(engine);
  port.on('message', (m: PoolRequest | RecordedReply | { type: 'dispose' }) => {
    if (m.type === 'recorded') {
      const waiting = waitingRecords.get(m.seq);
      waitingRecords.delete(m.seq);
      if (m.error === undefined) waiting?.done();
      else waiting?.failed(new Error(`the decision record could not be written: ${m.error}`));
      return;
    }
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
