/**
 * One decision through the converted graphs, on any onnxruntime (web or node): the backbone over
 * the input in chunks with its running state (a split backbone: its groups in order for each
 * chunk, the residual stream handed from one to the next without leaving the device), head_memory over the prefix and state, head_decide
 * over the schema and suffix. Requests that share the prefix and state reuse the backbone state
 * and memory rows from an LRU prefix cache, so they run only the schema and suffix tokens.
 *
 * This file never imports the runtime: it receives tensors and sessions through `RuntimeAdapter`.
 */
import { buildHeadInputs, splitByQuestion, type SpanMeanSource } from '../clef/head-inputs.js';
import type { EncodedRequest } from '../clef/prompt.js';
import type { JobContext } from './queue.js';
import type { RuntimeAdapter, SessionLike, TensorLike } from './runtime-types.js';
import { TensorCounter } from './tensor-count.js';
import { DEFAULT_SCORE_BUDGET, chunkEnds, tailChunkEnds } from './chunk-plan.js';
import { cpuOutputBytes, nextTask, prefixKey, sameIds, tensorBytes } from './runner-util.js';

export type { RuntimeAdapter, SessionLike, TensorLike } from './runtime-types.js';

/**
 * One backbone graph: a single-graph package has one, reading `input_ids` and writing `hidden`;
 * a split one has several, run in this order, the first reading `input_ids`, the others the
 * previous group's `residual_out` as `residual_in`, the last writing `hidden`.
 */
export interface BackboneStage {
  session: SessionLike;
  /** Its own layers' state (names are global: `past_key.3` lives in the group running layer 3). */
  states: StateSpec[];
  /** The stream it reads (`input_ids` or `residual_in`) and writes (`residual_out` or `hidden`). */
  input: string;
  output: string;
}

export interface SessionRun {
  /** One array per question, in the encoded option order. */
  logits: Float32Array[];
  backboneMs: number;
  headMs: number;
  prefixHit: boolean;
  /** Tokens the backbone ran for this request. */
  backboneTokens: number;
}

export interface RunOptions {
  /** Look the state up in the prefix cache and keep it there (default true). */
  prefixCache?: boolean;
}

export interface RunnerGraphs {
  backbone: BackboneStage[];
  headMemory: SessionLike;
  headDecide: SessionLike;
}

/** The backbone's state inputs and the outputs that feed them, from the manifest. */
export interface StateSpec {
  input: string;
  output: string;
  /** Shape with the sequence axis (if any) as 0 for the empty start state. */
  emptyDims: number[];
  /** float16 for the KV cache of a package's kv16 graphs; float32 otherwise (and by default). */
  dtype?: 'float32' | 'float16';
}

export interface RunnerOptions {
  /** Backbone tokens per run; bounds activation memory. */
  chunkTokens: number;
  cacheBudgetBytes: number;
  /**
   * Tokens × keys one run may attend over (chunk-plan.ts): past it, chunks shrink as the state
   * grows, so attention scores stay bounded at long contexts. Default DEFAULT_SCORE_BUDGET.
   */
  scoreBudget?: number;
}

interface CacheEntry {
  ids: Int32Array;
  state: Map<string, TensorLike>;
  /** head_memory rows of positions [0, stateEnd): [1, stateEnd, width]. */
  memory: TensorLike;
  bytes: number;
}

export class ClefRunner {
  private readonly cache = new Map<string, CacheEntry>();
  private cacheBytes = 0;
  /** Session output bytes delivered to the CPU, plus getData() of GPU tensors (benchmarks). */
  private readbackBytes = 0;
  /** Every tensor made or received goes through it, so leaks can be counted. */
  private readonly tensors = new TensorCounter();
  private get scoreBudget(): number {
    return this.options.scoreBudget ?? DEFAULT_SCORE_BUDGET;
  }
  private readonly rt: RuntimeAdapter;
  private readonly graphs: RunnerGraphs;
  /** Every group's state, in group order. */
  private readonly states: StateSpec[];

  constructor(
    rt: RuntimeAdapter,
    graphs: RunnerGraphs,
    private readonly lexicon: SpanMeanSource,
    private readonly options: RunnerOptions,
    /** The head's width: memory rows are [1, tokens, headWidth]. */
    private readonly headWidth: number,
  ) {
    this.rt = this.tensors.adapter(rt);
    if (graphs.backbone.length === 0) throw new Error('the runner needs a backbone graph');
    this.states = graphs.backbone.flatMap((g) => g.states);
    this.graphs = {
      backbone: graphs.backbone.map((g) => ({ ...g, session: this.tensors.session(g.session) })),
      headMemory: this.tensors.session(graphs.headMemory),
      headDecide: this.tensors.session(graphs.headDecide),
    };
  }

