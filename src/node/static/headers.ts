/**
 * The headers a production server sends for a clef-web app (docs/deploy.md writes them for each
 * host; `clef-web static` sends exactly these): cross-origin isolation, so WASM runs on several
 * threads; the Content-Security-Policy clef-web needs; revalidated caching for onnxruntime's
 * files and the bundled model; the types browsers insist on.
 */

/**
 * The smallest policy every surface of clef-web works under (the page API on one and several
 * threads, WebGPU, `<clef-decide>`, the playground, the service-worker routes): everything from
 * the page's origin, and `'wasm-unsafe-eval'`, without which a browser refuses to compile
 * onnxruntime's WebAssembly (a policy without `script-src` `'wasm-unsafe-eval'` or
 * `'unsafe-eval'` forbids `WebAssembly.compile`/`instantiate`).
 */
export const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";

/** Threaded WASM needs SharedArrayBuffer, which needs cross-origin isolation. */
export const ISOLATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
});

/** Headers for the paths a pattern (`/*`, `/ort/*`) matches, as hosts' `_headers` files say them. */
export interface HeaderRule {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Every response; then onnxruntime's files and clef-web's own (the bundled model). */
export const DEPLOY_HEADERS: readonly HeaderRule[] = Object.freeze<HeaderRule[]>([
  {
    path: '/*',
    headers: {
      ...ISOLATION_HEADERS,
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
    },
  },
  // Kept by the browser's HTTP cache and revalidated (an ETag answers 304 when unchanged): a new
  // version is never served stale, and Chromium keeps onnxruntime's compiled wasm between visits.
  { path: '/ort/*', headers: { 'Cache-Control': 'no-cache' } },
  { path: '/clef-web/*', headers: { 'Cache-Control': 'no-cache' } },
]);

/** The types a browser needs: streaming compilation wants application/wasm, modules a JS type. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
});

/** Whether a `_headers`-style pattern (`/*`, `/ort/*`, `/exact`) matches `pathname`. */
export function pathMatches(pattern: string, pathname: string): boolean {
  if (pattern.endsWith('*')) return pathname.startsWith(pattern.slice(0, -1));
  return pathname === pattern;
}

/** The headers for `pathname` under `rules`: every matching rule's, later ones adding. */
export function headersFor(
  pathname: string,
  rules: readonly HeaderRule[] = DEPLOY_HEADERS,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rule of rules) {
    if (pathMatches(rule.path, pathname)) Object.assign(out, rule.headers);
  }
  return out;
}
