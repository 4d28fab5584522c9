/**
 * `clef-web serve`'s HTTP server: the System One routes of system-one.md over node:http, answered
 * by the same `handleRoute` the page API and the service worker use.
 *
 * What it defends (see docs/interop.md): it binds loopback unless told otherwise; it sends no
 * CORS headers and refuses requests that carry another origin's `Origin`, so a web page can
 * neither read its answers nor spend its CPU; it refuses a `Host` other than the address it
 * serves (DNS rebinding); it caps body size, queued requests and the time a client may take to
 * send its request. Decisions start fairly between client addresses (lanes.ts), as many at once
 * as the engine has lanes (workers).
 * One request passes the gate (request-gate.ts), has its body read (request-body.ts), and is
 * routed in an engine worker or here; send.ts writes the answer.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { checkBearer } from '../../http/bearer.js';
import { allowedHostHeaders, checkAccessOptions } from './access.js';
import { handleRoute } from '../../http/routes.js';
import { AbortedError } from '../../wire/errors.js';
import { LaneQueue, QueueFullError } from './lanes.js';
import type { RouteReply, RouteRequest } from './route-job.js';
import { overloadedError } from '../../protocol/errors.js';
import type { ModelCard } from '../../protocol/types.js';
import type { CalibratedDecision, CalibrationAsk } from '../../calibrate/index.js';
import type { NodeEngine } from '../engine.js';

export { allowedHostHeaders, ServeConfigError } from './access.js';
import { refusalBody } from './refusals.js';
import {
  answerAndClose,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  limitConnectionsPerClient,
} from './connections.js';
import { targetOf } from './request-target.js';
import { passGate, type Gate } from './request-gate.js';
import { receiveBody, type BodyLimits } from './request-body.js';
import { refuse, RETRY_AFTER_S, sendRouted } from './send.js';

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

/** A loaded package as the server's engine; its model cards list the name, then the aliases. */
export function nodeEngineBackend(engine: NodeEngine): ServeEngine {
  const { model, variant } = engine.manifest;
  const cards = engine.models.map((name) => ({
    name,
    description: `${model.name} (${variant.dtype}) served by clef-web on onnxruntime-node`,
    release_date: model.releaseDate,
  }));
  return {
    decide: (body) => engine.decide(body),
    modelCards: () => cards,
    decideCalibrated: (body, ask) => engine.decide(body, { calibration: ask }),
  };
}

export interface ServeOptions {
  /** Address to bind; default 127.0.0.1. Anything but loopback is the caller's explicit choice. */
  host?: string;
  /** Port; default 8787, 0 picks a free one. */
  port?: number;
  /** Largest request body accepted (default 1 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /**
   * Requests waiting for or in the engine (default 128). When full, a request from a client
   * address holding fewer than the largest holder pushes that holder's newest waiting request
   * out (503 overloaded); otherwise the new one gets 503 overloaded.
   */
  maxQueue?: number;
  /**
   * Time a client has to send a request's headers (from opening the connection, or from the
   * previous answer), and then its body (default 30 s); then 408 and the connection closed.
   */
  clientTimeoutMs?: number;
  /** Idle time between two requests on a keep-alive connection before it is closed (5 s). */
  keepAliveTimeoutMs?: number;
  /** Connections one client address may hold (default 256); more are closed on arrival. */
  maxConnectionsPerClient?: number;
  /** Connections in all (default 1024); more are closed on arrival. */
  maxConnections?: number;
  /** Extra `Host` names to accept (a DNS name pointing at a non-loopback bind). */
  allowedHosts?: string[];
  /** Called once per answered request (access log, tests). */
  onResponse?: (entry: ResponseLogEntry) => void;
  /**
   * When set, every request must carry `Authorization: Bearer <apiKey>` (compared in constant
   * time), else 401 in the path's dialect. 1 to 4096 visible ASCII characters.
   */
  apiKey?: string;
  /** Allows a non-loopback `host` without `apiKey` (anyone who can connect is served). */
  insecureNoAuth?: boolean;
}

export interface ResponseLogEntry {
  requestId: string;
  /** Arrival number of the HTTP request, from 1. */
  seq: number;
  /**
   * Place in the engine queue, from 1 (0: never queued): one client address's decisions are
   * answered in this order (between clients the queue is fair, lanes.ts).
   */
  job: number;
  method: string;
  path: string;
  status: number;
  ms: number;
}

export interface RunningServer {
  /** A URL this machine reaches the server at (loopback for a wildcard bind). */
  readonly url: string;
  /** The URL of the address actually bound (`http://0.0.0.0:8787`, `http://[::1]:8787`). */
  readonly boundUrl: string;
  readonly host: string;
  readonly port: number;
  /** Requests waiting for or in the engine. */
  pending(): number;
  /**
   * Stops accepting connections, answers every request already received (queued ones too),
   * closes idle keep-alive connections, and resolves once all connections are gone.
   */
  close(): Promise<void>;
  /** Drops every connection at once (after a grace period ran out). */
  destroy(): void;
}

export const DEFAULT_PORT = 8787;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_QUEUE = 128;
export const DEFAULT_CLIENT_TIMEOUT_MS = 30_000;
/** What every request of one server shares. */
interface ServerState {
  readonly engine: ServeEngine;
  readonly options: ServeOptions;
  readonly limits: BodyLimits;
  readonly queue: LaneQueue;
  /** Set once the server is bound (the names depend on the port). */
  gate: Gate;
  closing: boolean;
  received: number;
  nextJob: number;
}

