/**
 * Sends fuzz cases to a running `clef-web serve` over real HTTP (keep-alive connections, a few
 * in flight at once) and checks every answer against the case's expectation and the headers
 * every response must carry. Shared by test/unit/node/serve/fuzz-serve.test.ts and
 * tools/fuzz/run-serve.ts.
 */
import { Agent, request as httpRequest } from 'node:http';
import { generateCase, type GenerateOptions } from './cases.js';
import { checkResponse } from './check.js';
import type { FuzzCase } from './expect.js';

export interface DriveOptions {
  url: string;
  seed: number;
  count: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** After each batch of this many cases (default 500), `afterBatch` runs with nothing in flight. */
  batch?: number;
  afterBatch?: (casesDone: number) => Promise<void>;
  contextTokens: number;
  maxBodyBytes: number;
  generate?: GenerateOptions;
  /** A request with no answer after this long is a hang (default 15 s). */
  hangMs?: number;
  /** The route posted to (default /v1/systemone). */
  path?: string;
  /** Another dialect's cases and checks (default System One's generator and checkResponse). */
  dialect?: {
    makeCase(seed: number, index: number): SentCase;
    check(c: SentCase, status: number, text: string): string[];
  };
}

/** What the driver sends: a case's kind (for summaries) and body. */
export interface SentCase {
  kind: string;
  body: string | Uint8Array;
}

export interface DriveSummary {
  seed: number;
  cases: number;
  /** `kind -> status -> count`, kinds by their first part (`wrong-type`, `non-json`, ...). */
  byKind: Record<string, Record<string, number>>;
  byStatus: Record<string, number>;
  mismatches: string[];
  /** Requests that got no HTTP answer (reset, hang). */
  noAnswer: string[];
  maxLatencyMs: number;
  maxLatencyKind: string;
  totalMs: number;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function send(url: URL, agent: Agent, c: SentCase, hangMs: number): Promise<Answer> {
  const body = typeof c.body === 'string' ? Buffer.from(c.body, 'utf8') : Buffer.from(c.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(hangMs, () => req.destroy(new Error(`no answer after ${hangMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Problems with the headers every response must have (system-one.md, server defences). */
function headerProblems(a: Answer): string[] {
  const out: string[] = [];
  if (!/^[0-9a-f-]{36}$/.test(String(a.headers['x-typesafe-request-id'])))
    out.push('no x-typesafe-request-id');
  if (a.headers['content-type'] !== 'application/json') out.push('content-type not JSON');
  if (Object.keys(a.headers).some((h) => h.startsWith('access-control-')))
    out.push('an access-control-* header');
  return out;
}

export async function driveServe(o: DriveOptions): Promise<DriveSummary> {
  const target = new URL(o.path ?? '/v1/systemone', o.url);
  const concurrency = o.concurrency ?? 4;
  const batch = o.batch ?? 500;
  const hangMs = o.hangMs ?? 15_000;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const summary: DriveSummary = {
    seed: o.seed,
    cases: 0,
    byKind: {},
    byStatus: {},
    mismatches: [],
    noAnswer: [],
    maxLatencyMs: 0,
    maxLatencyKind: '',
    totalMs: 0,
  };
  const started = performance.now();
  const one = async (i: number) => {
    const c = o.dialect ? o.dialect.makeCase(o.seed, i) : generateCase(o.seed, i, o.generate);
    const t0 = performance.now();
    let answer: Answer;
    try {
      answer = await send(target, agent, c, hangMs);
    } catch (e) {
      summary.noAnswer.push(`case ${i} (${c.kind}): ${(e as Error).message}`);
      return;
    }
    const ms = performance.now() - t0;
    if (ms > summary.maxLatencyMs)
      Object.assign(summary, { maxLatencyMs: ms, maxLatencyKind: c.kind });
    const kind = c.kind.split(':')[0]!;
    const perKind = (summary.byKind[kind] ??= {});
    perKind[answer.status] = (perKind[answer.status] ?? 0) + 1;
    summary.byStatus[answer.status] = (summary.byStatus[answer.status] ?? 0) + 1;
    const problems = [
      ...headerProblems(answer),
      ...(o.dialect
        ? o.dialect.check(c, answer.status, answer.text)
        : checkResponse(c as FuzzCase, answer.status, answer.text, o)),
    ];
    if (problems.length > 0)
      summary.mismatches.push(`case ${i} (${c.kind}): ${problems.join('; ')}`);
  };
  try {
    for (let from = 0; from < o.count; from += batch) {
      const end = Math.min(o.count, from + batch);
      let next = from;
      const lane = async () => {
        while (next < end) await one(next++);
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
      summary.cases = end;
      await o.afterBatch?.(end);
    }
  } finally {
    agent.destroy();
  }
  summary.totalMs = performance.now() - started;
  return summary;
}
