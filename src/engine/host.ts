/**
 * The worker side of the page API: loads a package, picks a device (falling back to WASM when
 * WebGPU is missing or fails), and serves decisions one at a time from a queue. Every method
 * returns a WireResult, so failures reach the page as typed errors, never strings or hangs.
 * The load's steps (package, device plan, sessions, info) are in host-load.ts.
 */
import { calibrationAsk, type CalibrationAsk } from '../calibrate/index.js';
import { checkCalibrationAsk, decide, decisionModel, type DecisionModel } from '../core/decide.js';
import { probeCapabilities } from './capabilities.js';
import { AbortedError, DisposedError } from '../wire/errors.js';
import { chooseKv, type KvChoice } from './kv-choice.js';
import { openPackage, type PackageSource } from './package-fetch.js';
import type { EngineHooks } from './hooks.js';
import { readOwnFiles, result } from './host-util.js';
import { hostInfoBase, openOnDevices, openPlanned } from './host-load.js';
import { cpuDevice, deviceOf, type DeviceName } from '../core/devices.js';
import { LaneQueue, type DecisionStage, type JobContext } from '../core/queue.js';
import type { RunOptions } from '../core/runner.js';
import type { DecisionSession, RuntimeStarter, SessionFactory, SessionOptions } from './session.js';
import { WARM_UP_TRIES, warmUp, type WarmUp } from './warm-up.js';
import { watchThreadWorkers, type ThreadWorkerNotice } from './thread-watch.js';
import {
  type AnswerWire,
  type DecideWireOptions,
  type LoadOptionsWire,
  type LoadProgress,
  type WireResult,
  type WorkerApi,
} from '../wire/wire.js';
import { type HostInfo } from '../wire/telemetry.js';

interface DecideOptions {
  ask?: CalibrationAsk | null;
  /** Send the head's logits with the answer. */
  logits?: boolean;
  /** Calls EngineHooks.stage (not for the engine's own warm-up). */
  hooks?: boolean;
  prefixCache?: boolean;
}

export class EngineHost implements WorkerApi {
  /** The loaded package's manifest: its file bytes are let go once the sessions hold them. */
  private model: DecisionModel | null = null;
  private session: DecisionSession | null = null;
  private options: LoadOptionsWire | null = null;
  private infoBase: Omit<HostInfo, 'counters'> | null = null;
  private readonly queue = new LaneQueue(1);
  private disposed = false;
  private readonly counters = { decisions: 0, backboneTokens: 0, prefixHits: 0, prefixMisses: 0 };
  /** The engine's own warm-up decision, until it has settled (not a request: not pending). */
  private warming: WarmUp | null = null;

  constructor(
    private readonly createSession: SessionFactory,
    private readonly startRuntime?: RuntimeStarter,
    /** Test and benchmark instrumentation; the shipped worker passes none. */
    private readonly hooks: EngineHooks = {},
  ) {}

