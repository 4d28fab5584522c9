/**
 * The messages between the service worker's System One route (src/sw/route.ts) and the page
 * that answers for it (src/client/service-worker.ts): names and shapes only, no behaviour. The
 * protocol itself is described at the top of src/sw/route.ts.
 */
import type { ModelCard } from '../protocol/types.js';
import type { WireError } from './error-wire.js';

export const RELAY = {
  ready: 'clef-web:systemone-ready',
  gone: 'clef-web:systemone-gone',
  ping: 'clef-web:systemone-ping',
  decide: 'clef-web:systemone-decide',
  models: 'clef-web:systemone-models',
  cancel: 'cancel',
} as const;

export type RelayRequest =
  | { type: typeof RELAY.ping }
  | { type: typeof RELAY.decide; body: unknown }
  | { type: typeof RELAY.models };

export type RelayReply =
  | { ok: true; ready: boolean }
  | { ok: true; json: string }
  | { ok: true; models: ModelCard[] }
  | { ok: false; error: WireError };
