/**
 * Who may reach `clef-web serve`: the Host names it answers to (the DNS-rebinding defence) and
 * the API-key rules (a non-loopback bind needs a key, unless the caller explicitly opts out).
 */
import { hostname, networkInterfaces } from 'node:os';
import { isUsableApiKey } from '../../http/bearer.js';
import { isLoopbackHost } from './refusals.js';

/** `startServer` refused its options (a non-loopback bind without a key, an unusable key). */
export class ServeConfigError extends Error {
  readonly code: 'insecure_bind' | 'bad_api_key';
  constructor(code: 'insecure_bind' | 'bad_api_key', message: string) {
    super(message);
    this.name = 'ServeConfigError';
    this.code = code;
  }
}

/** Refuses options that would expose the server unsafely (see ServeConfigError). */
export function checkAccessOptions(
  host: string,
  options: { apiKey?: string; insecureNoAuth?: boolean },
): void {
  const apiKey = options.apiKey;
  if (apiKey !== undefined && !isUsableApiKey(apiKey)) {
    throw new ServeConfigError(
      'bad_api_key',
      'The API key must be 1 to 4096 visible ASCII characters (no spaces)',
    );
  }
  if (apiKey === undefined && !isLoopbackHost(host) && options.insecureNoAuth !== true) {
    throw new ServeConfigError(
      'insecure_bind',
      `Refusing to bind ${host} without an API key: other machines could use this server. ` +
        'Set one with --api-key <key> or the CLEF_WEB_API_KEY environment variable (clients ' +
        'send it as Authorization: Bearer <key>), or pass --insecure-no-auth to serve anyone ' +
        'who can connect.',
    );
  }
}

/** Host names (with port) a request may address: the DNS-rebinding defence. */
export function allowedHostHeaders(
  boundHost: string,
  port: number,
  extra: string[] = [],
): string[] {
  const names = new Set<string>(['localhost', '127.0.0.1', '[::1]']);
  const bracket = (h: string) => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);
  const wildcard = boundHost === '0.0.0.0' || boundHost === '::';
  if (!wildcard) names.add(bracket(boundHost));
  if (!isLoopbackHost(boundHost)) {
    // Bound to the network: the machine's own names and addresses address it too.
    names.add(hostname());
    if (wildcard) {
      for (const list of Object.values(networkInterfaces())) {
        for (const a of list ?? []) names.add(bracket(a.address));
      }
    }
  }
  for (const h of extra) names.add(bracket(h));
  return [...names].map((n) => `${n.toLowerCase()}:${port}`);
}