  cacheStats(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.cacheBytes };
  }

  /**
   * Bytes read back to the CPU (cumulative; every output on the WASM back end), tensors alive
   * now, and how many of those the prefix cache holds.
   */
  counters(): { readbackBytes: number; liveTensors: number; cachedTensors: number } {
    let cachedTensors = 0;
    for (const e of this.cache.values()) cachedTensors += e.state.size + 1;
    return { readbackBytes: this.readbackBytes, liveTensors: this.tensors.count, cachedTensors };
  }

  async run(
    encoded: EncodedRequest,
    ctx: JobContext,
    { prefixCache = true }: RunOptions = {},
  ): Promise<SessionRun> {
    const ids = encoded.inputIds;
    const stateEnd = encoded.stateEnd;
    const t0 = performance.now();
    const key = prefixKey(ids, stateEnd);
    let entry = prefixCache ? this.cache.get(key) : undefined;
    if (entry && !sameIds(entry.ids, ids, stateEnd)) entry = undefined;
    const prefixHit = entry !== undefined;
    let backboneTokens = ids.length - stateEnd;
    let state: Map<string, TensorLike>;
    let memory: TensorLike;
    if (entry) {
      // LRU: a hit moves the entry to the back.
      this.cache.delete(key);
      this.cache.set(key, entry);
      state = entry.state;
      memory = entry.memory;
    } else {
      const prefix = await this.runPrefix(ids, stateEnd, ctx);
      state = prefix.state;
      memory = prefix.memory;
      backboneTokens += stateEnd;
      if (prefixCache) this.remember(key, ids, stateEnd, state, memory);
    }
    const cached = this.cache.get(key)?.state === state;
    let tail: { hidden: TensorLike; state: Map<string, TensorLike> } | null = null;
    try {
      tail = await this.runTail(ids, stateEnd, state, ctx);
      await ctx.enter?.('head');
      ctx.throwIfCancelled();
      const t1 = performance.now();
      const logits = await this.runHead(encoded, memory, tail.hidden);
      const t2 = performance.now();
      return { logits, backboneMs: t1 - t0, headMs: t2 - t1, prefixHit, backboneTokens };
    } finally {
      if (tail) {
        tail.hidden.dispose();
        for (const t of tail.state.values()) t.dispose();
      }
      if (!cached) {
        for (const t of state.values()) t.dispose();
        memory.dispose();
      }
    }
  }

  /** Empties the prefix cache (its tensors disposed). */
  private clearCache(): void {
    for (const e of this.cache.values()) {
      for (const t of e.state.values()) t.dispose();
      e.memory.dispose();
    }
    this.cache.clear();
    this.cacheBytes = 0;
  }

  async dispose(): Promise<void> {
    this.clearCache();
    await Promise.all([
      ...this.graphs.backbone.map((g) => g.session.release()),
      this.graphs.headMemory.release(),
      this.graphs.headDecide.release(),
    ]);
  }

  private emptyState(): Map<string, TensorLike> {
    const state = new Map<string, TensorLike>();
    for (const s of this.states) {
      const n = s.emptyDims.reduce((a, d) => a * d, 1);
      state.set(
        s.input,
        s.dtype === 'float16'
          ? this.rt.float16(new Uint16Array(n), s.emptyDims)
          : this.rt.float32(new Float32Array(n), s.emptyDims),
      );
    }
    return state;
  }

  /**
   * Runs one backbone chunk through every group; the old state is disposed unless `keep` holds
   * it. Each intermediate residual stream is disposed once the next group has read it.
   */
  private async backboneChunk(
    ids: readonly number[],
    start: number,
    end: number,
    state: Map<string, TensorLike>,
    keep: Map<string, TensorLike> | null,
  ): Promise<{ hidden: TensorLike; state: Map<string, TensorLike> }> {
    let stream = this.rt.int64(BigInt64Array.from(ids.slice(start, end), BigInt), [1, end - start]);
    const next = new Map<string, TensorLike>();
    try {
      for (const group of this.graphs.backbone) {
        const feeds: Record<string, TensorLike> = { [group.input]: stream };
        for (const s of group.states) feeds[s.input] = state.get(s.input)!;
        let out: Record<string, TensorLike>;
        try {
          out = await group.session.run(feeds);
          this.readbackBytes += cpuOutputBytes(out);
        } finally {
          stream.dispose();
        }
        for (const s of group.states) next.set(s.input, out[s.output]!);
        stream = out[group.output]!;
      }
    } catch (e) {
      for (const t of next.values()) t.dispose();
      throw e;
    }
    if (state !== keep) for (const t of state.values()) t.dispose();
    return { hidden: stream, state: next };
  }

  private async runPrefix(
    ids: readonly number[],
    stateEnd: number,
    ctx: JobContext,
  ): Promise<{ state: Map<string, TensorLike>; memory: TensorLike }> {
    let state = this.emptyState();
    let memory = this.rt.float32(new Float32Array(0), [1, 0, this.headWidth]);
    try {
      let start = 0;
      for (const end of chunkEnds(0, stateEnd, this.options.chunkTokens, this.scoreBudget)) {
        await nextTask();
        await ctx.enter?.('backbone');
        ctx.throwIfCancelled();
        const step = await this.backboneChunk(ids, start, end, state, null);
        start = end;
        state = step.state;
        try {
          const out = await this.graphs.headMemory.run({
            hidden: step.hidden,
            past_memory: memory,
          });
          this.readbackBytes += cpuOutputBytes(out);
          memory.dispose();
          memory = out.memory!;
        } finally {
          step.hidden.dispose();
        }
      }
    } catch (e) {
      for (const t of state.values()) t.dispose();
      memory.dispose();
      throw e;
    }
    return { state, memory };
  }

  private async runTail(
    ids: readonly number[],
    stateEnd: number,
    prefixState: Map<string, TensorLike>,
    ctx: JobContext,
  ): Promise<{ hidden: TensorLike; state: Map<string, TensorLike> }> {
    let state = prefixState;
    const parts: TensorLike[] = [];
    // A tail up to twice the chunk runs whole (joining chunks reads hidden states back from the
    // GPU and adds a run; 8 questions make a ~350-token tail) unless the state is so long that
    // its attention scores would pass the budget; longer tails keep the bound (chunk-plan.ts).
    const ends = tailChunkEnds(stateEnd, ids.length, this.options.chunkTokens, this.scoreBudget);
    try {
      let start = stateEnd;
      for (const end of ends) {
        await nextTask();
        await ctx.enter?.('backbone');
        ctx.throwIfCancelled();
        const step = await this.backboneChunk(ids, start, end, state, prefixState);
        start = end;
        state = step.state;
        parts.push(step.hidden);
      }
    } catch (e) {
      for (const p of parts) p.dispose();
      if (state !== prefixState) for (const t of state.values()) t.dispose();
      throw e;
    }
    if (parts.length === 1) return { hidden: parts[0]!, state };
    // A tail longer than one chunk: join its hidden states (rare: a very large schema).
    const datas = await Promise.all(parts.map((p) => p.getData() as Promise<Float32Array>));
    for (const p of parts) if (p.location === 'gpu-buffer') this.readbackBytes += tensorBytes(p);
    const width = parts[0]!.dims[2]!;
    const joined = new Float32Array(datas.reduce((n, d) => n + d.length, 0));
    let offset = 0;
    for (const d of datas) {
      joined.set(d, offset);
      offset += d.length;
    }
    for (const p of parts) p.dispose();
    return { hidden: this.rt.float32(joined, [1, joined.length / width, width]), state };
  }

  private async runHead(
    encoded: EncodedRequest,
    memory: TensorLike,
    hidden: TensorLike,
  ): Promise<Float32Array[]> {
    const inputs = await buildHeadInputs(encoded, this.lexicon);
    const feeds: Record<string, TensorLike> = { memory, hidden };
    for (const name of ['question_weights', 'option_weights', 'option_question', 'lex'] as const) {
      feeds[name] = this.rt.float32(inputs[name].data as Float32Array, inputs[name].dims);
    }
    feeds.question_type = this.rt.int64(
      inputs.question_type.data as BigInt64Array,
      inputs.question_type.dims,
    );
    try {
      const out = await this.graphs.headDecide.run(feeds);
      this.readbackBytes += cpuOutputBytes(out);
      const logits = (await out.logits!.getData()) as Float32Array;
      for (const t of Object.values(out)) t.dispose();
      return splitByQuestion(inputs.layout, logits);
    } finally {
      // memory and hidden belong to the caller (the cache, the tail run).
      for (const [name, t] of Object.entries(feeds)) {
        if (name !== 'hidden' && name !== 'memory') t.dispose();
      }
    }
  }

  private remember(
    key: string,
    ids: readonly number[],
    stateEnd: number,
    state: Map<string, TensorLike>,
    memory: TensorLike,
  ): void {
    let bytes = tensorBytes(memory) + 4 * stateEnd;
    for (const t of state.values()) bytes += tensorBytes(t);
    if (bytes > this.options.cacheBudgetBytes) return;
    while (this.cacheBytes + bytes > this.options.cacheBudgetBytes) {
      const [oldestKey, oldest] = this.cache.entries().next().value as [string, CacheEntry];
      this.cache.delete(oldestKey);
      this.cacheBytes -= oldest.bytes;
      for (const t of oldest.state.values()) t.dispose();
      oldest.memory.dispose();
    }
    this.cache.set(key, { ids: Int32Array.from(ids.slice(0, stateEnd)), state, memory, bytes });
    this.cacheBytes += bytes;
  }
}
