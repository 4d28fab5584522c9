/**
 * The System One routes in a service worker, as functions the worker script calls: which
 * requests are ours, and how one is answered by the engine of a page this origin has open.
 *
 * The service worker parses and answers with `handleRoute` (the same code as `clef.fetch` and
 * `clef-web serve`: lossless parse, exact statuses, bodies and Workers AI envelope); only the
 * decision itself is relayed to a page, because the engine lives in a page's worker.
 *
 * Relay protocol (the page half is service-worker.ts). Every SW → page message travels with a
 * fresh MessageChannel port, and the page answers on that port:
 *   `{type:'clef-web:systemone-ping'}`                 → `{ok:true, ready:boolean}`
 *   `{type:'clef-web:systemone-decide', body}`         → `{ok:true, json}` | `{ok:false, error}`
 *   `{type:'clef-web:systemone-models'}`               → `{ok:true, models}` | `{ok:false, error}`
 * `body` is the request as `parseRequestJson` gave it (Maps keep key order, numbers keep their
 * lexeme; both survive structured cloning); `json` is the response's exact JSON text; `error` a
 * WireError (src/wire/error-wire.ts). The SW may post `{type:'cancel'}` on a decide port when the
 * request is aborted. Pages also announce themselves: `{type:'clef-web:systemone-ready'}` when
 * a model is loaded and `{type:'clef-web:systemone-gone'}` when they stop answering.
 * With no page able to answer, a request gets 503 `overloaded`.
 */
import { overloadedError, internalError, SystemOneError } from '../protocol/errors.js';
import { AbortedError } from '../wire/errors.js';
import { fromWireError } from '../wire/error-wire.js';
import { RELAY, type RelayReply, type RelayRequest } from '../wire/relay.js';
import { handleRoute, type RouteBackend } from '../http/routes.js';
import { jsonResponse } from '../http/route-common.js';
import { isServedPath } from '../http/route-table.js';

export { RELAY, type RelayReply, type RelayRequest } from '../wire/relay.js';

/** What the routes need of a service worker's clients (ServiceWorkerGlobalScope fits). */
export interface SwClientLike {
  readonly id: string;
  postMessage(message: unknown, transfer: Transferable[]): void;
}
export interface SwScopeLike {
  /** This worker's origin (`self.origin`). */
  readonly origin: string;
  readonly clients: {
    get(id: string): Promise<SwClientLike | undefined | null>;
    matchAll(options?: {
      type?: 'window';
      includeUncontrolled?: boolean;
    }): Promise<ReadonlyArray<SwClientLike>>;
  };
}
export interface SwFetchEventLike {
  readonly request: Request;
  readonly clientId?: string;
  readonly resultingClientId?: string;
}
export interface SwMessageEventLike {
  readonly data: unknown;
  readonly source: unknown;
}

export interface SystemOneRouteOptions {
  /** A path prefix the routes live under (`/app` serves `/app/v1/systemone`); default none. */
  basePath?: string;
  /** How long a page that never announced itself has to answer a ping (default 1000 ms). */
  probeTimeoutMs?: number;
  /** How often a page deciding a request is checked to be still open (default 2000 ms). */
  livenessIntervalMs?: number;
}

export interface SystemOneRoute {
  /** True for the requests this route answers: call `respond` for those. */
  matches(request: Request): boolean;
  /** Answers a matching request; never rejects except when the request was aborted. */
  respond(event: SwFetchEventLike): Promise<Response>;
  /** Feed it every `message` event; true when the message was one of ours. */
  onMessage(event: SwMessageEventLike): boolean;
}

/**
 * The route path of a URL path under `basePath`, or null when the worker does not answer it
 * (`isServedPath`: a route of src/http/route-table.ts, or clef-web's own `/v1/clef/`).
 */
export function systemOneRoutePath(pathname: string, basePath = ''): string | null {
  const base = basePath.replace(/\/+$/, '');
  if (base && !pathname.startsWith(`${base}/`)) return null;
  const path = pathname.slice(base.length);
  return isServedPath(path) ? path : null;
}

/** True for a request to this origin's System One routes. */
export function matchesSystemOneRoute(request: Request, origin: string, basePath = ''): boolean {
  const url = new URL(request.url);
  return url.origin === origin && systemOneRoutePath(url.pathname, basePath) !== null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** What the relay keeps between requests: the scope and which pages said they have a model. */
interface Relay {
  readonly scope: SwScopeLike;
  readonly probeTimeoutMs: number;
  readonly livenessIntervalMs: number;
  /** Pages that said they have a model, by client id, with when they said it. */
  readonly ready: Map<string, number>;
}

/** Sends one relay message; resolves to the page's reply, or null if it timed out. */
function ask(
  relay: Relay,
  client: SwClientLike,
  message: RelayRequest,
  { timeoutMs, signal }: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<RelayReply | null> {
  const channel = new MessageChannel();
  return new Promise<RelayReply | null>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let liveness: ReturnType<typeof setInterval> | undefined;
    const done = () => {
      clearTimeout(timer);
      clearInterval(liveness);
      signal?.removeEventListener('abort', onAbort);
      channel.port1.close();
    };
    const onAbort = () => {
      channel.port1.postMessage({ type: RELAY.cancel });
      done();
      reject(new AbortedError());
    };
    channel.port1.onmessage = (event: MessageEvent) => {
      done();
      resolve(event.data as RelayReply);
    };
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        done();
        resolve(null);
      }, timeoutMs);
    } else {
      // A decision may take minutes: instead of a deadline, check the page is still open.
      liveness = setInterval(() => {
        void relay.scope.clients.get(client.id).then((c) => {
          if (c) return;
          done();
          relay.ready.delete(client.id);
          reject(overloadedError('The page that was deciding this request was closed'));
        });
      }, relay.livenessIntervalMs);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    client.postMessage(message, [channel.port2]);
  });
}

