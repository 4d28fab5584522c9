/**
 * JSON values as the fuzz generator builds them, and their text. Objects are entry lists (so a
 * body can hold duplicate keys and integer-like keys in written order), numbers are lexemes (so
 * `1.0`, `-0` and `1e400` reach the server as written), and `Raw` splices text in unchanged (for
 * lone surrogates written as raw code units, or deliberately broken JSON).
 */
export interface Num {
  num: string;
}
export interface Obj {
  obj: Array<[string, Node]>;
}
export interface Raw {
  raw: string;
}
export type Node = string | boolean | null | Num | Obj | Raw | Node[];

export const num = (lexeme: string): Num => ({ num: lexeme });
export const obj = (entries: Array<[string, Node]>): Obj => ({ obj: entries });
export const raw = (text: string): Raw => ({ raw: text });

export function isObj(n: Node): n is Obj {
  return typeof n === 'object' && n !== null && !Array.isArray(n) && 'obj' in n;
}

/** JSON text of a node, compact. Strings go through JSON.stringify (lone surrogates escaped). */
export function writeJson(node: Node): string {
  if (node === null || typeof node === 'boolean') return String(node);
  if (typeof node === 'string') return JSON.stringify(node);
  if (Array.isArray(node)) return `[${node.map(writeJson).join(',')}]`;
  if ('num' in node) return node.num;
  if ('raw' in node) return node.raw;
  return `{${node.obj.map(([k, v]) => `${JSON.stringify(k)}:${writeJson(v)}`).join(',')}}`;
}

/**
 * The plain JS value a node means once parsed (duplicate keys: first position, last value, as
 * Python's json.loads gives); numbers as JS numbers. For comparing echoed legends.
 */
export function plainValue(node: Node): unknown {
  if (node === null || typeof node === 'boolean' || typeof node === 'string') return node;
  if (Array.isArray(node)) return node.map(plainValue);
  if ('num' in node) return Number(node.num);
  if ('raw' in node) return JSON.parse(node.raw) as unknown;
  const out: Record<string, unknown> = {};
  for (const [k, v] of node.obj) out[k] = plainValue(v);
  return out;
}

/** Nested arrays `depth` levels deep around a string (depth 0: the string itself). */
export function nested(depth: number, inner: Node = 'x'): Raw {
  return raw('['.repeat(depth) + writeJson(inner) + ']'.repeat(depth));
}
