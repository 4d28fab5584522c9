/**
 * A site served with the documented production headers (`clef-web static`'s handler) under a
 * given Content-Security-Policy with a `report-uri`: the reports the browser posts (from the
 * page, its workers and its service worker) are kept for the test to read. For the CSP tests
 * in both browsers (test/browser/csp.spec.ts, test/firefox/csp.test.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONTENT_SECURITY_POLICY, DEPLOY_HEADERS } from '../../src/node/static/headers.js';
import { staticHandler } from '../../src/node/static/server.js';

const REPORT_PATH = '/__csp-report';

export interface PolicySite {
  origin: string;
  /** Violation reports posted to the policy's report-uri, as sent. */
  reports: string[];
  close(): Promise<void>;
}

/** Serves `dir` with the documented headers, `policy` as its CSP, plus a report-uri. */
export async function serveWithPolicy(
  dir: string,
  policy = CONTENT_SECURITY_POLICY,
): Promise<PolicySite> {
  const reported = `${policy}; report-uri ${REPORT_PATH}`;
  const rules = DEPLOY_HEADERS.map((r) =>
    r.headers['Content-Security-Policy']
      ? { ...r, headers: { ...r.headers, 'Content-Security-Policy': reported } }
      : r,
  );
  const serve = staticHandler(dir, { rules });
  const reports: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === REPORT_PATH) {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        reports.push(body);
        res.writeHead(204).end();
      });
      return;
    }
    serve(req, res);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reports,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
