/**
 * What a request to `clef-web serve` must pass before its body is read: one Host line naming
 * this server (the DNS-rebinding defence), no other site's Origin, the API key when one is set,
 * and a request target naming no other host. A refused request costs no more than its headers.
 */
import type { IncomingMessage } from 'node:http';
import { checkBearer } from '../../http/bearer.js';
import { authenticationError } from '../../http/openai-errors.js';
import type { Refusal } from './refusals.js';
import type { Target } from './request-target.js';

export interface Gate {
  /** `host:port` names the server answers to, lower case. */
  readonly allowedHosts: ReadonlySet<string>;
  /** The bound address as a URL host (`127.0.0.1`, `[::1]`). */
  readonly boundUrlHost: string;
  readonly apiKey: string | undefined;
}

export type GateResult =
  | { url: URL }
  /** `challenge`: answer with `WWW-Authenticate: Bearer`. */
  | { refusal: Refusal; challenge?: true };

/** The URL a request addresses, or why it is refused (every refusal closes the connection). */
export function passGate(req: IncomingMessage, target: Target, gate: Gate): GateResult {
  const rawPath = req.url ?? '/';
  // Node keeps the first of several Host lines; RFC 9112 §3.2 says refuse such a request
  // (a proxy in front may have read another one).
  const hostLines = req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === 'host');
  if (hostLines.length > 1) {
    return { refusal: { status: 400, message: 'The request has more than one Host header' } };
  }
  const hostHeader = (req.headers.host ?? '').toLowerCase();
  if (!gate.allowedHosts.has(hostHeader)) {
    const message = req.headers.host
      ? `Host ${req.headers.host} is not served here (only ${[...gate.allowedHosts].join(', ')})`
      : 'The request has no Host header';
    return { refusal: { status: req.headers.host ? 421 : 400, message } };
  }
  const origin = req.headers.origin;
  const fetchSite = req.headers['sec-fetch-site'];
  if (
    (origin !== undefined && origin !== `http://${hostHeader}`) ||
    (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none')
  ) {
    const message = `Cross-origin requests are refused (Origin ${origin ?? fetchSite}): clef-web serve answers programs, not other sites' pages`;
    return { refusal: { status: 403, message } };
  }

  // The API key, before the body is read: a client without it costs no more than its headers.
  if (gate.apiKey !== undefined) {
    const result = checkBearer(req.headers.authorization, gate.apiKey);
    if (result !== 'ok') {
      const { message, code } = authenticationError(result);
      return { refusal: { status: 401, message, code }, challenge: true };
    }
  }

  // A target that names a host (`//evil.example/...`, `http://evil.example/...`) other than
  // one this server answers to: refused, not routed as if it were ours.
  if (target.host !== undefined && !gate.allowedHosts.has(target.host)) {
    const message = `The request target ${rawPath} names a host this server does not serve`;
    return { refusal: { status: 400, message } };
  }
  try {
    return { url: new URL(target.originForm, `http://${gate.boundUrlHost}`) };
  } catch {
    return { refusal: { status: 400, message: `Bad request target ${rawPath}` } };
  }
}
