/**
 * A trial of a design, not the product (dev only): does a word that states how a thing is ("fine",
 * "down", "works") carry that thing's evidence, where a bag of words cannot tell "the vpn is fine,
 * email is down" from "email is fine, the vpn is down"?
 *
 *   npx tsx tools/bench/pointer-trial.ts [--tasks helpdesk,failing,gate,urgency] [--label NAME]
 *     [--kinds bag,pointer,flip,bilinear] [--with-pairs]
 *
 * (`--with-pairs` adds train-pairs.jsonl's contrasting pairs to each ops question's training.)
 *
 * Two word-level softmax regressions on each of the project's small tasks (data/tasks), fitted
 * on the training file and judged on its test files with the figures train-small.ts reports:
 *
 *   bag:      logit_c = b_c + (1/n) Σ_t W[c, w_t]
 *   pointer:  logit_c = b_c + (1/n) Σ_t (W[c, w_t] + γ[w_t] · W[c, p(t)])
 *
 * and a third, `bilinear`, where the word pointed at scales a vector of the word that points:
 *
 *   bilinear: logit_c = b_c + (1/n) Σ_t (W[c, w_t] + a[p(t)] · U[c, w_t])
 *
 * (one number a word, a, for what it does to the words after it, "delete" against "keep"; one
 * more vector a word, U, for what it is worth under such a word, "prod" against "temp"),
 * over the state's words t outside a negation's scope (the trainer's scope layer, scope.ts, on
 * words), where p(t) is the last content word before t in its clause (none after a break; not a
 * word of FUNCTION_WORDS, a cue or a word in scope). Each word learns one number γ: how much of
 * the thing named before it it carries, with its sign ("down" > 0, "fine" < 0). Both models choose
 * the scope reading (none, every, nominal), λ (on W) and μ (on γ) by 5-fold cross-fitting, by
 * out-of-fold cross-entropy, as `clef-web train` does. The gradient is checked against finite
 * differences on every run before any fit.
 *
 * The product's model has character features, pooling weights and a cosine read-out, so these
 * bag figures sit below it; the trial measures what the pointer adds to a bag, not the product.
 */
import { parseArgs } from 'node:util';
import { minimize } from '../../src/build/train/lbfgs.js';
import {
  SCOPE_CUE,
  SCOPE_READINGS,
  SCOPE_STOP,
  scopeMark,
  type ScopeCues,
} from '../../src/build/train/scope.js';
import { loadTask, summarise, type Scored, type Task } from './small-tasks.js';
import { writeResults } from './results-file.js';
import {
  addPenalty,
  crossEntropy,
  FUNCTION_WORDS,
  gradientError,
  misses,
  outOfFold,
  softmaxStep,
  tokens,
  wordSetup,
} from './word-model.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: 'helpdesk,failing,gate,urgency' },
    label: { type: 'string', default: 'pointer-trial' },
    kinds: { type: 'string', default: 'bag,pointer,flip,bilinear' },
    'with-pairs': { type: 'boolean', default: false },
  },
});

const LAMBDAS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2];
const MUS = [1e-4, 1e-3, 1e-2, 1e-1];
/** The bilinear term's product is penalised twice (on a and on U): its grid reaches lower. */
const BILINEAR_MUS = [1e-7, 1e-6, 1e-5, 1e-4, 1e-3];
const FOLDS = 5;

/** A text as kept words and, per word, the word it points at (or null). */
interface Encoded {
  words: string[];
  pointers: Array<string | null>;
  /** Whether the word's own evidence counts (not in a negation's scope). */
  own: boolean[];
  /** The pointer term's sign: −1 for a word in a negation's scope under `flip`. */
  signs: number[];
}

function encode(text: string, reading: ScopeCues | null, flip = false): Encoded {
  const words: string[] = [];
  const pointers: Array<string | null> = [];
  const own: boolean[] = [];
  const signs: number[] = [];
  const push = (word: string, pointer: string | null, counts = true, sign = 1): void => {
    words.push(word);
    pointers.push(pointer);
    own.push(counts);
    signs.push(sign);
  };
  let open = false;
  let last: string | null = null;
  for (const token of tokens(text)) {
    const mark = reading === null ? scopeMark(token, 'every') : scopeMark(token, reading);
    const word = token.trim();
    if (mark === SCOPE_STOP) {
      open = false;
      last = null;
      push(word, null);
      continue;
    }
    if (mark === SCOPE_CUE) {
      open = reading !== null;
      // Under `flip` a cue's own pointer would add to the thing it negates.
      push(word, flip ? null : last);
      continue;
    }
    if (open) {
      // Under `flip` a word in scope keeps its pointer with the sign turned: "never down".
      if (flip) push(word, last, false, -1);
      continue;
    }
    push(word, last);
    if (!FUNCTION_WORDS.has(word)) last = word;
  }
  return { words, pointers, own, signs };
}

