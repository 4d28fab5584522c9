/**
 * The byte-level BPE's pre-tokenizer (tokenizer.ts): the split regexes of the Qwen family, their
 * translation from Oniguruma to a JS RegExp, and GPT-2's byte-level alphabet.
 */
/** The split regex in Qwen3.5's tokenizer.json: combining marks (\p{M}) join letter runs. */
export const QWEN3_5_SPLIT_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** The split regex hard-coded in transformers' `Qwen2Tokenizer` (and Qwen2/Qwen3 files). */
export const QWEN2_SPLIT_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/**
 * transformers v5 builds these tokenizer classes' pipelines from their own code and takes only
 * vocab and merges from tokenizer.json, so `tokenizer_class` decides the split regex that
 * `AutoTokenizer` (the Clef reference) really uses.
 */
export const CLASS_SPLIT_REGEX: Record<string, string> = {
  Qwen2Tokenizer: QWEN2_SPLIT_REGEX,
  Qwen2TokenizerFast: QWEN2_SPLIT_REGEX,
  Qwen3_5Tokenizer: QWEN3_5_SPLIT_REGEX,
};

/** GPT-2's byte -> printable character table; entry b is the character for byte b. */
export function byteLevelAlphabet(): string[] {
  const table: string[] = new Array<string>(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    table[b] = String.fromCodePoint(printable ? b : next++);
  }
  return table;
}

/** Oniguruma folds these with ASCII letters under (?i): ſ -> s, Kelvin sign -> k. */
const EXTRA_FOLDS: Record<string, string> = { s: '\u017f', k: '\u212a' };

/**
 * Compiles a tokenizer.json Split regex (Oniguruma syntax) into a global Unicode JS RegExp.
 * Handles what Qwen-style patterns use: `(?i:...)` groups of literals, `\s`/`\S` with
 * Oniguruma's meaning (Unicode White_Space: JS `\s` adds U+FEFF and lacks U+0085), `\p{..}`
 * classes, lookahead. Anything JS cannot parse throws.
 */
export function compileSplitRegex(pattern: string): RegExp {
  let out = '';
  let caseless = 0; // depth inside (?i: ... )
  let inClass = false;
  const groupIsCaseless: boolean[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      i++;
      if (next === 's') out += '\\p{White_Space}';
      else if (next === 'S') out += '\\P{White_Space}';
      else if (next === 'p' || next === 'P') {
        const close = pattern.indexOf('}', i);
        out += '\\' + pattern.slice(i, close + 1);
        i = close;
      } else out += '\\' + next;
    } else if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
    } else if (ch === '[') {
      inClass = true;
      out += ch;
      if (pattern[i + 1] === '^') out += pattern[++i];
    } else if (pattern.startsWith('(?i:', i)) {
      groupIsCaseless.push(true);
      caseless++;
      out += '(?:';
      i += 3;
    } else if (ch === '(') {
      groupIsCaseless.push(false);
      out += ch;
    } else if (ch === ')') {
      if (groupIsCaseless.pop()) caseless--;
      out += ch;
    } else if (caseless > 0 && /[A-Za-z]/.test(ch)) {
      const lower = ch.toLowerCase();
      out += `[${lower}${lower.toUpperCase()}${EXTRA_FOLDS[lower] ?? ''}]`;
    } else out += ch;
  }
  return new RegExp(out, 'gu');
}
