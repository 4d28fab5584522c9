/**
 * `npx clef-web static <dir>`: serves a built app with the headers a production server sends
 * (docs/deploy.md): COOP/COEP, the Content-Security-Policy, revalidated caching of `/ort/` and
 * the model, `application/wasm`. One line to check a build before it is deployed.
 */
import { existsSync, statSync } from 'node:fs';
import { integerOption, listenError, parseCommandArgs } from '../cli-args.js';
import { startStatic } from './server.js';
import { CONTENT_SECURITY_POLICY } from './headers.js';

const DEFAULT_PORT = 8080;
const DEFAULT_HOST = '127.0.0.1';

export const STATIC_USAGE = `usage: clef-web static <dir> [--port ${DEFAULT_PORT}] [--host ${DEFAULT_HOST}]
  serves <dir> (a built app: vite build's dist/, or a folder clef-web assets wrote into) with the
  headers docs/deploy.md gives every host:
    Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp
    Content-Security-Policy: ${CONTENT_SECURITY_POLICY}
    X-Content-Type-Options: nosniff; Cache-Control: no-cache on /ort/ and /clef-web/ (with ETags)
  --port 0 takes any free port; Ctrl-C stops it`;

export async function staticMain(argv: string[]): Promise<number> {
  let dir: string;
  let port: number;
  let host: string;
  try {
    const { values, positionals } = parseCommandArgs(argv, {
      port: { type: 'string' },
      host: { type: 'string' },
    });
    if (positionals.length !== 1) {
      throw new Error(
        positionals.length === 0 ? 'missing <dir>' : `one <dir>, not ${positionals.length}`,
      );
    }
    dir = positionals[0]!;
    port = integerOption('port', values.port, DEFAULT_PORT, 0, 65_535);
    host = values.host ?? DEFAULT_HOST;
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new Error(`<dir> ${dir}: no such folder (build the app first, e.g. npx vite build)`);
    }
  } catch (e) {
    console.error(`clef-web static: ${(e as Error).message}\n${STATIC_USAGE}`);
    return 2;
  }
  let server;
  try {
    server = await startStatic(dir, { host, port });
  } catch (e) {
    console.error(`clef-web static: ${listenError(e, host, port, DEFAULT_PORT)}`);
    return 1;
  }
  console.log(`clef-web static: serving ${dir} on ${server.url} with the production headers`);
  const running = server;
  return new Promise<number>((resolve) => {
    const stop = () => void running.close().then(() => resolve(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
