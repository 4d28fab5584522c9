/**
 * The Node engine's sessions, shared: strict feeds (a package for another engine version is
 * refused, not run wrongly) and one ClefRunner per chunk size over the same sessions.
 */
import {
  ClefRunner,
  type RunnerGraphs,
  type RuntimeAdapter,
  type SessionLike,
} from '../core/runner.js';
import type { SpanMeanSource } from '../clef/head-inputs.js';

export function checkChunkTokens(chunkTokens: number): void {
  if (!Number.isInteger(chunkTokens) || chunkTokens < 1) {
    throw new RangeError(`chunkTokens must be a positive integer, not ${chunkTokens}`);
  }
}

/** A session whose release() does nothing: runners other than the first share the sessions. */
function borrowed(session: SessionLike): SessionLike {
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    run: (feeds) => session.run(feeds),
    release: async () => undefined,
  };
}

/**
 * One ClefRunner per chunk size, all on the same three sessions (loaded once: for the real model
 * a second copy of the weights would be gigabytes). The default runner owns the sessions.
 */
export class RunnerSet {
  private readonly runners = new Map<number, ClefRunner>();

  constructor(
    private readonly adapter: RuntimeAdapter,
    private readonly graphs: RunnerGraphs,
    private readonly lexicon: SpanMeanSource,
    readonly defaultChunkTokens: number,
    private readonly cacheBudgetBytes: number,
    /** The head's width (memory rows are [1, tokens, width]). */
    private readonly headWidth: number,
    private readonly scoreBudget?: number,
  ) {}

  get(chunkTokens: number = this.defaultChunkTokens): ClefRunner {
    checkChunkTokens(chunkTokens);
    let runner = this.runners.get(chunkTokens);
    if (runner === undefined) {
      const owner = chunkTokens === this.defaultChunkTokens;
      const g = this.graphs;
      const graphs = owner
        ? g
        : {
            backbone: g.backbone.map((b) => ({ ...b, session: borrowed(b.session) })),
            headMemory: borrowed(g.headMemory),
            headDecide: borrowed(g.headDecide),
          };
      runner = new ClefRunner(
        this.adapter,
        graphs,
        this.lexicon,
        {
          chunkTokens,
          cacheBudgetBytes: this.cacheBudgetBytes,
          ...(this.scoreBudget !== undefined ? { scoreBudget: this.scoreBudget } : {}),
        },
        this.headWidth,
      );
      this.runners.set(chunkTokens, runner);
    }
    return runner;
  }

  async dispose(): Promise<void> {
    const owner = this.get();
    for (const runner of this.runners.values()) if (runner !== owner) await runner.dispose();
    await owner.dispose();
    this.runners.clear();
  }
}
