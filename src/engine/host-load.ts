/**
 * The steps of EngineHost.load (host.ts): open the package while the device plan and the
 * runtime's start settle, create the sessions on the first device of the plan that holds them,
 * and describe the loaded engine as the info every `info()` starts from.
 */
import { calibrationSha256 } from '../core/calibration.js';
import { deviceBeforeManifest, deviceOrder, probeCapabilities } from './capabilities.js';
import type { DevicePlan } from './capabilities.js';
import { ClefError, DeviceError, EngineError, PackageError } from '../wire/errors.js';
import { unusedGraphs } from './graph-choice.js';
import { chooseKv, type KvChoice } from './kv-choice.js';
import { openPackage, type PackageSource } from './package-fetch.js';
import type { EngineHooks } from './hooks.js';
import { noDeviceError } from './host-util.js';
import { runtimeProblem, servedBuilds } from './runtime-files.js';
import { deviceOf, type Capabilities, type DeviceName } from '../core/devices.js';
import type { RuntimeBuild } from '../wire/assets.js';
import type { DecisionSession, RuntimeStarter } from './session.js';
import type { LoadOptionsWire, LoadProgress } from '../wire/wire.js';
import type { HostInfo, RuntimePhases } from '../wire/telemetry.js';

/** The plan starts on the js device, which needs nothing of onnxruntime. */
function startsOnJs(plan: DevicePlan): boolean {
  const first = plan.order[0];
  return first !== undefined && deviceOf(first).runtime === 'js';
}

/** The package of a load, opened, with the devices to try in order. */
export interface PlannedLoad extends DevicePlan {
  pkg: PackageSource;
  /** The capabilities so far: what of onnxruntime the server has may not be asked yet. */
  caps: Capabilities;
  /** The probed capabilities with these runtime builds, as EngineHooks.capabilities sees them. */
  capsWith(runtimeBuilds?: readonly RuntimeBuild[]): Capabilities;
  /** The device's runtime, started ahead of the sessions (null when none was started). */
  early: Promise<RuntimePhases> | null;
}

/**
 * Opens the load's package (downloaded and verified), refusing before any data file when no
 * device can run it, and starts the first device's runtime as soon as that device is known.
 */
export async function openPlanned(
  options: LoadOptionsWire,
  report: (p: LoadProgress) => void,
  hooks: EngineHooks,
  startRuntime?: RuntimeStarter,
): Promise<PlannedLoad> {
  // The runtime builds the server has (a HEAD request per onnxruntime loader): `auto` passes
  // over a device whose runtime this app does not ship. Asked beside the probe for an
  // onnxruntime device; for `auto` only once the js device is not the one to start on, and
  // never for 'js': a page on the js device requests no onnxruntime URL at all.
  const asksRuntimes = options.device !== 'auto' && deviceOf(options.device).runtime !== 'js';
  const [probed, builds] = await Promise.all([
    probeCapabilities(),
    asksRuntimes ? servedBuilds() : undefined,
  ]);
  // The page's cap on threads (after a thread worker's start never returned) holds here.
  const threads = Math.min(probed.threads, Math.max(1, options.threads ?? probed.threads));
  const capsWith = (runtimeBuilds?: readonly RuntimeBuild[]): Capabilities => {
    const all = Object.freeze({ ...probed, threads, ...(runtimeBuilds ? { runtimeBuilds } : {}) });
    return hooks.capabilities?.(all) ?? all;
  };
  let caps = capsWith(builds);
  // A device's runtime starts as soon as the device is known, so it overlaps the download:
  // now, when the request and the probe settle it (docs/benchmarks.md: the runtime's start
  // is the longest step of a second visit), else once the manifest has arrived.
  let plan: DevicePlan | null = null;
  let early: Promise<RuntimePhases> | null = null;
  const start = (device: DeviceName) => {
    if (!startRuntime) return;
    early = startRuntime(device, caps.threads, options.wasmBuild);
    early.catch(() => undefined); // session creation reports it, or falls back
  };
  const known = deviceBeforeManifest(options.device, caps);
  if (known) start(known);
  const pkg = await openPackage(options.model, {
    cache: options.cache,
    onProgress: report,
    onManifest: async (manifest) => {
      plan = deviceOrder(options.device, manifest, caps);
      if (options.device === 'auto' && caps.runtimeBuilds === undefined && !startsOnJs(plan)) {
        caps = capsWith(await servedBuilds());
        plan = deviceOrder(options.device, manifest, caps);
      }
      // Preflight: refuse here, before a single data file is downloaded.
      if (plan.order.length === 0)
        throw noDeviceError(manifest, plan.skipped, options.device, caps);
      const first = plan.order[0];
      if (first && first !== known) start(first);
      // Progress counts the graphs the first device's KV precision runs (a refusal is
      // reported when its session is created).
      try {
        const kv = chooseKv(options.kvDtype ?? 'auto', first!, manifest, caps);
        const prepared = options.preparedGraphs ?? true;
        return { unused: unusedGraphs(manifest, first!, kv.dtype, prepared) };
      } catch {
        return undefined;
      }
    },
  });
  if (options.dtype && options.dtype !== pkg.manifest.variant.dtype) {
    throw new PackageError(
      `The package at ${options.model} is the ${pkg.manifest.variant.dtype} variant, not ${options.dtype}`,
    );
  }
  const { order, skipped, reason } = plan ?? deviceOrder(options.device, pkg.manifest, caps);
  if (order.length === 0) throw noDeviceError(pkg.manifest, skipped, options.device, caps);
  return { pkg, order, skipped, reason, caps, capsWith, early };
}