  load(
    options: LoadOptionsWire,
    onProgress?: (p: LoadProgress) => void,
    onThreadWorker?: (notice: ThreadWorkerNotice) => void,
  ): Promise<WireResult<HostInfo>> {
    const unwatch = onThreadWorker
      ? watchThreadWorkers((n) => void Promise.resolve(onThreadWorker(n)).catch(() => undefined))
      : null;
    return result(async () => {
      const started = performance.now();
      this.options = options;
      this.hooks.loading?.(options);
      const report = (p: LoadProgress) => onProgress?.(p);
      const planned = await openPlanned(options, report, this.hooks, this.startRuntime);
      const own = await readOwnFiles(planned.pkg);
      const model = decisionModel(planned.pkg.manifest, own.tokenizer, own.calibration);
      report({ phase: 'compile', loadedBytes: 0, totalBytes: 0 });
      const compileStart = performance.now();
      const opened = await openOnDevices(planned, options, this.hooks, (pkg, device, threads, kv) =>
        this.openSession(pkg, device, threads, kv),
      );
      this.session = opened.session;
      await planned.early?.catch(() => undefined);
      // The runtime copied graphs and weights into its own memory (wasm heap or GPU buffers), and
      // the lexicon keeps its rows: the session factory let each group's fetched bytes go as soon
      // as its session existed (docs/benchmarks.md). A later WASM fallback fetches them again.
      this.model = model;
      this.infoBase = hostInfoBase(options, planned.pkg, opened, {
        started,
        compileStart,
        tokenizerMs: own.tokenizerMs,
      });
      if (options.warmUp !== false) {
        const warming = warmUp({
          modelName: planned.pkg.manifest.model.name,
          queue: this.queue,
          decide: (body, ctx) => this.decide(body, ctx, { hooks: false, prefixCache: false }),
          counters: this.counters,
          disposed: () => this.disposed,
          stage: this.hooks.warmUpStage?.bind(this.hooks),
          tries: deviceOf(this.session.device).warmUpRetries ? WARM_UP_TRIES : 1,
          finished: (ms) => {
            this.infoBase!.loadMs = { ...this.infoBase!.loadMs, warmup: ms };
          },
        });
        this.warming = warming;
        void warming.settled.finally(() => {
          if (this.warming === warming) this.warming = null;
        });
      }
      report({ phase: 'ready', loadedBytes: 0, totalBytes: 0 });
      return this.snapshot();
    }).finally(() => unwatch?.());
  }

  systemone(
    id: number,
    body: unknown,
    options: DecideWireOptions = {},
  ): Promise<WireResult<AnswerWire>> {
    return result(() => {
      if (this.disposed || !this.session) throw new DisposedError('No model is loaded');
      const { calibration, logits = false } = options ?? {};
      const ask = calibration === undefined ? null : calibrationAsk(calibration);
      checkCalibrationAsk(this.model!, ask); // refuse before queueing
      return this.queue.push(id, (ctx) => this.decide(body, ctx, { ask, logits }));
    });
  }

  async cancel(id: number): Promise<boolean> {
    return this.queue.cancel(id);
  }

  async lifeline(name: string): Promise<boolean> {
    const locks = globalThis.navigator?.locks;
    if (!locks) return false;
    await new Promise<void>((held) => {
      // Held until this worker ends: the callback's promise never settles.
      void locks.request(name, () => {
        held();
        return new Promise<never>(() => undefined);
      });
    });
    return true;
  }

  info(): Promise<WireResult<HostInfo>> {
    return result(() => this.snapshot());
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.queue.rejectAll(new DisposedError());
    await this.session?.dispose();
    this.session = null;
  }

  private snapshot(): HostInfo {
    if (!this.infoBase || !this.session) throw new DisposedError('No model is loaded');
    const cache = this.session.cacheStats();
    const session = this.session.counters?.();
    const info: HostInfo = {
      ...this.infoBase,
      device: this.session.device,
      counters: {
        ...this.counters,
        cacheEntries: cache.entries,
        cacheBytes: cache.bytes,
        readbackBytes: session?.readbackBytes ?? 0,
        pending: this.queue.size - (this.warming?.inQueue() ? 1 : 0),
        tabs: 1,
        warmingUp: this.warming !== null,
        liveTensors: session?.liveTensors ?? 0,
        cachedTensors: session?.cachedTensors ?? 0,
      },
    };
    return this.hooks.info?.(info) ?? info;
  }

  /**
   * The job's context with stages: an abort says where it stopped ("while running (head)"), and
   * EngineHooks.stage runs at each. The second 'backbone' entry is the first point between two
   * backbone chunks.
   */
  private staged(ctx: JobContext): JobContext {
    let stage: DecisionStage = 'encoding';
    let backboneEntries = 0;
    return {
      cancelled: () => ctx.cancelled(),
      throwIfCancelled: () => {
        if (ctx.cancelled())
          throw new AbortedError(`The request was aborted while running (${stage})`);
      },
      enter: async (next) => {
        stage = next;
        const between = next !== 'backbone' || ++backboneEntries === 2;
        if (between && this.hooks.stage && this.session) {
          await this.hooks.stage(next, ctx, this.session);
        }
      },
    };
  }

