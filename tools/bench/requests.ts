/**
 * The bench's requests: states of a given token count, and schemas of Q choice questions with
 * O options each. Every miss run gets its own state (a numbered ticket), so the prefix cache
 * never serves it; hit runs repeat one state with new question ids.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeRequest } from '../../src/clef/prompt.js';
import { loadTokenizerSync, type ClefTokenizer } from '../../src/clef/tokenizer.js';
import type { PackageManifest } from '../../src/core/manifest.js';
import { validateRequest } from '../../src/protocol/validate.js';

export interface Scenario {
  /** Short id, e.g. `s2048-q8-o2-miss`. */
  id: string;
  stateTokens: number;
  questions: number;
  options: number;
  /** true: every run repeats one state after a warm-up decision on it (prefix-cache hits). */
  hit: boolean;
}

export function scenario(stateTokens: number, questions: number, options: number, hit = false) {
  const id = `s${stateTokens}-q${questions}-o${options}-${hit ? 'hit' : 'miss'}`;
  return { id, stateTokens, questions, options, hit };
}

const WORDS = (
  'customer order charged twice refund card invoice parcel delivery late address account ' +
  'password reset login error payment subscription cancel upgrade plan support ticket urgent ' +
  'email phone shipping tracking number damaged item return label warehouse billing receipt ' +
  'the a of to and in for on with my was is it this that we our please help thanks today'
).split(' ');

/** Deterministic filler text (xorshift over the word list), `seed` picks the sequence. */
function words(seed: number, count: number): string {
  let x = (seed * 2654435761 + 12345) >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out.push(WORDS[x % WORDS.length] as string);
  }
  return out.join(' ');
}

export class RequestMaker {
  readonly tokenizer: ClefTokenizer;
  readonly model: string;
  private readonly context: number;
  private readonly wordsPerToken: number;

  constructor(packageDir: string, manifest: PackageManifest) {
    const read = (role: string) => {
      const f = manifest.files.find((x) => x.role === role);
      if (!f) throw new Error(`${packageDir}: no ${role} file`);
      return JSON.parse(readFileSync(join(packageDir, f.path), 'utf8')) as object;
    };
    this.tokenizer = loadTokenizerSync(read('tokenizer'), read('tokenizer-config'));
    this.model = manifest.model.name;
    this.context = manifest.contextTokens;
    const sample = words(1, 400);
    this.wordsPerToken = 400 / this.tokenizer.encode(sample).length;
  }

  /** A state of about `tokens` tokens (within a few), distinct for each `seed`. */
  state(tokens: number, seed: number): string {
    const head = `Ticket ${seed}: `;
    let n = Math.max(1, Math.round(tokens * this.wordsPerToken));
    let text = head + words(seed, n);
    // Walk the word count towards the target; filler tokens are short, so few steps are needed.
    for (let step = 0; step < 8; step++) {
      const have = this.tokenizer.encode(text).length;
      if (Math.abs(have - tokens) <= 2) break;
      n = Math.max(1, Math.round(n * (tokens / have)));
      text = head + words(seed, n);
    }
    return text;
  }

  body(state: string, questions: number, options: number, tag: string): object {
    const qs: Record<string, object> = {};
    for (let q = 0; q < questions; q++) {
      const criteria: Record<string, null> = {};
      for (let o = 0; o < options; o++) criteria[`o${o}`] = null;
      qs[`${tag}${q}`] = { type: 'choice', instructions: `Pick option ${q}.`, criteria };
    }
    return { model: this.model, state, questions: qs };
  }

  /** Input tokens of a body, as the engine encodes it (throws when over the context). */
  tokens(body: object): { input: number; state: number } {
    const request = validateRequest(body, { models: [this.model] });
    const e = encodeRequest(this.tokenizer, request, { maxTokens: this.context });
    return { input: e.inputIds.length, state: e.stateTokens };
  }

  /** Whether a scenario fits the model's context. */
  fits(s: Scenario): boolean {
    try {
      this.tokens(this.body(this.state(s.stateTokens, 0), s.questions, s.options, 'f'));
      return true;
    } catch {
      return false;
    }
  }

  /** `runs` request bodies for a scenario (+1 warm-up body first for hit scenarios). */
  bodies(s: Scenario, runs: number, seedBase: number): object[] {
    if (s.hit) {
      const state = this.state(s.stateTokens, seedBase);
      return Array.from({ length: runs + 1 }, (_, r) =>
        this.body(state, s.questions, s.options, `r${r}q`),
      );
    }
    return Array.from({ length: runs }, (_, r) =>
      this.body(this.state(s.stateTokens, seedBase + r), s.questions, s.options, 'q'),
    );
  }
}
