/**
 * `npx clef-web serve [<package-dir>] [--port 8787] [--host 127.0.0.1]`: the System One routes over
 * HTTP, answered by the package on onnxruntime-node (or the js device: --runtime). SIGINT/SIGTERM finish what was received,
 * then exit; a second signal exits at once.
 */
import { bundledModelDir } from '../bundled.js';
import { errorText, integerOption, listenError, parseCommandArgs } from '../cli-args.js';
import { requireOrtNode } from '../ort-node-installed.js';
import type { NodeEngineOptions } from '../engine.js';
import { DEFAULT_CACHE_BUDGET_BYTES } from '../../core/defaults.js';
import { startEnginePool } from './engine-pool.js';
import { RUNTIME_USAGE, runtimeOption, type NodeRuntimeRequest } from '../node-runtime.js';
import { checkAccessOptions } from './access.js';
import { openRecordLog, type RecordLog } from '../record/log.js';
import { isLoopbackHost } from './refusals.js';
import { routeListing } from '../../http/route-table.js';
import {
  DEFAULT_CLIENT_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_QUEUE,
  DEFAULT_PORT,
  startServer,
  type ServeOptions,
} from './server.js';

export const SERVE_USAGE = `usage: clef-web serve [<package-dir>] [--port ${DEFAULT_PORT}] [--host ${DEFAULT_HOST}]
  [--allow-host NAME]...          extra Host header names to accept (a DNS name for a non-loopback bind)
  [--max-body-bytes N]            default ${DEFAULT_MAX_BODY_BYTES}
  [--max-queue N]                 requests taken (the one deciding included) before 503, default ${DEFAULT_MAX_QUEUE}
  [--client-timeout-ms N]         time to send a request, default ${DEFAULT_CLIENT_TIMEOUT_MS}
  [--shutdown-grace-ms N]         time to finish in-flight requests on SIGINT/SIGTERM, default 30000
  [--api-key KEY]                 require Authorization: Bearer KEY on every request (or set CLEF_WEB_API_KEY)
  [--insecure-no-auth]            allow a non-loopback --host without a key
  [--workers N]                   engines in worker threads, each deciding on its own core, default 1
  [--cache-mb N]                  prefix cache per worker in MiB, default ${DEFAULT_CACHE_BUDGET_BYTES / 2 ** 20} (0: off)
  [--record <records.jsonl>]      append a decision record per answer, synced before it is sent (docs/records.md)
  [--record-hash-only]            records keep each request's SHA-256, not the request
  [--threads N] [--quiet]         onnxruntime threads per worker (default: 1 with --workers > 1)
  ${RUNTIME_USAGE}`;

/** The environment variable `serve` reads its API key from when --api-key is not given. */
const API_KEY_ENV = 'CLEF_WEB_API_KEY';

/** The highest TCP port. */
const MAX_PORT = 65_535;

function apiKeyOption(flag: string | undefined): { apiKey?: string } {
  const key = flag ?? process.env[API_KEY_ENV];
  if (key === undefined || key === '') return {};
  return { apiKey: key };
}

