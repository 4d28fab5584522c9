// Remote escalation from a page, against a `clef-web serve` process this test starts on
// loopback (WASM only; the remote side is the CLI on onnxruntime-node).
//
// Why a proxy: the page is cross-origin isolated (COEP require-corp), and the remote is another
// origin, so the page's fetch is a CORS request and needs `Access-Control-Allow-Origin` (and a
// preflight answer, since it sends JSON and an Authorization header). `clef-web serve` sends no
// CORS headers on purpose and refuses requests carrying another Origin (a page elsewhere must not
// use it). A real deployment that wants escalation from pages points `remote.baseURL` at a
// server that grants CORS to its origin; here a small proxy in the test plays that server: it
// answers preflights, adds CORS and CORP headers for the test page's origin only, and forwards
// the request to `clef-web serve` without the Origin header.
import type { ChildProcess } from 'node:child_process';
import { spawnGroup, stopGroup } from '../support/processes.js';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { expect, test } from '@playwright/test';

const PACKAGE = 'public/models/tiny';
const MODEL = 'clef-tiny';
const REMOTE_ALIAS = 'clef-tiny-random';
const REQUEST = {
  model: MODEL,
  state: 'The parcel came two weeks late and the box was crushed.',
  questions: {
    late: { type: 'noul' },
    team: { type: 'choice', criteria: { shipping: 'Parcels', billing: 'Money', other: null } },
  },
};

let serve: ChildProcess;
let serveUrl = '';
let proxy: Server;
let proxyUrl = '';
const proxied: Array<{ path: string; authorization: string | undefined }> = [];

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    }),
  );
}

/** The CORS-granting front: only the test page's origin is let in. */
function corsProxy(pageOrigin: string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.origin === pageOrigin) {
      res.setHeader('access-control-allow-origin', pageOrigin);
      res.setHeader('access-control-allow-headers', 'content-type, authorization');
      res.setHeader('access-control-allow-methods', 'GET, POST');
      res.setHeader('cross-origin-resource-policy', 'cross-origin');
      res.setHeader('vary', 'origin');
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    proxied.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const headers: Record<string, string> = {};
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    const upstream = httpRequest(
      `${serveUrl}${req.url}`,
      { method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, {
          'content-type': answer.headers['content-type'] ?? 'application/json',
        });
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  };
}