/** Runs `work` in the engine's queue, in `client`'s line, as the request `ticket` stands for. */
async function queued<T extends { json: string }>(
  state: ServerState,
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
interface Routed {
  method: string;
  url: URL;
  path: string;
  body: Buffer | undefined;
  /** Fires if the client leaves before its answer: a queued decision is then dropped. */
  signal: AbortSignal;
  ticket: { job: number };
  /** Whose line in the decision queue it waits in (lanes.ts): the client's address. */
  client: string;
}

/** Routes a POST in the engine's worker (ServeEngine.route), in the client's line like any decision. */
async function routeInEngine(
  state: ServerState,
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
async function routeHere(
  state: ServerState,
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

/** Reports the answered request to `onResponse` once it is sent. */
function logOnFinish(
  state: ServerState,
  req: IncomingMessage,
  res: ServerResponse,
  entry: { seq: number; path: string; ticket: { job: number } },
): void {
  const started = performance.now();
  res.on('finish', () => {
    const requestId = String(res.getHeader('x-typesafe-request-id') ?? '');
    const ms = Math.round(performance.now() - started);
    const method = req.method ?? '';
    const status = res.statusCode;
    const { seq, path, ticket } = entry;
    state.options.onResponse?.({ requestId, seq, job: ticket.job, method, path, status, ms });
  });
}

/** One request: the gate, the body, then the routes (in the engine's worker or here). */
async function handle(state: ServerState, req: IncomingMessage, res: ServerResponse) {
  const seq = ++state.received;
  const ticket = { job: 0 };
  // Absolute-form targets (`http://host/path`) are read as their path once their host
  // is checked (passGate); anything else is origin-form.
  const target = targetOf(req.url ?? '/');
  const path = target.path;
  logOnFinish(state, req, res, { seq, path, ticket });
  if (state.closing) res.setHeader('connection', 'close');

  const gate = passGate(req, target, state.gate);
  if ('refusal' in gate) {
    if (gate.challenge) res.setHeader('www-authenticate', 'Bearer');
    return refuse(res, path, gate.refusal, true);
  }

  let body: Buffer | undefined;
  // HEAD is answered as GET is, without the body (node:http drops it for HEAD).
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  if (method !== 'GET') {
    const received = await receiveBody(req, res, path, state.limits);
    if (received === 'answered') return;
    body = received;
  }

  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const client = req.socket.remoteAddress ?? '';
  const routed: Routed = { method, url: gate.url, path, body, signal: gone.signal, ticket, client };
  const route = state.engine.route?.bind(state.engine);
  if (route && method === 'POST') return routeInEngine(state, req, res, routed, route);
  return routeHere(state, req, res, routed);
}

/** The HTTP server with its limits and the answers given before a request is routed. */
function createHttpServer(state: ServerState): Server {
  const { options } = state;
  const { clientTimeoutMs, maxBodyBytes } = state.limits;
  const server: Server = createServer(
    {
      requestTimeout: clientTimeoutMs + 1000,
      headersTimeout: clientTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, clientTimeoutMs / 4)),
    },
    (req, res) => {
      handle(state, req, res).catch((e: unknown) => {
        // handleRoute maps engine failures itself: only a bug lands here.
        if (!res.headersSent) {
          refuse(res, '', { status: 500, message: `Internal error: ${(e as Error).message}` });
        } else res.destroy();
      });
    },
  );
  // Slow clients each hold a socket: past these many, new connections are dropped.
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  limitConnectionsPerClient(
    server,
    options.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  );
  // `Expect: 100-continue`: refuse an oversized body before the client sends it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const apiKey = state.gate.apiKey;
    const authorized =
      apiKey === undefined || checkBearer(req.headers.authorization, apiKey) === 'ok';
    if (authorized && Number(req.headers['content-length'] ?? 0) <= maxBodyBytes)
      res.writeContinue();
    server.emit('request', req, res);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const status = timeout ? 408 : 400;
    const text = refusalBody('', {
      status,
      message: timeout ? `The request took over ${clientTimeoutMs} ms` : 'Malformed HTTP request',
    });
    answerAndClose(
      socket,
      `HTTP/1.1 ${status} ${timeout ? 'Request Timeout' : 'Bad Request'}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
        `x-typesafe-request-id: ${randomUUID()}\r\nconnection: close\r\n\r\n${text}`,
    );
  });
  return server;
}

export async function startServer(
  engine: ServeEngine,
  options: ServeOptions = {},
): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  checkAccessOptions(host, options);
  const state: ServerState = {
    engine,
    options,
    limits: {
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      clientTimeoutMs: options.clientTimeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS,
    },
    queue: new LaneQueue(engine.lanes ?? 1, options.maxQueue ?? DEFAULT_MAX_QUEUE),
    gate: { allowedHosts: new Set(), boundUrlHost: '', apiKey: options.apiKey },
    closing: false,
    received: 0,
    nextJob: 1,
  };
  const server = createHttpServer(state);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('unexpected address');
  const port = address.port;
  const boundUrlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const allowedHosts = new Set(allowedHostHeaders(host, port, options.allowedHosts));
  state.gate = { allowedHosts, boundUrlHost, apiKey: options.apiKey };
  const urlHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : boundUrlHost;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    boundUrl: `http://${boundUrlHost}:${port}`,
    host,
    port,
    pending: () => state.queue.size,
    close() {
      closed ??= new Promise<void>((resolve) => {
        state.closing = true;
        // Node closes idle keep-alive connections here; busy ones end after their answer
        // (sent with `connection: close`).
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      return closed;
    },
    destroy() {
      server.closeAllConnections();
    },
  };
}
