/**
 * Token ids back to text for a byte-level BPE tokenizer.json (GPT-2's scheme, Qwen's file
 * format), written apart from src/clef/tokenizer: a check on what the engine fed the
 * model that does not go through the code under test. Added tokens decode to their content.
 */
import { readFileSync } from 'node:fs';

/** GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the rest to 256 + n. */
function unicodeToByte(): Map<string, number> {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const map = new Map<string, number>();
  let next = 256;
  for (let b = 0; b < 256; b++) map.set(String.fromCodePoint(printable(b) ? b : next++), b);
  return map;
}

interface TokenizerJson {
  model: { vocab: Record<string, number> };
  added_tokens: Array<{ id: number; content: string }>;
}

/** A decoder for the tokenizer.json at a path, or already parsed. */
export function byteLevelDecoder(
  tokenizerJson: string | TokenizerJson,
): (ids: readonly number[]) => string {
  const json =
    typeof tokenizerJson === 'string'
      ? (JSON.parse(readFileSync(tokenizerJson, 'utf8')) as TokenizerJson)
      : tokenizerJson;
  const pieces = new Map<number, { bytes?: string; text?: string }>();
  for (const [token, id] of Object.entries(json.model.vocab)) pieces.set(id, { bytes: token });
  for (const t of json.added_tokens) pieces.set(t.id, { text: t.content });
  const toByte = unicodeToByte();
  const utf8 = new TextDecoder('utf-8', { fatal: false });
  return (ids) => {
    let out = '';
    let pending: number[] = [];
    const flush = () => {
      out += utf8.decode(Uint8Array.from(pending));
      pending = [];
    };
    for (const id of ids) {
      const piece = pieces.get(id);
      if (piece === undefined) throw new Error(`id ${id} is not in the tokenizer`);
      if (piece.text !== undefined) {
        flush();
        out += piece.text;
        continue;
      }
      for (const ch of piece.bytes!) {
        const b = toByte.get(ch);
        if (b === undefined)
          throw new Error(`"${ch}" in token ${id} is not a byte-level character`);
        pending.push(b);
      }
    }
    flush();
    return out;
  };
}
