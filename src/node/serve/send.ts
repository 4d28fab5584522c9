/**
 * How `clef-web serve` writes an answer: every response with its length, `no-store`, `nosniff`
 * and a request id; refusals as JSON in the path's dialect (refusals.ts); routed answers with
 * the headers their status calls for.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { allowedMethods } from '../../http/route-table.js';
import { refusalBody, type Refusal } from './refusals.js';

/** Seconds a 503 overloaded suggests waiting (clients such as the TypeSafe SDK honour it). */
export const RETRY_AFTER_S = 1;

/** Writes a response; headers go through setHeader so the access log can read the id back. */
export function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: Buffer,
): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('content-length', body.length);
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-content-type-options', 'nosniff');
  if (!res.hasHeader('x-typesafe-request-id')) res.setHeader('x-typesafe-request-id', randomUUID());
  res.writeHead(status);
  res.end(body);
}

export function refuse(res: ServerResponse, path: string, refusal: Refusal, close = false): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (close) headers['connection'] = 'close';
  send(res, refusal.status, headers, Buffer.from(refusalBody(path, refusal)));
}

/** Writes a routed answer for `path`, with `Retry-After` on a 503 and `Allow` on a 405. */
export function sendRouted(
  res: ServerResponse,
  path: string,
  reply: { status: number; headers: Record<string, string>; body: Buffer },
  closing: boolean,
): void {
  const headers = reply.headers;
  if (reply.status === 503) headers['retry-after'] = String(RETRY_AFTER_S);
  if (reply.status === 405) headers['allow'] = allowedMethods(path);
  if (closing) headers['connection'] = 'close';
  send(res, reply.status, headers, reply.body);
}
