/**
 * Where a request past the gate goes in `clef-web serve`: a POST into an engine worker
 * (`ServeEngine.route`), anything else through `handleRoute` on this thread. Either way a
 * decision waits in the fair queue (src/core/queue.ts), in its client address's line, and a full
 * queue answers 503 overloaded with `Retry-After`. It is the only place a request waits: the queue
 * starts no more decisions than the engine has lanes, so the engine takes each one at once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleRoute } from '../../http/routes.js';
import { overloadedError } from '../../protocol/errors.js';
import { AbortedError } from '../../wire/errors.js';
import { QueueFullError, type LaneQueue } from '../../core/queue.js';
import type { RouteReply, RouteRequest } from './route-job.js';
import { refuse, RETRY_AFTER_S, sendRouted } from './send.js';
import type { CalibratedDecision, CalibrationAsk } from '../../calibrate/index.js';
import type { ModelCard } from '../../protocol/types.js';

/** What the server needs from an engine (a NodeEngine through `nodeEngineBackend`, or a test's). */
export interface ServeEngine {
  /** Decisions it can run at once (default 1): an engine pool's worker count. */
  readonly lanes?: number;
  decide(body: unknown): Promise<{ json: string }>;
  modelCards(): ModelCard[];
  /** Optional: serves `/v1/clef/calibrated` (the body plus the calibrated extension). */
  decideCalibrated?(
    body: unknown,
    ask: CalibrationAsk,
  ): Promise<{ json: string; calibrated?: CalibratedDecision }>;
  /**
   * Optional: routes a whole POST itself (an engine pool does it in a worker, so the body's JSON
   * is parsed off the HTTP thread). Without it, the server runs handleRoute and calls `decide`.
   */
  route?(request: RouteRequest): Promise<RouteReply>;
}

/** What routing a request needs of the server it arrived at. */
export interface DispatchState {
  readonly engine: ServeEngine;
  readonly queue: LaneQueue;
  /** The server is closing: answers ask the client to close the connection. */
  closing: boolean;
  /** The next request's place in the engine queue (ResponseLogEntry.job). */
  nextJob: number;
}

/** Runs `work` in the engine's queue, in `client`'s line, as the request `ticket` stands for. */
async function queued<T extends { json: string }>(
  state: DispatchState,
  work: () => Promise<T>,
  signal: AbortSignal | undefined,
  ticket: { job: number },
  client: string,
): Promise<T> {
  const { queue } = state;
  const id = state.nextJob++;
  ticket.job = id;
  const onAbort = () => queue.cancel(id);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await queue.push(id, work, client);
  } catch (e) {
    if (e instanceof QueueFullError) throw overloadedError(e.message);
    throw e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** A request past the gate and its body, on its way to the routes. */
export interface Routed {
  method: string;
  url: URL;
  path: string;
  body: Buffer | undefined;
  /** Fires if the client leaves before its answer: a queued decision is then dropped. */
  signal: AbortSignal;
  ticket: { job: number };
  /** Whose line in the decision queue it waits in (src/core/queue.ts): the client's address. */
  client: string;
}

/** Routes a POST in the engine's worker (ServeEngine.route), in the client's line like any decision. */
export async function routeInEngine(
  state: DispatchState,
  req: IncomingMessage,
  res: ServerResponse,
  r: Routed,
  route: (request: RouteRequest) => Promise<RouteReply>,
): Promise<void> {
  const { queue } = state;
  const id = state.nextJob++;
  r.ticket.job = id;
  const onAbort = () => queue.cancel(id);
  r.signal.addEventListener('abort', onAbort, { once: true });
  let reply: RouteReply;
  try {
    // A copy: a small Buffer may share node's allocation pool, which must not be transferred.
    const bytes = r.body?.buffer.slice(r.body.byteOffset, r.body.byteOffset + r.body.length);
    const contentType = String(req.headers['content-type'] ?? 'application/json');
    const job: RouteRequest = { method: r.method, url: r.url.href, contentType };
    if (bytes !== undefined) job.body = bytes as ArrayBuffer;
    reply = await queue.push(id, () => route(job), r.client);
  } catch (e) {
    if (e instanceof AbortedError) return; // nobody is listening any more
    if (e instanceof QueueFullError) {
      res.setHeader('retry-after', String(RETRY_AFTER_S));
      return refuse(res, r.path, { status: 503, message: e.message });
    }
    const message = `Internal error: ${(e as Error).message}`;
    return refuse(res, r.path, { status: 500, message });
  } finally {
    r.signal.removeEventListener('abort', onAbort);
  }
  const headers = Object.fromEntries(reply.headers);
  sendRouted(res, r.path, { ...reply, headers, body: Buffer.from(reply.body) }, state.closing);
}

/** Routes a request on this thread with handleRoute, its decisions through the queue. */
export async function routeHere(
  state: DispatchState,
  req: IncomingMessage,
  res: ServerResponse,
  r: Routed,
): Promise<void> {
  const { engine } = state;
  const request = new Request(r.url, {
    method: r.method,
    headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') },
    // A Buffer views an ordinary (never shared) ArrayBuffer, so it is a valid BodyInit.
    ...(r.body !== undefined ? { body: r.body as Uint8Array<ArrayBuffer> } : {}),
    signal: r.signal,
  });
  let response: Response;
  try {
    const calibrated = engine.decideCalibrated?.bind(engine);
    response = await handleRoute(request, {
      decide: (b, signal) => queued(state, () => engine.decide(b), signal, r.ticket, r.client),
      models: () => engine.modelCards(),
      ...(calibrated
        ? {
            decideCalibrated: (b, ask, signal) =>
              queued(state, () => calibrated(b, ask), signal, r.ticket, r.client),
          }
        : {}),
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') return; // nobody is listening any more
    throw e;
  }
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  sendRouted(res, r.path, { status: response.status, headers, body }, state.closing);
}
