/**
 * A static file server that sends a clef-web app's production headers (headers.ts): what
 * `npx clef-web static <dir>` runs, to try a build locally as a host will serve it (`npx serve`
 * and `python3 -m http.server` send no COOP/COEP, so the page runs one thread). GET and HEAD
 * only, files under the folder only, `index.html` for a folder, 404 for anything missing (no
 * single-page-app fallback: a missing file should look missing), ETag revalidation.
 */
import { createReadStream, statSync, type Stats } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';
import { CONTENT_TYPES, DEPLOY_HEADERS, headersFor, type HeaderRule } from './headers.js';

export interface StaticOptions {
  /** The header rules (default: DEPLOY_HEADERS, the documented set). */
  rules?: readonly HeaderRule[];
  /** Or the headers for a path, computed (a host's own matching rules); wins over `rules`. */
  headers?: (pathname: string) => Record<string, string>;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** The file `pathname` names under `root` (index.html for a folder), or null. */
function fileFor(root: string, pathname: string): { path: string; stat: Stats } | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  let path = resolve(root, `.${decoded}`);
  if (path !== root && !path.startsWith(root + sep)) return null;
  try {
    let stat = statSync(path);
    if (stat.isDirectory()) {
      path = join(path, 'index.html');
      stat = statSync(path);
    }
    return stat.isFile() ? { path, stat } : null;
  } catch {
    return null;
  }
}

/** A request listener serving `dir` with the production headers. */
export function staticHandler(dir: string, options: StaticOptions = {}): Listener {
  const root = resolve(dir);
  const rules = options.rules ?? DEPLOY_HEADERS;
  const headers = options.headers ?? ((pathname: string) => headersFor(pathname, rules));
  return (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0] ?? '/';
    for (const [name, value] of Object.entries(headers(pathname))) {
      res.setHeader(name, value);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('GET or HEAD');
      return;
    }
    const file = fileFor(root, pathname);
    if (!file) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    const etag = `"${file.stat.size.toString(16)}-${Math.floor(file.stat.mtimeMs).toString(16)}"`;
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', file.stat.mtime.toUTCString());
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304).end();
      return;
    }
    const type = CONTENT_TYPES[extname(file.path).toLowerCase()] ?? 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': String(file.stat.size) });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file.path)
      .on('error', () => res.destroy())
      .pipe(res);
  };
}

export interface RunningStatic {
  /** `http://host:port`, the port actually bound. */
  url: string;
  close(): Promise<void>;
}

/** Serves `dir` on `host:port` (0: any free port) until closed. */
export function startStatic(
  dir: string,
  listen: { host: string; port: number },
  options: StaticOptions = {},
): Promise<RunningStatic> {
  const server = createServer(staticHandler(dir, options));
  return new Promise((resolveStart, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
      resolveStart({
        url: `http://${host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