/** One row per text: (word, pointed-at word or −1) ids with weight 1/n (n: the words that count). */
interface Row {
  word: Int32Array;
  pointer: Int32Array;
  /** 1 where the word's own evidence counts. */
  own: Uint8Array;
  sign: Float64Array;
  n: number;
}

function rows(texts: readonly Encoded[], vocab: Map<string, number>): Row[] {
  return texts.map(({ words, pointers, own, signs }) => {
    const known = words.flatMap((w, i) => {
      const id = vocab.get(w);
      if (id === undefined) return [];
      const p = pointers[i];
      return [{ id, p: p === null ? -1 : (vocab.get(p) ?? -1), own: own[i], sign: signs[i] }];
    });
    return {
      word: Int32Array.from(known, (k) => k.id),
      pointer: Int32Array.from(known, (k) => k.p),
      own: Uint8Array.from(known, (k) => (k.own === true ? 1 : 0)),
      sign: Float64Array.from(known, (k) => k.sign as number),
      n: Math.max(own.filter(Boolean).length, 1),
    };
  });
}

interface Fitted {
  logits(row: Row): Float64Array;
  gamma: Float64Array;
}

/** Parameters: W [C, V], b [C], then γ [V] when `pointer`. Returns the objective and gradient. */
function objective(data: Row[], y: Int32Array, C: number, V: number, lambda: number, mu: number) {
  const forward = (x: Float64Array, row: Row, z: Float64Array, pointer: boolean): void => {
    for (let c = 0; c < C; c++) z[c] = x[C * V + c] as number;
    for (let i = 0; i < row.word.length; i++) {
      const w = row.word[i] as number;
      const p = row.pointer[i] as number;
      const g = pointer && p >= 0 ? (x[C * V + C + w] as number) * (row.sign[i] as number) : 0;
      const own = row.own[i] === 1 ? 1 : 0;
      for (let c = 0; c < C; c++) {
        const mine = own * (x[c * V + w] as number);
        z[c] = (z[c] as number) + (mine + (g === 0 ? 0 : g * (x[c * V + p] as number))) / row.n;
      }
    }
  };
  const evaluate = (x: Float64Array, grad: Float64Array, pointer: boolean): number => {
    grad.fill(0);
    const z = new Float64Array(C);
    let loss = 0;
    data.forEach((row, r) => {
      forward(x, row, z, pointer);
      const d = softmaxStep(z, y[r] as number, data.length);
      loss += crossEntropy(z, y[r] as number);
      for (let c = 0; c < C; c++) grad[C * V + c] = (grad[C * V + c] as number) + (d[c] as number);
      for (let i = 0; i < row.word.length; i++) {
        const w = row.word[i] as number;
        const p = row.pointer[i] as number;
        const gi = C * V + C + w;
        const sign = row.sign[i] as number;
        const g = pointer && p >= 0 ? (x[gi] as number) * sign : 0;
        for (let c = 0; c < C; c++) {
          const dc = (d[c] as number) / row.n;
          if (row.own[i] === 1) grad[c * V + w] = (grad[c * V + w] as number) + dc;
          if (pointer && p >= 0) {
            grad[c * V + p] = (grad[c * V + p] as number) + dc * g;
            grad[gi] = (grad[gi] as number) + dc * sign * (x[c * V + p] as number);
          }
        }
      }
    });
    loss = addPenalty(loss / data.length, x, grad, 0, C * V, lambda);
    return pointer ? addPenalty(loss, x, grad, C * V + C, x.length, mu) : loss;
  };
  return { forward, evaluate };
}

/**
 * The bilinear model's objective. Parameters: W [C, V], b [C], U [C, V], a [V]; λ on W, μ on U
 * and a. The product a · U is zero with zero gradient at a = U = 0, so the fit starts from
 * a = A_START.
 */
