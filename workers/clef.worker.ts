/// <reference lib="webworker" />
// The engine's worker: a Comlink endpoint around EngineHost with the onnxruntime session. No
// EngineHooks: the test build with instrumentation is test/worker/instrumented.worker.ts.
import * as Comlink from 'comlink';
import { createOrtDecisionSession, startOrtRuntime } from '../src/engine/clef-session.js';
import { EngineHost } from '../src/engine/host.js';

Comlink.expose(new EngineHost(createOrtDecisionSession, startOrtRuntime));