/** A page with a loaded model: the requesting page first, then announced ones, then probes. */
async function pickClient(
  relay: Relay,
  preferredId: string | undefined,
): Promise<SwClientLike | null> {
  const { ready } = relay;
  const all = await relay.scope.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = new Set(all.map((c) => c.id));
  for (const id of ready.keys()) if (!open.has(id)) ready.delete(id);
  const preferredFirst = (a: SwClientLike, b: SwClientLike) =>
    Number(b.id === preferredId) - Number(a.id === preferredId);
  const announced = all
    .filter((c) => ready.has(c.id))
    .sort((a, b) => preferredFirst(a, b) || ready.get(b.id)! - ready.get(a.id)!);
  if (announced[0]) return announced[0];
  const ordered = [...all].sort(preferredFirst);
  // Nothing announced (a restarted service worker forgets): ask every page at once.
  const replies = await Promise.all(
    ordered.map((c) => ask(relay, c, { type: RELAY.ping }, { timeoutMs: relay.probeTimeoutMs })),
  );
  const index = replies.findIndex((r) => r?.ok === true && 'ready' in r && r.ready);
  if (index < 0) return null;
  const client = ordered[index]!;
  ready.set(client.id, Date.now());
  return client;
}

const noPage = () =>
  overloadedError(
    'No page with a loaded model is open: open the app and wait for its model to load',
  );

/** The page that answers a request, and its reply to `message` (a failure it sent, thrown). */
async function relayed(
  relay: Relay,
  preferredId: string | undefined,
  message: RelayRequest,
  signal?: AbortSignal,
): Promise<RelayReply | null> {
  const client = await pickClient(relay, preferredId);
  if (!client) throw noPage();
  const reply = await ask(relay, client, message, signal ? { signal } : {});
  if (reply?.ok === false) throw fromWireError(reply.error);
  return reply;
}

const unexpectedReply = () =>
  internalError('The page answered the relay with something unexpected');

/** handleRoute's backend for one request: decisions and models come from a page. */
function backendFor(relay: Relay, preferredId: string | undefined): RouteBackend {
  return {
    async decide(body, signal) {
      const reply = await relayed(relay, preferredId, { type: RELAY.decide, body }, signal);
      if (reply && 'json' in reply && typeof reply.json === 'string') return { json: reply.json };
      throw unexpectedReply();
    },
    async models() {
      const reply = await relayed(relay, preferredId, { type: RELAY.models });
      if (reply && 'models' in reply && Array.isArray(reply.models)) return reply.models;
      throw unexpectedReply();
    },
  };
}

/** The request with its path made the route's (`basePath` taken off). */
async function routedRequest(request: Request, basePath: string): Promise<Request> {
  if (!basePath) return request;
  const url = new URL(request.url);
  url.pathname = systemOneRoutePath(url.pathname, basePath) ?? url.pathname;
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  return new Request(url, {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    ...(hasBody ? { body: await request.arrayBuffer() } : {}),
  });
}

/** Answers a matching request; rejects only when it was aborted (a network error then). */
async function respond(relay: Relay, basePath: string, event: SwFetchEventLike): Promise<Response> {
  const preferred = event.clientId || event.resultingClientId || undefined;
  try {
    return await handleRoute(
      await routedRequest(event.request, basePath),
      backendFor(relay, preferred),
    );
  } catch (e) {
    if (isRecord(e) && e['name'] === 'AbortError') return Response.error();
    // The models route lets its backend's failure through: answer it the contract's way.
    const error =
      e instanceof SystemOneError ? e : internalError(`The service worker failed: ${String(e)}`);
    return jsonResponse(error.status, JSON.stringify(error.body));
  }
}

/** A page's announcement (ready, gone); false for a message that is not one. */
function onAnnouncement(relay: Relay, event: SwMessageEventLike): boolean {
  const data = event.data;
  const source = event.source;
  if (!isRecord(data) || !isRecord(source) || typeof source['id'] !== 'string') return false;
  if (data['type'] === RELAY.ready) relay.ready.set(source['id'], Date.now());
  else if (data['type'] === RELAY.gone) relay.ready.delete(source['id']);
  else return false;
  return true;
}

export function createSystemOneRoute(
  scope: SwScopeLike,
  options: SystemOneRouteOptions = {},
): SystemOneRoute {
  const basePath = options.basePath ?? '';
  const relay: Relay = {
    scope,
    probeTimeoutMs: options.probeTimeoutMs ?? 1000,
    livenessIntervalMs: options.livenessIntervalMs ?? 2000,
    ready: new Map(),
  };
  return {
    matches: (request) => matchesSystemOneRoute(request, scope.origin, basePath),
    respond: (event) => respond(relay, basePath, event),
    onMessage: (event) => onAnnouncement(relay, event),
  };
}