/** The sessions a load ended with, the device they run on, and why that one. */
export interface OpenedSessions {
  session: DecisionSession;
  kv: KvChoice;
  /** The capabilities, with the runtime builds when an onnxruntime device was tried. */
  caps: Capabilities;
  fallbackReason: string | null;
  deviceReason: string;
}

/**
 * Creates the sessions on the plan's devices in order until one holds them: a device whose
 * runtime is not served, or that cannot hold the asked-for KV precision, gives way to the next.
 */
export async function openOnDevices(
  planned: PlannedLoad,
  options: LoadOptionsWire,
  hooks: EngineHooks,
  openSession: (
    pkg: PackageSource,
    device: DeviceName,
    threads: number,
    kv: KvChoice,
  ) => Promise<DecisionSession>,
): Promise<OpenedSessions> {
  const { pkg, order, skipped, capsWith } = planned;
  let caps = planned.caps;
  let fallbackReason: string | null =
    skipped.length && options.device === 'auto'
      ? skipped.map((s) => `${s.device} skipped: ${s.reason}`).join('; ')
      : null;
  let deviceReason = planned.reason;
  let lastError: unknown = null;
  let kv: KvChoice | null = null;
  let session: DecisionSession | null = null;
  for (const device of order) {
    // After the js device, what of onnxruntime the server has is asked before its devices.
    if (deviceOf(device).runtime === 'onnxruntime' && caps.runtimeBuilds === undefined) {
      caps = capsWith(await servedBuilds());
    }
    const notServed = runtimeProblem(deviceOf(device), caps.runtimeBuilds);
    if (notServed && device !== order[order.length - 1]) {
      const why = `${device} skipped: ${notServed}`;
      fallbackReason = fallbackReason ? `${fallbackReason}; ${why}` : why;
      deviceReason = `${deviceReason}; then ${why}`;
      continue;
    }
    try {
      hooks.openingSession?.(device);
      kv = chooseKv(options.kvDtype ?? 'auto', device, pkg.manifest, caps);
      session = await openSession(pkg, device, caps.threads, kv);
      break;
    } catch (e) {
      // A file that failed to arrive or verify fails the load on every device; a device that
      // cannot hold the asked-for KV precision gives way to the next one, if any.
      // Each device passed over keeps its reason (the skipped ones' before them).
      const next = device !== order[order.length - 1];
      if (e instanceof DeviceError && next) {
        lastError = e;
        const why = `${device} skipped: ${e.message}`;
        fallbackReason = fallbackReason ? `${fallbackReason}; ${why}` : why;
        deviceReason = `${deviceReason}; then ${why}`;
        continue;
      }
      if (e instanceof ClefError && !(e instanceof EngineError)) throw e;
      lastError = e;
      const why = `${device} failed to load: ${(e as Error).message}`;
      fallbackReason = fallbackReason ? `${fallbackReason}; ${why}` : why;
      deviceReason = `${deviceReason}; then ${why}`;
    }
  }
  if (!session) {
    throw lastError instanceof Error ? lastError : new EngineError(String(lastError));
  }
  return { session, kv: kv!, caps, fallbackReason, deviceReason };
}

/** What the load measured beside the sessions, in milliseconds (performance.now()). */
export interface LoadTimes {
  started: number;
  compileStart: number;
  tokenizerMs: number;
}

/** The loaded engine's info, without the counters a snapshot adds (warmup: null until it ran). */
export function hostInfoBase(
  options: LoadOptionsWire,
  pkg: PackageSource,
  opened: OpenedSessions,
  times: LoadTimes,
): Omit<HostInfo, 'counters'> {
  const { session, kv, caps } = opened;
  const now = performance.now();
  const m = pkg.manifest;
  const stats = pkg.stats;
  return {
    model: m.model.name,
    aliases: m.model.aliases,
    description: m.model.description,
    releaseDate: m.model.releaseDate,
    packageUrl: options.model,
    manifestSha256: pkg.manifestSha256,
    calibrationSha256: calibrationSha256(m),
    dtype: m.variant.dtype,
    device: session.device,
    adapter: deviceOf(session.device).gpu ? caps.adapter : null,
    fallbackReason: opened.fallbackReason,
    deviceReason: opened.deviceReason,
    kvDtype: kv.dtype,
    kvReason: kv.reason,
    preparedGraphs: session.preparedGraphs ?? 0,
    training: m.training ?? null,
    contextTokens: m.contextTokens,
    threads: session.runtime?.threads ?? caps.threads,
    threadsReason: session.runtime?.threadsReason ?? options.threadsReason ?? null,
    loadMs: {
      download: stats.downloadMs,
      verify: stats.verifyMs,
      tokenizer: times.tokenizerMs,
      // Session creation, without the fetches it made along the way.
      compile: now - times.compileStart - (session.fetchMs ?? 0),
      runtime: session.runtime ?? null,
      sessions: session.sessionMs ?? {},
      backboneGroups: session.groupLoads ?? [],
      peakHeldBytes: stats.peakHeldBytes,
      ...(session.lexicon ? { lexicon: session.lexicon } : {}),
      warmup: null,
      total: now - times.started,
    },
    cacheProblem: pkg.cacheProblem,
  };
}
