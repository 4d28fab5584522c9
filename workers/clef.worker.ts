/// <reference lib="webworker" />
// The engine's worker: a Comlink endpoint around EngineHost with the onnxruntime session. No
// EngineHooks: the test build with instrumentation is test/worker/instrumented.worker.ts.
import * as Comlink from 'comlink';
import { createDecisionSession, startDeviceRuntime } from '../src/engine/sessions.js';
import { EngineHost } from '../src/engine/host.js';

Comlink.expose(new EngineHost(createDecisionSession, startDeviceRuntime));