export async function serveMain(argv: string[]): Promise<number> {
  let values;
  let positionals;
  let port: number;
  let options: ServeOptions & { host: string };
  let graceMs: number;
  let threads: number | null;
  let workers: number;
  let cacheMb: number | null;
  let runtime: NodeRuntimeRequest;
  try {
    ({ values, positionals } = parseCommandArgs(argv, {
      port: { type: 'string' },
      host: { type: 'string' },
      'allow-host': { type: 'string', multiple: true },
      'max-body-bytes': { type: 'string' },
      'max-queue': { type: 'string' },
      'client-timeout-ms': { type: 'string' },
      'shutdown-grace-ms': { type: 'string' },
      threads: { type: 'string' },
      workers: { type: 'string' },
      'cache-mb': { type: 'string' },
      quiet: { type: 'boolean' },
      'api-key': { type: 'string' },
      'insecure-no-auth': { type: 'boolean' },
      record: { type: 'string' },
      'record-hash-only': { type: 'boolean' },
      runtime: { type: 'string' },
    }));
    runtime = runtimeOption(values.runtime);
    if (values.record === '') throw new Error('--record needs a file');
    if (values['record-hash-only'] && !values.record) {
      throw new Error('--record-hash-only needs --record <file>');
    }
    if (positionals.length > 1) throw new Error('at most one package directory');
    port = integerOption('port', values.port, DEFAULT_PORT, 0, MAX_PORT);
    options = {
      host: values.host ?? DEFAULT_HOST,
      port,
      maxBodyBytes: integerOption(
        'max-body-bytes',
        values['max-body-bytes'],
        DEFAULT_MAX_BODY_BYTES,
      ),
      maxQueue: integerOption('max-queue', values['max-queue'], DEFAULT_MAX_QUEUE),
      clientTimeoutMs: integerOption(
        'client-timeout-ms',
        values['client-timeout-ms'],
        DEFAULT_CLIENT_TIMEOUT_MS,
      ),
      allowedHosts: values['allow-host'] ?? [],
      insecureNoAuth: values['insecure-no-auth'] === true,
      ...apiKeyOption(values['api-key']),
    };
    checkAccessOptions(options.host, options);
    graceMs = integerOption('shutdown-grace-ms', values['shutdown-grace-ms'], 30_000, 0);
    threads = values.threads !== undefined ? integerOption('threads', values.threads, 1) : null;
    workers = integerOption('workers', values.workers, 1);
    cacheMb =
      values['cache-mb'] !== undefined ? integerOption('cache-mb', values['cache-mb'], 0, 0) : null;
  } catch (e) {
    console.error(`clef-web serve: ${(e as Error).message}\n${SERVE_USAGE}`);
    return 2;
  }

  let engine;
  let log: RecordLog | null = null;
  try {
    const engineOptions: NodeEngineOptions = { runtime };
    if (threads !== null) engineOptions.threads = threads;
    if (cacheMb !== null) engineOptions.cacheBudgetBytes = cacheMb * 2 ** 20;
    // Before any worker starts: onnxruntime-node's absence, where it is asked for by name, is
    // one line naming the install, in this thread (auto without it runs the js device).
    if (runtime === 'onnxruntime') requireOrtNode('Running a package in Node');
    // No package named: the bundled clef-nano, so `npx clef-web serve` answers at once.
    const dir = positionals[0] ?? bundledModelDir();
    if (values.record) {
      log = await openRecordLog(values.record);
      if (log.truncatedBytes > 0) {
        console.error(
          `clef-web serve: cut a torn last line (${log.truncatedBytes} bytes) off ${values.record}`,
        );
      }
    }
    // With --record every worker makes its decisions' records; this thread writes them.
    engine = await startEnginePool(
      dir,
      workers,
      engineOptions,
      log ? { log, requestSha256Only: values['record-hash-only'] === true } : null,
    );
  } catch (e) {
    await engine?.dispose();
    await log?.close();
    console.error(`clef-web serve: ${errorText(e)}`);
    return 1;
  }
  const quiet = values.quiet === true;
  let server;
  try {
    server = await startServer(engine, {
      ...options,
      onResponse: quiet
        ? undefined
        : (e) =>
            console.error(
              `${new Date().toISOString()} ${e.status} ${e.method} ${e.path} ${e.ms}ms ${e.requestId}`,
            ),
    });
  } catch (e) {
    await engine.dispose();
    await log?.close();
    console.error(`clef-web serve: ${listenError(e, options.host, port, DEFAULT_PORT)}`);
    return 1;
  }
  const { model, variant } = engine.manifest;
  const auth = options.apiKey !== undefined ? 'API key required' : 'no API key';
  const reach = server.url === server.boundUrl ? '' : ` (from this machine: ${server.url})`;
  console.log(
    `clef-web serve: ${model.name} (${variant.dtype}) listening on ${server.boundUrl}${reach}, ${auth}, ${workers} worker${workers === 1 ? '' : 's'}`,
  );
  console.log(`  ${routeListing()}`);
  if (!isLoopbackHost(options.host) && options.apiKey === undefined) {
    console.error(
      `warning: bound to ${options.host} with --insecure-no-auth: other machines can reach this` +
        ' server, and it answers anyone who can connect.',
    );
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        console.error(`clef-web serve: ${signal} again, exiting now`);
        server.destroy();
        resolve(130);
        return;
      }
      stopping = true;
      console.error(
        `clef-web serve: ${signal}, finishing ${server.pending()} queued request(s) (Ctrl-C again to quit now)`,
      );
      const deadline = setTimeout(() => {
        console.error(`clef-web serve: requests still open after ${graceMs} ms; closing them`);
        server.destroy();
      }, graceMs);
      void server
        .close()
        .then(() => log?.close())
        .then(() => engine.dispose())
        .then(() => {
          clearTimeout(deadline);
          console.error('clef-web serve: stopped');
          resolve(0);
        });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
