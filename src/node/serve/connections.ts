/**
 * The connection-level defences of `clef-web serve` (docs/reliability.md, "Connections"): how
 * many sockets one client may hold, and closing a socket for good once it has been answered
 * with a refusal, so that a client which never reads or never closes cannot keep a slot.
 *
 * Timeouts, all enforced by node:http with the values startServer passes:
 * - headers: a connection must send a request's complete headers within `clientTimeoutMs`
 *   of opening (or of the previous answer), else 408 and closed: idle new connections included;
 * - body: the body must arrive within `clientTimeoutMs` of the headers, else 408 and closed;
 * - keep-alive: an idle connection between two requests is closed after `keepAliveTimeoutMs`.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Connections one client address may hold at once; more are closed as they arrive. */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 256;
/** Connections in all (file descriptors are finite); more are closed as they arrive. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** Idle time between two requests on one connection before it is closed. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5000;
/** How long a refused socket may take to flush its answer before it is dropped anyway. */
const FLUSH_GRACE_MS = 1000;

/**
 * Counts sockets per remote address and closes a new one past `perClient`. On loopback every
 * local program is the same address (127.0.0.1), so the limit is per program only when they
 * use different ones (127.0.0.2 ...); `perClient` must leave room for the largest legitimate
 * connection pool (fetch()'s has no cap: 100 requests at once from one program open 100).
 */
export function limitConnectionsPerClient(server: Server, perClient: number): () => number {
  const open = new Map<string, number>();
  let refused = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > perClient) {
      refused++;
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return () => refused;
}

/**
 * Writes `answer` and then closes the socket both ways (not a half-close: a client that never
 * closes its side would keep the socket, in FIN-WAIT-2, for as long as it liked).
 */
export function answerAndClose(socket: Socket, answer: string): void {
  const drop = setTimeout(() => socket.destroy(), FLUSH_GRACE_MS);
  drop.unref();
  socket.end(answer, () => {
    clearTimeout(drop);
    socket.destroy();
  });
}