const A_START = 0.5;
function bilinearObjective(
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  lambda: number,
  mu: number,
) {
  const U0 = C * V + C;
  const A0 = U0 + C * V;
  const forward = (x: Float64Array, row: Row, z: Float64Array): void => {
    for (let c = 0; c < C; c++) z[c] = x[C * V + c] as number;
    for (let i = 0; i < row.word.length; i++) {
      const w = row.word[i] as number;
      const p = row.pointer[i] as number;
      const a = p >= 0 ? (x[A0 + p] as number) * (row.sign[i] as number) : 0;
      const own = row.own[i] === 1 ? 1 : 0;
      for (let c = 0; c < C; c++) {
        const term = own * (x[c * V + w] as number) + a * (x[U0 + c * V + w] as number);
        z[c] = (z[c] as number) + term / row.n;
      }
    }
  };
  const evaluate = (x: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    const z = new Float64Array(C);
    let loss = 0;
    data.forEach((row, r) => {
      forward(x, row, z);
      const d = softmaxStep(z, y[r] as number, data.length);
      loss += crossEntropy(z, y[r] as number);
      for (let c = 0; c < C; c++) grad[C * V + c] = (grad[C * V + c] as number) + (d[c] as number);
      for (let i = 0; i < row.word.length; i++) {
        const w = row.word[i] as number;
        const p = row.pointer[i] as number;
        const sign = row.sign[i] as number;
        const a = p >= 0 ? (x[A0 + p] as number) * sign : 0;
        for (let c = 0; c < C; c++) {
          const dc = (d[c] as number) / row.n;
          if (row.own[i] === 1) grad[c * V + w] = (grad[c * V + w] as number) + dc;
          if (p >= 0) {
            const u = U0 + c * V + w;
            grad[u] = (grad[u] as number) + dc * a;
            grad[A0 + p] = (grad[A0 + p] as number) + dc * sign * (x[u] as number);
          }
        }
      }
    });
    loss = addPenalty(loss / data.length, x, grad, 0, C * V, lambda);
    return addPenalty(loss, x, grad, U0, x.length, mu);
  };
  return { forward, evaluate, size: A0 + V, a0: A0 };
}

function fitBilinear(
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  lambda: number,
  mu: number,
): Fitted {
  const { forward, evaluate, size, a0 } = bilinearObjective(data, y, C, V, lambda, mu);
  const start = new Float64Array(size);
  start.fill(A_START, a0);
  const { x } = minimize((p, g) => evaluate(p, g), start, { maxIterations: 500 });
  return {
    logits: (row) => {
      const z = new Float64Array(C);
      forward(x, row, z);
      return z;
    },
    gamma: x.slice(a0),
  };
}

function fit(
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  pointer: boolean,
  lambda: number,
  mu: number,
): Fitted {
  const { forward, evaluate } = objective(data, y, C, V, lambda, mu);
  const size = C * V + C + (pointer ? V : 0);
  const { x } = minimize((p, g) => evaluate(p, g, pointer), new Float64Array(size), {
    maxIterations: 500,
  });
  return {
    logits: (row) => {
      const z = new Float64Array(C);
      forward(x, row, z, pointer);
      return z;
    },
    gamma: pointer ? x.slice(C * V + C) : new Float64Array(V),
  };
}

/** The objective's gradient against central differences on a random problem: max relative error. */
function gradientCheck(): number {
  let seed = 12345;
  const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const C = 3;
  const V = 7;
  const data: Row[] = Array.from({ length: 6 }, () => {
    const n = 2 + Math.floor(random() * 4);
    return {
      word: Int32Array.from({ length: n }, () => Math.floor(random() * V)),
      pointer: Int32Array.from({ length: n }, () => Math.floor(random() * (V + 1)) - 1),
      own: Uint8Array.from({ length: n }, () => (random() < 0.7 ? 1 : 0)),
      sign: Float64Array.from({ length: n }, () => (random() < 0.7 ? 1 : -1)),
      n: n + 1,
    };
  });
  const y = Int32Array.from(data, () => Math.floor(random() * C));
  const pointer = objective(data, y, C, V, 0.01, 0.03);
  const bilinear = bilinearObjective(data, y, C, V, 0.01, 0.03);
  const at = (size: number) => Float64Array.from({ length: size }, () => random() - 0.5);
  const worst = gradientError((x, g) => pointer.evaluate(x, g, true), at(C * V + C + V));
  return Math.max(worst, gradientError(bilinear.evaluate, at(bilinear.size)));
}

/**
 * The models compared: the bag; the bag with the pointer; and the pointer where a word in a
 * negation's scope leaves the bag but keeps its pointer with the sign turned, and a cue points
 * at nothing ("the vpn was never down": "down" takes the vpn's evidence away).
 */
type Kind = 'bag' | 'pointer' | 'flip' | 'bilinear';
const KINDS: readonly Kind[] = ['bag', 'pointer', 'flip', 'bilinear'];

function fitKind(
  kind: Kind,
  data: Row[],
  y: Int32Array,
  C: number,
  V: number,
  lambda: number,
  mu: number,
): Fitted {
  if (kind === 'bilinear') return fitBilinear(data, y, C, V, lambda, mu);
  return fit(data, y, C, V, kind !== 'bag', lambda, mu);
}

