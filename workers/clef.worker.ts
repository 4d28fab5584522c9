/// <reference lib="webworker" />
// The engine's worker: a Comlink endpoint around EngineHost with the device's sessions
// (onnxruntime's, or the js device's graph interpreter), run as a dedicated worker (one page's
// engine) or as a SharedWorker (one engine for every tab that asks for it:
// src/engine/shared-engine.ts). No EngineHooks: the test build with instrumentation is
// test/support/instrumented-worker/instrumented.worker.ts.
import { createDecisionSession, startDeviceRuntime } from '../src/engine/sessions.js';
import { EngineHost } from '../src/engine/host.js';
import { serveEngine } from '../src/engine/shared-engine.js';

serveEngine(() => new EngineHost(createDecisionSession, startDeviceRuntime));
