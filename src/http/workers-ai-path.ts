/**
 * The Workers AI route, `/client/v4/accounts/<account>/ai/run/@cf/cloudflare/<model>`.
 *
 * Cloudflare's official SDK (`cloudflare` on npm) builds the path with its `path` template tag,
 * which percent-encodes each parameter as a whole: `ai.run('@cf/cloudflare/clef-nano', ...)`
 * posts to `.../ai/run/@cf%2Fcloudflare%2Fclef-nano` (`@` stays, `/` becomes `%2F`). Other
 * clients write the slashes literally, and Cloudflare's API takes both, so this does too: the
 * part after `/ai/run/` is percent-decoded once (`%2F`, `%2f`, `%40` ...; literal and encoded
 * slashes may be mixed) and must then read `@cf/cloudflare/<name>`, `<name>` being non-empty,
 * without `/` and without control characters. A doubly encoded `%252F` decodes to `%2F`, not to
 * a slash, so it does not match. Malformed percent-encoding (`%2`, `%zz`, bytes that are not
 * UTF-8) is no route: null, never a throw. The account segment is decoded the same way.
 *
 * Takes a URL's pathname (no query, no fragment).
 */

export interface WorkersAiPath {
  /** The account segment, decoded (any value is accepted: nothing is checked against it). */
  account: string;
  /** The full model name, decoded: `@cf/cloudflare/clef-nano`. */
  model: string;
  /** The name after `@cf/cloudflare/`: what the System One `model` field gets. */
  name: string;
}

const SHAPE = /^\/client\/v4\/accounts\/([^/]+)\/ai\/run\/(.+)$/;
const MODEL = /^@cf\/cloudflare\/([^/]+)$/;

/** Whether `s` holds a C0 control character or DEL. */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined; // URIError: malformed percent-encoding or not UTF-8
  }
}

/** The route's parts for a pathname, or null when it is not the Workers AI route. */
export function parseWorkersAiPath(pathname: string): WorkersAiPath | null {
  const shape = SHAPE.exec(pathname);
  if (shape === null) return null;
  const account = decode(shape[1]!);
  const model = decode(shape[2]!);
  if (account === undefined || model === undefined || account === '') return null;
  const name = MODEL.exec(model)?.[1];
  if (name === undefined || hasControl(name) || hasControl(account)) return null;
  return { account, model, name };
}
