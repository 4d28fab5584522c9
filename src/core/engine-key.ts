/**
 * What names a shared engine (createClef({ shared: true })): every load option, in a fixed
 * order, so tabs asking for the same package (its absolute URL) with the same options reach
 * one SharedWorker and any other ask reaches its own. The page names the worker with it, and
 * the worker checks each tab's load against it.
 */
import type { LoadOptionsWire } from '../wire/wire.js';

export function engineKey(options: LoadOptionsWire): string {
  const entries = Object.entries(options).filter(([, v]) => v !== undefined);
  return JSON.stringify(Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1))));
}
