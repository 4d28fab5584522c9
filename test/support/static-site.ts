/**
 * A plain static file server (no clef-web code, no Vite) for a folder that `clef-web assets`
 * wrote: what a user's own server does. `isolated` sends COOP/COEP; without them the page is
 * not cross-origin isolated and the engine runs on one thread. Records the paths it could not
 * serve. In-process: nothing to leave running. Used by the packed-app spec (test/browser) and the
 * Firefox suite.
 */
import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

export interface StaticSite {
  origin: string;
  /** The paths it answered 404 for. */
  missing: string[];
  close: () => Promise<void>;
}

export function staticSite(dir: string, isolated: boolean): Promise<StaticSite> {
  const missing: string[] = [];
  const server = createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    const path = normalize(join(dir, url));
    const file = path.endsWith(sep) ? join(path, 'index.html') : path;
    if (!file.startsWith(dir) || !existsSync(file) || statSync(file).isDirectory()) {
      missing.push(url);
      res.writeHead(404).end();
      return;
    }
    const headers: Record<string, string> = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    };
    if (isolated) {
      headers['cross-origin-opener-policy'] = 'same-origin';
      headers['cross-origin-embedder-policy'] = 'require-corp';
    }
    res.writeHead(200, headers).end(readFileSync(file));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        origin: `http://127.0.0.1:${port}`,
        missing,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}
