/**
 * A task of two clauses: one service is failing, another is fine, in either order ("the vpn is
 * down, but email works" / "email works, but the vpn is down"), some of the fine ones negated
 * ("isn't down"). A bag of words cannot tell which of the two services fails, so `train`'s `auto`
 * tries its layers on it (the scope layer, the pointer, the order layer). Used by the threads'
 * test (every layer's fit gives the same bits on 2 threads) and their benchmark
 * (tools/bench/train-threads.ts).
 */
import { Rng } from '../../src/calibrate/prng.js';

export const CLAUSE_SERVICES = {
  vpn: ['the vpn', 'the tunnel', 'remote access'],
  email: ['email', 'outlook', 'the mail server'],
  wifi: ['the wifi', 'wireless', 'the office network'],
  database: ['the db', 'postgres', 'the database'],
} as const;
const FAILING = ['is down', 'keeps failing', 'stopped working', 'is broken', 'times out'];
const FINE = ['works', 'is fine', 'is not down', 'looks healthy', "isn't broken", 'came back'];
const JOINS = [', but', ',', ' and'];

/** `count` labelled requests (JSONL), the same for the same seed. */
export function clausesJsonl(count: number, seed: number): string {
  const rng = new Rng(seed);
  const pick = <T>(a: readonly T[]): T => a[rng.int(a.length)] as T;
  const services = Object.keys(CLAUSE_SERVICES) as Array<keyof typeof CLAUSE_SERVICES>;
  const criteria = {
    vpn: 'the VPN or remote-access tunnel',
    email: 'sending, receiving or reading mail',
    wifi: 'the office wireless network',
    database: 'database servers, queries and replication',
  };
  return Array.from({ length: count }, () => {
    const failing = pick(services);
    const fine = pick(services.filter((s) => s !== failing));
    const bad = `${pick(CLAUSE_SERVICES[failing])} ${pick(FAILING)}`;
    const good = `${pick(CLAUSE_SERVICES[fine])} ${pick(FINE)}`;
    const state =
      rng.uniform() < 0.5 ? `${bad}${pick(JOINS)} ${good}` : `${good}${pick(JOINS)} ${bad}`;
    const request = {
      model: 'ops',
      state,
      questions: {
        failing: { type: 'choice', instructions: 'Which service is failing?', criteria },
      },
    };
    return JSON.stringify({ request, labels: { failing } });
  }).join('\n');
}