interface Choice {
  reading: ScopeCues | null;
  lambda: number;
  mu: number;
  outOfFold: number;
}

function runTask(task: Task) {
  const { labels, C, y, vocab, V, fold } = wordSetup(
    task.train,
    (text) => encode(text, null).words,
    FOLDS,
  );
  const choose = (kind: Kind): Choice => {
    const pointer = kind !== 'bag';
    const flip = kind === 'flip';
    let best: Choice | null = null;
    for (const reading of flip ? SCOPE_READINGS : [null, ...SCOPE_READINGS]) {
      const data = rows(
        task.train.map((l) => encode(l.text, reading, flip)),
        vocab,
      );
      for (const lambda of LAMBDAS)
        for (const mu of kind === 'bilinear' ? BILINEAR_MUS : pointer ? MUS : [0]) {
          const loss = outOfFold(data, y, fold, FOLDS, (rows, ys) => {
            const model = fitKind(kind, rows, ys, C, V, lambda, mu);
            return (row) => model.logits(row);
          });
          if (best === null || loss < best.outOfFold)
            best = { reading, lambda, mu, outOfFold: loss };
        }
    }
    return best as Choice;
  };
  const judge = (kind: Kind) => {
    const pointer = kind !== 'bag';
    const flip = kind === 'flip';
    const choice = choose(kind);
    const data = rows(
      task.train.map((l) => encode(l.text, choice.reading, flip)),
      vocab,
    );
    const model = fitKind(kind, data, y, C, V, choice.lambda, choice.mu);
    const scored: Scored[] = task.test.map((line) => {
      const [row] = rows([encode(line.text, choice.reading, flip)], vocab) as [Row];
      const z = model.logits(row);
      const max = Math.max(...z);
      const e = Array.from(z, (v) => Math.exp(v - max));
      const s = e.reduce((a, b) => a + b, 0);
      return {
        p: new Map(labels.map((l, c) => [l, (e[c] as number) / s])),
        label: line.label,
        line,
      };
    });
    const words = [...vocab.keys()];
    const order = [...model.gamma.keys()].sort(
      (a, b) => (model.gamma[a] as number) - (model.gamma[b] as number),
    );
    const show = (ks: number[]) =>
      ks.map((k) => `${words[k]} ${(model.gamma[k] as number).toFixed(2)}`);
    return {
      choice,
      figures: summarise(task, scored),
      misses: misses(scored),
      gammaLowest: pointer ? show(order.slice(0, 8)) : [],
      gammaHighest: pointer ? show(order.slice(-8).reverse()) : [],
    };
  };
  const only = (values.kinds as string).split(',');
  const models = Object.fromEntries(
    KINDS.filter((k) => only.includes(k)).map((k) => [k, judge(k)]),
  ) as Partial<Record<Kind, ReturnType<typeof judge>>>;
  // The rule `clef-web train` keeps a layer by: the lowest out-of-fold cross-entropy.
  const ran = KINDS.filter((k) => models[k] !== undefined);
  const kept = ran.reduce((a, b) =>
    models[b]!.choice.outOfFold < models[a]!.choice.outOfFold ? b : a,
  );
  return { task: task.name, ...models, kept };
}

const checked = gradientCheck();
console.log(
  `gradient against central differences: worst relative error ${checked.toExponential(2)}`,
);
if (!(checked < 1e-5)) throw new Error(`the pointer objective's gradient is wrong (${checked})`);
const results = [];
const pct = (x: number | null | undefined): string =>
  x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`;
for (const name of (values.tasks as string).split(',')) {
  const r = runTask(loadTask(name, values['with-pairs']));
  results.push(r);
  console.log(`\n${r.task}`);
  for (const which of KINDS) {
    if (r[which] === undefined) continue;
    const { choice, figures } = r[which];
    const shown = Object.entries(figures)
      .map(([k, v]) => `${k} ${k === 'aurocOther' ? (v as number).toFixed(3) : pct(v)}`)
      .join(', ');
    console.log(
      `  ${which}: out of fold ${choice.outOfFold.toFixed(3)} (scope ${choice.reading ?? 'none'}, λ ${choice.lambda}, μ ${choice.mu}); ${shown}`,
    );
  }
  console.log(`  kept (lower out of fold): ${r.kept}`);
  for (const which of ['pointer', 'flip', 'bilinear'] as const) {
    if (r[which] === undefined) continue;
    console.log(`  ${which} γ lowest: ${r[which].gammaLowest.join(', ')}`);
    console.log(`  ${which} γ highest: ${r[which].gammaHighest.join(', ')}`);
  }
}
writeResults(values.label as string, { gradientCheck: checked, results });
