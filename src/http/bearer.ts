/**
 * `clef-web serve --api-key <key>`: every request must carry `Authorization: Bearer <key>`.
 *
 * Constant time: the presented token and the key are UTF-8 encoded; the token is copied into a
 * zeroed buffer exactly as long as the key (cut or padded), and every byte of that buffer is
 * XORed with the key's byte at the same place, the results ORed together, with the two lengths
 * XORed in as well. The loop always runs once per key byte, has no early exit and no branch on
 * a byte's value, so how long it takes depends on the key's length (fixed for the server's life)
 * and on the token's length (the client's own), never on how many bytes of the key the token
 * got right. No Node crypto (`timingSafeEqual`) and no async Web Crypto: the same code runs in a
 * page, a service worker and Node.
 *
 * Parsing (RFC 6750 §2.1, RFC 9110 §11.1): the scheme `Bearer` in any case, one or more spaces
 * or tabs, then the token (the rest of the value). No header, an empty one, another scheme
 * (`Basic ...`) or `Bearer` with no token: `missing` (no key was offered). A token that is not
 * the key: `wrong`.
 */

export type BearerResult = 'ok' | 'missing' | 'wrong';

const BEARER = /^bearer[ \t]+(.+)$/is;
const encoder = new TextEncoder();

/** Whether `key` can be sent in a header as it is: 1 to 4096 visible ASCII characters. */
export function isUsableApiKey(key: string): boolean {
  return /^[\x21-\x7e]{1,4096}$/.test(key);
}

/** Compares two strings' UTF-8 bytes in time independent of their contents (see the header). */
export function constantTimeEqual(presented: string, secret: string): boolean {
  const a = encoder.encode(presented);
  const b = encoder.encode(secret);
  const padded = new Uint8Array(b.length);
  padded.set(a.subarray(0, b.length));
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= padded[i]! ^ b[i]!;
  return diff === 0;
}

/** Checks an `Authorization` header value (null / undefined when absent) against `key`. */
export function checkBearer(headerValue: string | null | undefined, key: string): BearerResult {
  if (key === '') throw new TypeError('checkBearer: the API key must not be empty');
  const match = BEARER.exec(headerValue ?? '');
  if (match === null) return 'missing';
  return constantTimeEqual(match[1]!, key) ? 'ok' : 'wrong';
}

/** What to tell a client the check refused, in any dialect's error body. */
export function bearerFailureMessage(result: Exclude<BearerResult, 'ok'>): string {
  return result === 'missing'
    ? 'This server requires an API key: send it as Authorization: Bearer <key>.'
    : 'Incorrect API key provided.';
}
