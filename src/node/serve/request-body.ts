/**
 * Reading a request's body in `clef-web serve`, bounded: a declared type that cannot be JSON is
 * refused (415), a body over the limit is refused before or while it arrives (413), one that
 * takes too long is cut off (408), and bytes that cannot be JSON text are answered 400 before
 * anything parses them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { notJsonBodyMessage } from '../../http/route-common.js';
import { routeDialect } from '../../http/route-table.js';
import { AbortedError } from '../../wire/errors.js';
import { notJsonBodyBytes, refusalBody, type Refusal } from './refusals.js';
import { notJsonContentType } from './request-target.js';
import { refuse, send } from './send.js';

export interface BodyLimits {
  maxBodyBytes: number;
  clientTimeoutMs: number;
}

/** Reads the body; resolves 'too-large' as soon as it passes `limit` bytes. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
    req.once('aborted', () => reject(new AbortedError('The client went away while sending')));
  });
}

/**
 * The body of a request to `path`, or 'answered' when it was refused (or the client left) and
 * nothing more is to be done.
 */
export async function receiveBody(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  { maxBodyBytes, clientTimeoutMs }: BodyLimits,
): Promise<Buffer | 'answered'> {
  const declaredType = notJsonContentType(req.headers['content-type']);
  if (declaredType !== undefined) {
    const message =
      `The body is declared as ${declaredType}; send it as application/json ` +
      `(curl: -H 'content-type: application/json')`;
    refuse(res, path, { status: 415, message, code: 'unsupported_media_type' }, true);
    return 'answered';
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  const tooLarge: Refusal = {
    status: 413,
    message: `The request body is larger than this server's limit of ${maxBodyBytes} bytes`,
  };
  // Refused before reading, and the connection closed, so a huge upload costs nothing.
  if (declared > maxBodyBytes) {
    refuse(res, path, tooLarge, true);
    return 'answered';
  }
  const bodyTimer = setTimeout(() => {
    if (res.headersSent) return;
    refuse(res, path, { status: 408, message: `The body took over ${clientTimeoutMs} ms` }, true);
    req.destroy();
  }, clientTimeoutMs);
  let body: Buffer;
  try {
    const read = await readBody(req, maxBodyBytes);
    if (read === 'too-large') {
      refuse(res, path, tooLarge, true);
      return 'answered';
    }
    body = read;
  } catch {
    return 'answered'; // the client went away or timed out (answered above)
  } finally {
    clearTimeout(bodyTimer);
  }
  if (res.headersSent) return 'answered';
  // Bytes that cannot be JSON text: 400 as system-one.md's "body is not JSON".
  const notJson = notJsonBodyBytes(body);
  if (notJson !== undefined) {
    // Not JSON: on /v1/decisions nothing says it is OpenAI's, so System One answers (as
    // handleRoute does).
    const dialect = routeDialect(path) === 'decisions' ? 'system-one' : undefined;
    const refusal = {
      status: 400,
      message: notJsonBodyMessage(notJson),
      code: 'invalid_json',
    };
    const text = refusalBody(path, refusal, dialect);
    send(res, 400, { 'content-type': 'application/json' }, Buffer.from(text));
    return 'answered';
  }
  return body;
}
