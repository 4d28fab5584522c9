/**
 * The page's half of the same-origin System One routes: `registerSystemOneRoute(clef)` registers
 * the service worker and answers the decisions it relays with this page's engine, so any System
 * One client on the page (the TypeSafe SDK with `baseURL: location.origin`, plain fetch) is
 * answered in the browser. The protocol is described in sw-routes.ts.
 */
import type { ModelCard } from '../protocol/types.js';
import { DisposedError } from '../wire/errors.js';
import { toWireError } from '../wire/error-wire.js';
import { pageDecide, type Clef } from './clef.js';
import { RELAY, type RelayReply } from '../wire/relay.js';

/** What the route needs of a clef (a `createClef` result fits). */
export interface RouteClef {
  decide: Clef['decide'];
  models: { list(): Promise<{ models: ModelCard[] }> };
}

export interface RegisterSystemOneRouteOptions {
  /** The service worker script (default `/sw.js`). It must call `createSystemOneRoute`. */
  scriptUrl?: string | URL;
  /** Its scope (default: the script's directory). */
  scope?: string;
  /** 'classic' (default) for a bundled script, 'module' for an ES module one. */
  type?: WorkerType;
  /** For tests: the container to use instead of `navigator.serviceWorker`. */
  container?: ServiceWorkerContainer;
}

export interface SystemOneRouteHandle {
  readonly registration: ServiceWorkerRegistration;
  /** Resolves once this page is controlled, so its own fetches reach the routes. */
  readonly controlled: Promise<void>;
  /** Stops answering relayed requests (the service worker stays registered for other pages). */
  stop(): void;
}

/**
 * Routes answering per service-worker container. A page that swaps its model stops one route and
 * registers another; both listen on the same container, and every relay reaches both: the
 * stopped one must then leave it to the live one rather than race it with a 503.
 */
const answeringRoutes = new WeakMap<object, number>();

/** Becomes a 503 `overloaded` at the route, as when no model is loaded. */
const stopped = () => new DisposedError('This page stopped answering System One requests');

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/**
 * Answers one relayed message on its port; false when the message is not a relay request.
 * Exported for tests; `registerSystemOneRoute` wires it to the service worker's messages.
 */
export function answerRelay(
  clef: RouteClef,
  data: unknown,
  port: MessagePort | undefined,
  isAnswering: () => boolean,
): boolean {
  if (!isRecord(data) || port === undefined) return false;
  const reply = (message: RelayReply) => {
    port.postMessage(message);
    port.close();
  };
  const fail = (e: unknown) => reply({ ok: false, error: toWireError(e) });
  switch (data['type']) {
    case RELAY.ping:
      reply({ ok: true, ready: isAnswering() });
      return true;
    case RELAY.models:
      if (!isAnswering()) fail(stopped());
      else
        clef.models.list().then(
          ({ models }) => reply({ ok: true, models }),
          (e: unknown) => fail(e),
        );
      return true;
    case RELAY.decide: {
      if (!isAnswering()) {
        fail(stopped());
        return true;
      }
      const controller = new AbortController();
      port.onmessage = (event: MessageEvent) => {
        if (isRecord(event.data) && event.data['type'] === RELAY.cancel) controller.abort();
      };
      // The exact JSON text goes back: it keeps the request's key order, which a
      // structured-cloned object would not (integer-like keys move first).
      // A createClef clef's own decide, which brings no logits across.
      const inPage = pageDecide(clef);
      const options = { signal: controller.signal };
      (inPage ? inPage(data['body'], options) : clef.decide(data['body'], options)).then(
        (decision) => reply({ ok: true, json: decision.json }),
        (e: unknown) => fail(e),
      );
      return true;
    }
    default:
      return false;
  }
}

/**
 * Registers the service worker that serves `POST /v1/systemone`, `POST /v1/decisions`,
 * `GET /v1/models` and the Workers AI route on this origin, and answers them with `clef`.
 * Throws when service workers are unavailable (they need https or localhost).
 */
export async function registerSystemOneRoute(
  clef: RouteClef,
  options: RegisterSystemOneRouteOptions = {},
): Promise<SystemOneRouteHandle> {
  const container = options.container ?? globalThis.navigator?.serviceWorker;
  if (!container) {
    throw new Error(
      'Service workers are unavailable here: they need a secure context (https or localhost)',
    );
  }
  let answering = true;
  answeringRoutes.set(container, (answeringRoutes.get(container) ?? 0) + 1);
  const onMessage = (event: MessageEvent) => {
    if (!answering && (answeringRoutes.get(container) ?? 0) > 0) return;
    answerRelay(clef, event.data, event.ports[0], () => answering);
  };
  container.addEventListener('message', onMessage);
  container.startMessages();

  const registration = await container.register(String(options.scriptUrl ?? '/sw.js'), {
    type: options.type ?? 'classic',
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
  });
  const announce = (worker: ServiceWorker | null | undefined) =>
    worker?.postMessage({ type: answering ? RELAY.ready : RELAY.gone });
  const active = await container.ready;
  announce(active.active);
  const onControllerChange = () => announce(container.controller);
  container.addEventListener('controllerchange', onControllerChange);

  const controlled = container.controller
    ? Promise.resolve()
    : new Promise<void>((resolve) =>
        container.addEventListener('controllerchange', () => resolve(), { once: true }),
      );

  return {
    registration,
    controlled,
    stop() {
      if (!answering) return;
      answering = false;
      answeringRoutes.set(container, (answeringRoutes.get(container) ?? 1) - 1);
      // The message listener stays: a relay already on its way still gets its (503) answer,
      // unless another route of this page answers it.
      container.removeEventListener('controllerchange', onControllerChange);
      announce(registration.active);
    },
  };
}
