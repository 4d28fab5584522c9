/**
 * JSON text as it leaves for the network, the one helper for every edge (`clef.fetch`, the
 * service worker's routes, the Node server).
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * JSON text with every lone surrogate written as its `\uXXXX` escape. A request may carry one
 * (`"\udc80"` is JSON, and Python keeps it), and the engine echoes it as Python writes it, raw;
 * UTF-8 cannot carry a raw one (it would go out as U+FFFD and a choice's probabilities would come
 * back under a key the client never sent). In JSON text a lone surrogate can only sit inside a
 * string, where its escape means the same code unit.
 */
export function escapeLoneSurrogates(json: string): string {
  return json.replace(LONE_SURROGATE, (unit) => `\\u${unit.charCodeAt(0).toString(16)}`);
}
