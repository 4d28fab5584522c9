/**
 * `clef-web serve`'s HTTP server: the System One routes of system-one.md over node:http, answered
 * by the same `handleRoute` the page API and the service worker use.
 *
 * What it defends (see docs/interop.md): it binds loopback unless told otherwise; it sends no
 * CORS headers and refuses requests that carry another origin's `Origin`, so a web page can
 * neither read its answers nor spend its CPU; it refuses a `Host` other than the address it
 * serves (DNS rebinding); it caps body size, queued requests and the time a client may take to
 * send its request. Decisions start in arrival order, as many at once as the engine has lanes (workers).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { checkBearer } from '../../http/bearer.js';
import { allowedHostHeaders, checkAccessOptions } from './access.js';
import { authenticationError } from '../../http/openai-errors.js';
import { handleRoute } from '../../http/routes.js';
import { allowedMethods, routeDialect } from '../../http/route-table.js';
import { AbortedError } from '../../wire/errors.js';
import { LaneQueue } from './lanes.js';
import type { RouteReply, RouteRequest } from './route-job.js';
import { overloadedError } from '../../protocol/errors.js';
import type { ModelCard } from '../../protocol/types.js';
import type { CalibratedDecision, CalibrationAsk } from '../../calibrate/index.js';
import type { NodeEngine } from '../engine.js';

export { allowedHostHeaders, ServeConfigError } from './access.js';
import { notJsonBodyBytes, refusalBody, type Refusal } from './refusals.js';
import {
  answerAndClose,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
  limitConnectionsPerClient,
} from './connections.js';
import { notJsonContentType, targetOf } from './request-target.js';

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
  /** Requests waiting for or in the engine (default 128); one more gets 503 overloaded. */
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
  /** Place in the engine queue, from 1 (0: never queued): decisions are answered in this order. */
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
/** Seconds a 503 overloaded suggests waiting (clients such as the TypeSafe SDK honour it). */
const RETRY_AFTER_S = 1;

/** Writes a response; headers go through setHeader so the access log can read the id back. */
function send(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer) {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('content-length', body.length);
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-content-type-options', 'nosniff');
  if (!res.hasHeader('x-typesafe-request-id')) res.setHeader('x-typesafe-request-id', randomUUID());
  res.writeHead(status);
  res.end(body);
}

function refuse(res: ServerResponse, path: string, refusal: Refusal, close = false): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (close) headers['connection'] = 'close';
  send(res, refusal.status, headers, Buffer.from(refusalBody(path, refusal)));
}