  private async decide(
    body: unknown,
    job: JobContext,
    { ask = null, logits = false, hooks = true, prefixCache = true }: DecideOptions = {},
  ): Promise<AnswerWire> {
    const ctx = hooks ? this.staged(job) : job;
    const t0 = performance.now();
    /** The device that ran it: a decision that answers has run. */
    let device: DeviceName | null = null;
    const decided = await decide(
      this.model!,
      body,
      async (encoded) => {
        await ctx.enter!('encoding');
        ctx.throwIfCancelled();
        const out = await this.runWithRecovery(encoded, ctx, { prefixCache });
        device = this.session!.device; // WASM, when a lost GPU moved the engine there
        return out;
      },
      ask,
    );
    const { run } = decided;
    this.counters.decisions++;
    this.counters.backboneTokens += run.backboneTokens;
    if (run.prefixHit) this.counters.prefixHits++;
    else this.counters.prefixMisses++;
    // The body crosses once, as its JSON text: the page reads the response object back from it.
    return {
      json: decided.json,
      timings: {
        encodeMs: decided.encodeMs,
        backboneMs: run.backboneMs,
        headMs: run.headMs,
        totalMs: performance.now() - t0,
        prefixHit: run.prefixHit,
        backboneTokens: run.backboneTokens,
      },
      device: device!,
      ...(logits ? { logits: run.logits.map((l) => Array.from(l)) } : {}),
      ...(decided.calibrated ? { calibrated: decided.calibrated } : {}),
      ...(decided.untrained ? { untrained: decided.untrained } : {}),
    };
  }

  /** The sessions on one device, with the load's options (at load, and on a move to WASM). */
  private openSession(
    pkg: PackageSource,
    device: DeviceName,
    threads: number,
    kv: KvChoice,
  ): Promise<DecisionSession> {
    const options = this.options!;
    const sessionOptions: SessionOptions = {
      threads,
      cacheBudgetBytes: options.cacheBudgetBytes,
      wasmBuild: options.wasmBuild,
      kvDtype: kv.dtype,
      preparedGraphs: options.preparedGraphs ?? true,
    };
    return this.createSession(
      pkg,
      device,
      this.hooks.sessionOptions?.(sessionOptions) ?? sessionOptions,
    );
  }

  /** A WebGPU failure while running (a lost device) moves the engine to WASM and retries once. */
  private async runWithRecovery(
    encoded: Parameters<DecisionSession['run']>[0],
    ctx: JobContext,
    runOptions: RunOptions,
  ): ReturnType<DecisionSession['run']> {
    const session = this.session!;
    try {
      return await session.run(encoded, ctx, runOptions);
    } catch (e) {
      if (!deviceOf(session.device).gpu || ctx.cancelled() || !session.lost()) throw e;
      const reason = `WebGPU device lost while running (${(e as Error).message}); moved to WASM`;
      await session.dispose().catch(() => undefined);
      // From Cache Storage when the load cached the files (same origin either way).
      const pkg = await openPackage(this.options!.model, { cache: this.options!.cache });
      const caps = await probeCapabilities();
      const fallback = cpuDevice().name;
      const kv = chooseKv(this.options!.kvDtype ?? 'auto', fallback, pkg.manifest, caps);
      this.session = await this.openSession(pkg, fallback, caps.threads, kv);
      this.infoBase = {
        ...this.infoBase!,
        device: fallback,
        adapter: null,
        fallbackReason: reason,
        deviceReason: reason,
        kvDtype: kv.dtype,
        kvReason: kv.reason,
        preparedGraphs: this.session.preparedGraphs ?? 0,
      };
      return this.session.run(encoded, ctx, runOptions);
    }
  }
}
