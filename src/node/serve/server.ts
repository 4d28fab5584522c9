/**
 * `clef-web serve`'s HTTP server: the System One routes of system-one.md over node:http, answered
 * by the same `handleRoute` the page API and the service worker use.
 *
 * What it defends (see docs/interop.md): it binds loopback unless told otherwise; it sends no
 * CORS headers and refuses requests that carry another origin's `Origin`, so a web page can
 * neither read its answers nor spend its CPU; it refuses a `Host` other than the address it
 * serves (DNS rebinding); it caps body size, queued requests and the time a client may take to
 * send its request. Decisions start fairly between client addresses (src/core/queue.ts), as many
 * at once as the engine has lanes (workers).
 *
 * One request passes the gate (request-gate.ts), has its body read (request-body.ts), and is
 * routed in an engine worker or here (dispatch.ts); send.ts writes the answer.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { checkBearer } from '../../http/bearer.js';
import { allowedHostHeaders, checkAccessOptions } from './access.js';
import { LaneQueue } from '../../core/queue.js';
import type { NodeEngine } from '../engine.js';
import { nodeModelCards } from './model-cards.js';

export { allowedHostHeaders, ServeConfigError } from './access.js';
import { refusalBody } from './refusals.js';
import {
  answerAndClose,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  limitConnectionsPerClient,
} from './connections.js';
import {
  routeHere,
  routeInEngine,
  type DispatchState,
  type Routed,
  type ServeEngine,
} from './dispatch.js';
import { targetOf } from './request-target.js';
import { passGate, type Gate } from './request-gate.js';
import { receiveBody, type BodyLimits } from './request-body.js';
import { refuse } from './send.js';

export type { ServeEngine } from './dispatch.js';

/** A loaded package as the server's engine; its model cards list the name, then the aliases. */
export function nodeEngineBackend(engine: NodeEngine): ServeEngine {
  const cards = nodeModelCards(engine);
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
   * answered in this order (between clients the queue is fair, src/core/queue.ts).
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
interface ServerState extends DispatchState {
  readonly options: ServeOptions;
  readonly limits: BodyLimits;
  /** Set once the server is bound (the names depend on the port). */
  gate: Gate;
  received: number;
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
