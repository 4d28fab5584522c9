/**
 * The load half of serve.test.ts: a server in a child process (serve-child.ts, so its memory is
 * its own), 100 concurrent requests per round from 5 clients (two TypeSafe SDK clients, two
 * fetch clients, one client on a single keep-alive connection) after a warm-up, with the child's
 * memory after full GCs after the warm-up and after the round.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { choice, noul, TypeSafeClient } from '@typesafe-ai/sdk';
import type { ResponseLogEntry } from '../../../src/node/serve/server.js';
import { TINY_MODEL } from './tiny-package.js';

const PER_CLIENT = 20;

interface Memory {
  rss: number;
  heapUsed: number;
}

export interface LoadReport {
  /** Of the round of 100. */
  statuses: number[];
  requestIds: string[];
  /** Requests whose answers are not the ones they asked for. */
  mismatched: string[];
  /** Engine queue places of the round's decisions, in the order they were answered. */
  queuePlacesInAnswerOrder: number[];
  /** Indices of the single-connection client's requests, in the order their answers came. */
  sequentialClientOrder: number[];
  /** After the warm-up, then after the round. */
  memory: Memory[];
}

/**
 * Sends `type` to the child and resolves with its reply of that type. Rejects, instead of
 * waiting for ever, when the child exits first or does not reply within `timeoutMs` (the
 * caller's `finally` then ends the child: a hung child can no longer keep it from running).
 */
function ask<T>(child: ChildProcess, type: string, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      clearTimeout(timer);
    };
    const onMessage = (m: { type: string }) => {
      if (m.type !== type) return;
      done();
      resolve(m as T);
    };
    const onExit = (code: number | null, signal: string | null) => {
      done();
      reject(new Error(`the server child exited (${code ?? signal}) before answering "${type}"`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the server child did not answer "${type}" within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ type });
  });
}

/** Ends the child (SIGKILL) if it is still running, and resolves once it has exited. */
async function endChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGKILL');
  await exited;
}

interface Outcome {
  client: number;
  index: number;
  status: number;
  requestId: string;
  answerIds: string[];
}

const ids = (client: number, index: number) => [`c${client}r${index}x`, `c${client}r${index}y`];
const stateOf = (client: number, index: number) =>
  `Request ${client}/${index}: ` + 'my order is late again '.repeat(index % 4);

async function viaSdk(url: string, client: number): Promise<Outcome[]> {
  const sdk = new TypeSafeClient({ apiKey: 'x', baseURL: url, logLevel: 'off' });
  return Promise.all(
    Array.from({ length: PER_CLIENT }, async (_, index) => {
      const [x, y] = ids(client, index) as [string, string];
      const { data, requestId } = await sdk
        .systemOne({
          model: TINY_MODEL,
          state: stateOf(client, index),
          questions: { [x]: noul('Late?'), [y]: choice('Team?', { ship: null, pay: null }) },
        })
        .withResponse();
      return {
        client,
        index,
        status: 200,
        requestId: requestId ?? '',
        answerIds: Object.keys(data.answers),
      };
    }),
  );
}

function bodyOf(client: number, index: number): string {
  const [x, y] = ids(client, index) as [string, string];
  return JSON.stringify({
    model: TINY_MODEL,
    state: stateOf(client, index),
    questions: {
      [x]: { type: 'noul' },
      [y]: { type: 'choice', criteria: { ship: null, pay: null } },
    },
  });
}

async function viaFetch(url: string, client: number): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: PER_CLIENT }, async (_, index) => {
      const res = await fetch(`${url}/v1/systemone`, {
        method: 'POST',
        body: bodyOf(client, index),
      });
      const json = (await res.json()) as { answers?: object };
      return {
        client,
        index,
        status: res.status,
        requestId: res.headers.get('x-typesafe-request-id') ?? '',
        answerIds: Object.keys(json.answers ?? {}),
      };
    }),
  );
}

/** All requests issued at once on one keep-alive connection; records the answers' order. */
async function viaOneConnection(url: string, client: number, order: number[]): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(`${url}/v1/systemone`);
  try {
    return await Promise.all(
      Array.from(
        { length: PER_CLIENT },
        (_, index) =>
          new Promise<Outcome>((resolve, reject) => {
            const req = httpRequest(target, { method: 'POST', agent }, (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (d: string) => (text += d));
              res.on('end', () => {
                order.push(index);
                resolve({
                  client,
                  index,
                  status: res.statusCode ?? 0,
                  requestId: String(res.headers['x-typesafe-request-id'] ?? ''),
                  answerIds: Object.keys((JSON.parse(text) as { answers?: object }).answers ?? {}),
                });
              });
            });
            req.on('error', reject);
            req.end(bodyOf(client, index));
          }),
      ),
    );
  } finally {
    agent.destroy();
  }
}

async function round(url: string, order: number[]): Promise<Outcome[]> {
  const clients = [
    viaSdk(url, 0),
    viaSdk(url, 1),
    viaFetch(url, 2),
    viaFetch(url, 3),
    viaOneConnection(url, 4, order),
  ];
  return (await Promise.all(clients)).flat();
}

export async function runLoad(packageDir: string): Promise<LoadReport> {
  const script = fileURLToPath(new URL('./serve-child.ts', import.meta.url));
  const child = fork(script, [packageDir], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const { url } = await ask<{ url: string }>(child, 'listening');
    // Warm-up: the same round, so the server has once held as many connections and requests.
    await round(url, []);
    await ask(child, 'log');
    const memory: Memory[] = [await ask<Memory>(child, 'memory')];

    const order: number[] = [];
    const outcomes = await round(url, order);
    const { entries } = await ask<{ entries: ResponseLogEntry[] }>(child, 'log');
    memory.push(await ask<Memory>(child, 'memory'));

    const decisions = entries.filter((e) => e.path === '/v1/systemone');
    const mismatched = outcomes
      .filter((o) => o.answerIds.join() !== ids(o.client, o.index).join())
      .map((o) => `client ${o.client} request ${o.index}: ${o.status} ${o.answerIds.join()}`);
    const exited = new Promise((r) => child.once('exit', r));
    child.send({ type: 'close' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      exited,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('the server child did not close')), 60_000);
      }),
    ]).finally(() => clearTimeout(timer));
    return {
      statuses: outcomes.map((o) => o.status),
      requestIds: outcomes.map((o) => o.requestId),
      mismatched,
      queuePlacesInAnswerOrder: decisions.map((e) => e.job),
      sequentialClientOrder: order,
      memory: memory.map(({ rss, heapUsed }) => ({ rss, heapUsed })),
    };
  } finally {
    await endChild(child);
  }
}
