/**
 * `clef-web serve`'s server in a child process the load test can weigh: run with
 * `node --expose-gc --import tsx serve-child.ts <package-dir>` through `fork`. It reports its URL,
 * then answers IPC messages: `memory` (RSS and JS heap after two full GCs), `log` (the response
 * log since the last call), `close` (graceful close, then exit).
 */
import { loadNodePackage } from '../../../src/node/engine.js';
import {
  nodeEngineBackend,
  startServer,
  type ResponseLogEntry,
} from '../../../src/node/serve/server.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || !process.send) throw new Error('run me through fork() with --expose-gc');
const send = (message: unknown) => process.send!(message);

const engine = await loadNodePackage(process.argv[2]!, { threads: 1 });
const log: ResponseLogEntry[] = [];
const server = await startServer(nodeEngineBackend(engine), {
  port: 0,
  onResponse: (e) => log.push(e),
});
send({ type: 'listening', url: server.url });

process.on('message', (message: { type: string }) => {
  if (message.type === 'memory') {
    gc();
    gc();
    const { rss, heapUsed } = process.memoryUsage();
    send({ type: 'memory', rss, heapUsed });
  } else if (message.type === 'log') {
    send({ type: 'log', entries: log.splice(0) });
  } else if (message.type === 'close') {
    void server
      .close()
      .then(() => engine.dispose())
      .then(() => process.exit(0));
  }
});
