/**
 * `clef-web/sw`: the service-worker side of the same-origin System One routes. A service worker
 * script calls `createSystemOneRoute(self)` and hands it its fetch and message events; pages
 * answer the decisions it relays with `registerSystemOneRoute(clef)` from `clef-web`.
 * (`clef-web/sw-routes.js` is the same code as a classic script for `importScripts`.)
 */
export {
  createSystemOneRoute,
  matchesSystemOneRoute,
  systemOneRoutePath,
  type SystemOneRoute,
  type SystemOneRouteOptions,
} from './route.js';
export { RELAY, type RelayReply, type RelayRequest } from '../wire/relay.js';
