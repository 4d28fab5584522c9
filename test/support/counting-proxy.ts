/**
 * A reverse proxy in front of the dev server that counts the requests it passes on, by path:
 * what every context of the browser (pages, dedicated and shared workers, whose requests
 * Playwright does not all see) fetched from the origin. Headers pass unchanged (COOP/COEP
 * included), as do WebSocket upgrades (Vite's client). In-process: nothing to leave running.
 */
import { createServer, request } from 'node:http';
import { connect } from 'node:net';

export interface ProxiedRequest {
  /** GET for a download, HEAD for a probe that transfers no body, and so on. */
  method: string;
  /** Path with query. */
  path: string;
}

export interface CountingProxy {
  origin: string;
  /** Requests passed on so far, in order (path with query). */
  readonly paths: string[];
  /** The same requests with their methods (`requests[i].path === paths[i]`). */
  readonly requests: ProxiedRequest[];
  /** How many requests so far had a path starting with `prefix`. */
  count(prefix: string): number;
  close(): Promise<void>;
}

export function countingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream);
  const paths: string[] = [];
  const requests: ProxiedRequest[] = [];
  const upgraded = new Set<{ destroy(): void }>();
  const server = createServer((req, res) => {
    paths.push(req.url ?? '/');
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '/' });
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  server.on('upgrade', (req, socket, head) => {
    const out = connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
      out.write(`${lines.join('\r\n')}\r\n\r\n`);
      out.write(head);
      out.pipe(socket).pipe(out);
    });
    upgraded.add(out).add(socket);
    out.on('error', () => socket.destroy());
    socket.on('error', () => out.destroy());
  });
  return new Promise((resolve) =>
    // Loopback on a port the system picks (never one a test server already holds).
    server.listen(0, 'localhost', () => {
      const { port } = server.address() as { port: number };
      resolve({
        origin: `http://localhost:${port}`,
        paths,
        requests,
        count: (prefix) => paths.filter((p) => p.startsWith(prefix)).length,
        close: () =>
          new Promise<void>((done) => {
            for (const s of upgraded) s.destroy();
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}
