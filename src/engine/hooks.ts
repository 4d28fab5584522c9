/**
 * What a test or benchmark build of the worker may add to the engine, injected as the
 * SessionFactory is. The shipped worker (workers/clef.worker.ts) passes none: it has no fault
 * paths and patches no globals. test/support/instrumented-worker/instrumented.worker.ts passes its
 * fault simulations (read from load options of its own) and its resource counters. Every hook is
 * optional; the host calls each at one point and does nothing else when it is absent.
 */
import type { Capabilities } from '../core/devices.js';
import type { DeviceName } from '../core/devices.js';
import type { DecisionStage, JobContext } from '../core/queue.js';
import type { DecisionSession, SessionOptions } from './session.js';
import type { LoadOptionsWire } from '../wire/wire.js';
import type { HostInfo } from '../wire/telemetry.js';

export interface EngineHooks {
  /** A load begins, with its options (and any the page's build of the worker added). */
  loading?(options: LoadOptionsWire): void;
  /** The probed capabilities, as the engine should see them. */
  capabilities?(caps: Capabilities): Capabilities;
  /** Before the sessions on `device` are created: a throw is that device failing to load. */
  openingSession?(device: DeviceName): void;
  /** The options the sessions are created with. */
  sessionOptions?(options: SessionOptions): SessionOptions;
  /**
   * A request's decision reached `stage` (the second 'backbone' is the first point between two
   * backbone chunks); the decision waits for the returned promise.
   */
  stage?(stage: DecisionStage, ctx: JobContext, session: DecisionSession): Promise<void>;
  /**
   * The engine's warm-up (try `tryNumber`, from 1) reached a stage; it waits for the returned
   * promise. `queued`: the queue's size, the warm-up included.
   */
  warmUpStage?(tryNumber: number, queued: () => number, cancelled: () => boolean): Promise<void>;
  /** What info() answers, completed (what the engine cannot see itself, such as platform counters). */
  info?(info: HostInfo): HostInfo;
}