/** Reads the body; resolves 'too-large' as soon as it passes `limit` bytes. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
    req.once('aborted', () => reject(new AbortedError('The client went away while sending')));
  });
}

export async function startServer(
  engine: ServeEngine,
  options: ServeOptions = {},
): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
  const clientTimeoutMs = options.clientTimeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS;
  const apiKey = options.apiKey;
  checkAccessOptions(host, options);
  const queue = new LaneQueue(engine.lanes ?? 1);
  let allowedHosts = new Set<string>();
  let closing = false;
  let received = 0;
  let nextJob = 1;
  let boundUrlHost = '';

  /** Runs `work` in the engine's queue as the request `ticket` stands for. */
  const queued = async <T extends { json: string }>(
    work: () => Promise<T>,
    signal: AbortSignal | undefined,
    ticket: { job: number },
  ): Promise<T> => {
    if (queue.size >= maxQueue) {
      throw overloadedError(`The server has ${queue.size} requests queued; try again shortly`);
    }
    const id = nextJob++;
    ticket.job = id;
    const onAbort = () => queue.cancel(id);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await queue.push(id, work);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const seq = ++received;
    const started = performance.now();
    const ticket = { job: 0 };
    const rawPath = req.url ?? '/';
    // Absolute-form targets (`http://host/path`) are read as their path once their host
    // is checked below; anything else is origin-form.
    const target = targetOf(rawPath);
    const path = target.path;
    res.on('finish', () => {
      const requestId = String(res.getHeader('x-typesafe-request-id') ?? '');
      const ms = Math.round(performance.now() - started);
      const method = req.method ?? '';
      const status = res.statusCode;
      options.onResponse?.({ requestId, seq, job: ticket.job, method, path, status, ms });
    });
    if (closing) res.setHeader('connection', 'close');

    // Node keeps the first of several Host lines; RFC 9112 §3.2 says refuse such a request
    // (a proxy in front may have read another one).
    const hostLines = req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'host');
    if (hostLines.length > 1) {
      const message = 'The request has more than one Host header';
      return refuse(res, path, { status: 400, message }, true);
    }
    const hostHeader = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts.has(hostHeader)) {
      const message = req.headers.host
        ? `Host ${req.headers.host} is not served here (only ${[...allowedHosts].join(', ')})`
        : 'The request has no Host header';
      return refuse(res, path, { status: req.headers.host ? 421 : 400, message }, true);
    }
    const origin = req.headers.origin;
    const fetchSite = req.headers['sec-fetch-site'];
    if (
      (origin !== undefined && origin !== `http://${hostHeader}`) ||
      (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none')
    ) {
      const message = `Cross-origin requests are refused (Origin ${origin ?? fetchSite}): clef-web serve answers programs, not other sites' pages`;
      return refuse(res, path, { status: 403, message }, true);
    }

    // The API key, before the body is read: a client without it costs no more than its headers.
    if (apiKey !== undefined) {
      const result = checkBearer(req.headers.authorization, apiKey);
      if (result !== 'ok') {
        res.setHeader('www-authenticate', 'Bearer');
        const { message, code } = authenticationError(result);
        return refuse(res, path, { status: 401, message, code }, true);
      }
    }

    // A target that names a host (`//evil.example/...`, `http://evil.example/...`) other than
    // one this server answers to: refused, not routed as if it were ours.
    if (target.host !== undefined && !allowedHosts.has(target.host)) {
      const message = `The request target ${rawPath} names a host this server does not serve`;
      return refuse(res, path, { status: 400, message }, true);
    }
    let url: URL;
    try {
      url = new URL(target.originForm, `http://${boundUrlHost}`);
    } catch {
      return refuse(res, path, { status: 400, message: `Bad request target ${rawPath}` }, true);
    }

    let body: Buffer | undefined;
    // HEAD is answered as GET is, without the body (node:http drops it for HEAD).
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    if (method !== 'GET') {
      const declaredType = notJsonContentType(req.headers['content-type']);
      if (declaredType !== undefined) {
        const message =
          `The body is declared as ${declaredType}; send it as application/json ` +
          `(curl: -H 'content-type: application/json')`;
        return refuse(res, path, { status: 415, message, code: 'unsupported_media_type' }, true);
      }
      const declared = Number(req.headers['content-length'] ?? 0);
      const tooLarge: Refusal = {
        status: 413,
        message: `The request body is larger than this server's limit of ${maxBodyBytes} bytes`,
      };
      // Refused before reading, and the connection closed, so a huge upload costs nothing.
      if (declared > maxBodyBytes) return refuse(res, path, tooLarge, true);
      const bodyTimer = setTimeout(() => {
        if (res.headersSent) return;
        refuse(
          res,
          path,
          { status: 408, message: `The body took over ${clientTimeoutMs} ms` },
          true,
        );
        req.destroy();
      }, clientTimeoutMs);
      try {
        const read = await readBody(req, maxBodyBytes);
        if (read === 'too-large') return refuse(res, path, tooLarge, true);
        body = read;
      } catch {
        return; // the client went away or timed out (answered above)
      } finally {
        clearTimeout(bodyTimer);
      }
      if (res.headersSent) return;
      // Bytes that cannot be JSON text: 400 as system-one.md's "body is not JSON".
      const notJson = notJsonBodyBytes(body);
      if (notJson !== undefined) {
        // Not JSON: on /v1/decisions nothing says it is OpenAI's, so System One answers (as
        // handleRoute does).
        const dialect = routeDialect(path) === 'decisions' ? 'system-one' : undefined;
        const refusal = {
          status: 400,
          message: `Request body is not valid JSON: ${notJson}`,
          code: 'invalid_json',
        };
        send(
          res,
          400,
          { 'content-type': 'application/json' },
          Buffer.from(refusalBody(path, refusal, dialect)),
        );
        return;
      }
    }

    // The Request carries an abort signal that fires if the client leaves before its answer:
    // a queued decision is then dropped instead of run.
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const routeInEngine = engine.route?.bind(engine);
    if (routeInEngine && method === 'POST' && queue.size < maxQueue) {
      // In arrival order like any decision; a full queue falls through to handleRoute below,
      // whose decide answers 503 overloaded in the path's dialect.
      const id = nextJob++;
      ticket.job = id;
      const onAbort = () => queue.cancel(id);
      gone.signal.addEventListener('abort', onAbort, { once: true });
      let reply: RouteReply;
      try {
        // A copy: a small Buffer may share node's allocation pool, which must not be transferred.
        const bytes = body?.buffer.slice(body.byteOffset, body.byteOffset + body.length);
        const contentType = String(req.headers['content-type'] ?? 'application/json');
        const job: RouteRequest = { method, url: url.href, contentType };
        if (bytes !== undefined) job.body = bytes as ArrayBuffer;
        reply = await queue.push(id, () => routeInEngine(job));
      } catch (e) {
        if (e instanceof AbortedError) return; // nobody is listening any more
        const message = `Internal error: ${(e as Error).message}`;
        return refuse(res, path, { status: 500, message });
      } finally {
        gone.signal.removeEventListener('abort', onAbort);
      }
      const headers = Object.fromEntries(reply.headers);
      if (reply.status === 503) headers['retry-after'] = String(RETRY_AFTER_S);
      if (reply.status === 405) headers['allow'] = allowedMethods(path);
      if (closing) headers['connection'] = 'close';
      return send(res, reply.status, headers, Buffer.from(reply.body));
    }
    const request = new Request(url, {
      method,
      headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') },
      // A Buffer views an ordinary (never shared) ArrayBuffer, so it is a valid BodyInit.
      ...(body !== undefined ? { body: body as Uint8Array<ArrayBuffer> } : {}),
      signal: gone.signal,
    });
    let response: Response;
    try {
      const calibrated = engine.decideCalibrated?.bind(engine);
      response = await handleRoute(request, {
        decide: (b, signal) => queued(() => engine.decide(b), signal, ticket),
        models: () => engine.modelCards(),
        ...(calibrated
          ? {
              decideCalibrated: (b, ask, signal) =>
                queued(() => calibrated(b, ask), signal, ticket),
            }
          : {}),
      });
    } catch (e) {
      if ((e as Error).name === 'AbortError') return; // nobody is listening any more
      throw e;
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    if (response.status === 503) headers['retry-after'] = String(RETRY_AFTER_S);
    if (response.status === 405) headers['allow'] = allowedMethods(path);
    if (closing) headers['connection'] = 'close';
    send(res, response.status, headers, bytes);
  }

  const server: Server = createServer(
    {
      requestTimeout: clientTimeoutMs + 1000,
      headersTimeout: clientTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, clientTimeoutMs / 4)),
    },
    (req, res) => {
      handle(req, res).catch((e: unknown) => {
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
  boundUrlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  allowedHosts = new Set(allowedHostHeaders(host, port, options.allowedHosts));
  const urlHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : boundUrlHost;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}`,
    boundUrl: `http://${boundUrlHost}:${port}`,
    host,
    port,
    pending: () => queue.size,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
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
