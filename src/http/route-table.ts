/**
 * The HTTP routes of system-one.md and the OpenAI dialects, as data: one table of method and
 * path → what answers it, read by `handleRoute` (routes.ts, which `clef.fetch` and
 * `clef-web serve` call), the service worker's `matches` (src/sw/route.ts) and the Node
 * server's `Allow` header and error dialects (src/node/serve). A route is added here, once.
 *
 * | method | path                                            | kind                | errors in            |
 * |--------|-------------------------------------------------|---------------------|----------------------|
 * | POST   | `/v1/systemone`                                 | `systemone`         | System One           |
 * | POST   | `/v1/decisions`                                 | `decisions`         | OpenAI Decisions if the body is one, else System One |
 * | POST   | `/v1/chat/completions`                          | `chat-completions`  | OpenAI               |
 * | GET    | `/v1/models`                                    | `models`            | System One           |
 * | POST   | `/v1/clef/calibrated`                           | `calibrated`        | System One (route-calibrated.ts) |
 * | POST   | `/client/v4/accounts/<a>/ai/run/<model>`        | `workers-ai`        | Workers AI envelope  |
 *
 * `<model>` is literal or percent-encoded (workers-ai-path.ts); a path of that shape naming a
 * model outside `@cf/cloudflare/` is still the Workers AI dialect's (a 404 in its envelope).
 */
import { parseWorkersAiPath } from './workers-ai-path.js';

export type RouteDialect = 'system-one' | 'workers-ai' | 'openai' | 'decisions';

export type RouteKind =
  'systemone' | 'decisions' | 'chat-completions' | 'models' | 'calibrated' | 'workers-ai';

export interface RouteEntry {
  readonly kind: RouteKind;
  /** The one method it answers (a GET route answers HEAD as GET on the Node server). */
  readonly method: 'GET' | 'POST';
  /** An exact path, or the shape of a family of paths. */
  readonly path: string | RegExp;
  /** The dialect of its error bodies. */
  readonly dialect: RouteDialect;
  /** How a listing of the routes names it (the path, or the shape a client fills in). */
  readonly shown: string;
}

/** Any `/ai/run/...` path: the Workers AI dialect, served model or not. */
const WORKERS_AI_SHAPE = /^\/client\/v4\/accounts\/[^/]+\/ai\/run\/./;

function exact(kind: RouteKind, method: 'GET' | 'POST', path: string, dialect: RouteDialect) {
  return { kind, method, path, dialect, shown: path };
}

export const ROUTES: readonly RouteEntry[] = Object.freeze([
  exact('systemone', 'POST', '/v1/systemone', 'system-one'),
  exact('decisions', 'POST', '/v1/decisions', 'decisions'),
  exact('chat-completions', 'POST', '/v1/chat/completions', 'openai'),
  exact('models', 'GET', '/v1/models', 'system-one'),
  exact('calibrated', 'POST', '/v1/clef/calibrated', 'system-one'),
  {
    kind: 'workers-ai',
    method: 'POST',
    path: WORKERS_AI_SHAPE,
    dialect: 'workers-ai',
    shown: '/client/v4/accounts/<any>/ai/run/@cf/cloudflare/<model>',
  },
]);

/**
 * clef-web's own namespace (`/v1/clef/calibrated`, ...): the service worker answers all of it,
 * so a path there it does not serve is a JSON 404, never the page server's answer.
 */
const CLEF_NAMESPACE = /^\/v1\/clef(?:\/|$)/;

/** The route a URL path belongs to, or undefined. */
export function findRoute(pathname: string): RouteEntry | undefined {
  return ROUTES.find((r) =>
    typeof r.path === 'string' ? r.path === pathname : r.path.test(pathname),
  );
}

/**
 * The dialect of a path's error bodies: `decisions` is `/v1/decisions`, where only the body
 * says whether the client speaks System One or OpenAI.
 */
export function routeDialect(pathname: string): RouteDialect {
  return findRoute(pathname)?.dialect ?? 'system-one';
}

/** The routes as a line a person reads: `POST /v1/systemone, ...; GET /v1/models`. */
export function routeListing(): string {
  const by = (method: string) =>
    `${method} ${ROUTES.filter((r) => r.method === method)
      .map((r) => r.shown)
      .join(', ')}`;
  return `${by('POST')}; ${by('GET')}`;
}

/** The `Allow` header of a 405 on `path`. */
export function allowedMethods(pathname: string): string {
  return findRoute(pathname)?.method === 'GET' ? 'GET, HEAD' : 'POST';
}

/**
 * Whether a service worker answers `pathname`: a route of the table (the Workers AI one only
 * for a model it can name), or anything under clef-web's own namespace.
 */
export function isServedPath(pathname: string): boolean {
  const route = findRoute(pathname);
  if (route?.kind === 'workers-ai') return parseWorkersAiPath(pathname) !== null;
  return route !== undefined || CLEF_NAMESPACE.test(pathname);
}
