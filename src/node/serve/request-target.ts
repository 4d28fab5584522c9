/**
 * What `clef-web serve` reads from a request line and its Content-Type before routing: the
 * target's host (absolute-form or `//host`) and whether a declared body type can be JSON.
 */
export interface Target {
  /** The path, without query. */
  path: string;
  /** The target as origin-form (`/path?query`). */
  originForm: string;
  /** `host[:port]`, lower case, when the target names one (absolute-form or `//host/...`). */
  host?: string;
}

/**
 * RFC 9112 §3.2: a server must accept the absolute form (`POST http://host/path`), whose host
 * then stands for the Host header; `//host/path` is not a valid origin-form and would resolve
 * against the host it names.
 */
export function targetOf(raw: string): Target {
  if (raw.startsWith('/') && !raw.startsWith('//')) {
    return { path: raw.split('?')[0] ?? '/', originForm: raw };
  }
  let url: URL;
  try {
    url = new URL(raw.startsWith('//') ? `http:${raw}` : raw);
  } catch {
    return { path: raw.split('?')[0] ?? raw, originForm: raw, host: '' };
  }
  const scheme = url.protocol === 'http:';
  // `url.host` drops a default port; the Host names the server answers to always carry one.
  const host = scheme ? `${url.hostname}:${url.port || '80'}`.toLowerCase() : '';
  return { path: url.pathname, originForm: `${url.pathname}${url.search}`, host };
}

/**
 * The media type of a declared Content-Type that cannot be JSON, or undefined. Accepted: no
 * header, `application/json` or any `+json` type, and `text/plain`, which `fetch()` declares
 * for a string body sent without headers (a common hand-written client). The SDKs this server
 * answers all send `application/json` (TypeSafe, openai, cloudflare). Refused: form and
 * multipart types (`curl -d` sends a form type), binary and every other type.
 */
export function notJsonContentType(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const type = (header.split(';')[0] ?? '').trim().toLowerCase();
  if (
    type === 'application/json' ||
    type === 'text/plain' ||
    /^[a-z0-9.+-]+\/[a-z0-9.+-]+\+json$/.test(type)
  ) {
    return undefined;
  }
  return type === '' ? 'an empty type' : type;
}