test.beforeAll(async ({ baseURL }) => {
  serve = spawnGroup(
    process.execPath,
    ['bin/clef-web.mjs', 'serve', PACKAGE, '--port', '0', '--threads', '1', '--quiet'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  serveUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /listening on (http:\/\/[^\s,]+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    serve.on('exit', (code) => reject(new Error(`clef-web serve exited with ${code}`)));
  });
  proxy = createServer(corsProxy(new URL(baseURL!).origin));
  proxyUrl = await listen(proxy);
});

test.afterAll(async () => {
  // Ended and awaited (it used to be signalled and left to exit whenever it would).
  if (serve) await stopGroup(serve);
  await new Promise((r) => (proxy ? proxy.close(r) : r(undefined)));
});

test.beforeEach(async ({ page }) => {
  page.on('console', (m) => console.log(`[page] ${m.text()}`));
  // Vite's HMR socket stubbed: edits elsewhere in the tree must not reload the page mid-test.
  await page.routeWebSocket(/.*/, () => undefined);
  await page.goto('/test/browser/pages/harness.html');
  await expect(page.locator('#status')).toHaveText('ready');
});

/** What `clef-web serve` answers for a request (Node side: no CORS involved). */
async function served(request: object) {
  const res = await fetch(`${serveUrl}/v1/systemone`, {
    method: 'POST',
    body: JSON.stringify(request),
  });
  return (await res.json()) as any;
}

/** The least confidence of a response: noul max(p, 1-p), choice and score their confidence. */
function least(response: any): number {
  return Math.min(
    ...Object.values(response.answers).map((a: any) =>
      a.type === 'noul' ? Math.max(a.noul, 1 - a.noul) : a.confidence,
    ),
  );
}

// Same package on both sides (WASM in the page, onnxruntime-node in the server): answers agree
// within the 4-decimal rounding plus float32 differences between the two runtimes.
const RUNTIME_TOL = 2e-4;

test("'always' sends every request to the remote and says so", async ({ page }) => {
  const before = proxied.length;
  const out = await page.evaluate(
    async ({ proxyUrl, serveUrl, REQUEST, REMOTE_ALIAS }) => {
      const { createClef } = (window as any).clefWeb;
      const clef = await createClef({
        model: '/models/tiny/',
        device: 'wasm',
        cache: false,
        remote: { baseURL: proxyUrl, apiKey: 'sk-test', when: 'always', model: REMOTE_ALIAS },
      });
      const viaApi = await clef.systemone(REQUEST);
      const viaFetch = await clef
        .fetch('/v1/systemone', { method: 'POST', body: JSON.stringify(REQUEST) })
        .then((r: Response) => r.text());
      await clef.dispose();
      // The server itself, without the CORS front, is unreadable from this page.
      const direct = await fetch(`${serveUrl}/v1/models`).then(
        () => 'read',
        (e: Error) => e.name,
      );
      return { viaApi, viaFetch, direct };
    },
    { proxyUrl, serveUrl, REQUEST, REMOTE_ALIAS },
  );
  expect(out.viaApi.answered_by).toBe('remote');
  expect(out.viaApi.model).toBe(REMOTE_ALIAS);
  expect(out.viaApi).toEqual({
    ...(await served({ ...REQUEST, model: REMOTE_ALIAS })),
    answered_by: 'remote',
  });
  expect(out.viaFetch).toMatch(
    /^\{"model":"clef-tiny-random","answers":\{"late":.*,"answered_by":"remote"\}$/,
  );
  expect(proxied.slice(before)).toEqual([
    { path: '/v1/systemone', authorization: 'Bearer sk-test' },
    { path: '/v1/systemone', authorization: 'Bearer sk-test' },
  ]);
  expect(out.direct).toBe('TypeError');
});

test('{ below } escalates exactly the requests answered less confidently', async ({ page }) => {
  // Candidates whose confidences differ; the threshold goes halfway between the least and the
  // most confident, so each side of it is far from the cross-runtime tolerance.
  const candidates = ['Where is my parcel?', 'Refund me now!!!', 'ok', REQUEST.state].map(
    (state) => ({ ...REQUEST, state }),
  );
  const confidences = await Promise.all(candidates.map(async (r) => least(await served(r))));
  const sure = candidates[confidences.indexOf(Math.max(...confidences))]!;
  const unsure = candidates[confidences.indexOf(Math.min(...confidences))]!;
  const gap = Math.max(...confidences) - Math.min(...confidences);
  expect(gap).toBeGreaterThan(20 * RUNTIME_TOL);
  const threshold = Math.min(...confidences) + gap / 2;

  const before = proxied.length;
  const out = await page.evaluate(
    async ({ proxyUrl, sure, unsure, threshold, REMOTE_ALIAS }) => {
      const { createClef } = (window as any).clefWeb;
      const clef = await createClef({
        model: '/models/tiny/',
        device: 'wasm',
        cache: false,
        remote: { baseURL: proxyUrl, when: { below: threshold }, model: REMOTE_ALIAS },
      });
      try {
        return { sure: await clef.systemone(sure), unsure: await clef.systemone(unsure) };
      } finally {
        await clef.dispose();
      }
    },
    { proxyUrl, sure, unsure, threshold, REMOTE_ALIAS },
  );
  expect(out.sure.answered_by).toBe('local');
  expect(out.sure.model).toBe(MODEL);
  expect(least(out.sure)).toBeGreaterThanOrEqual(threshold);
  const server = await served(sure);
  expect(Math.abs(out.sure.answers.late.noul - server.answers.late.noul)).toBeLessThanOrEqual(
    RUNTIME_TOL,
  );
  expect(out.unsure.answered_by).toBe('remote');
  expect(out.unsure.model).toBe(REMOTE_ALIAS);
  expect(proxied.length).toBe(before + 1);
});
