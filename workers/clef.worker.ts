/// <reference lib="webworker" />
// The engine's worker: a Comlink endpoint around EngineHost with the onnxruntime session.
// The resource counters go in first, before the runtime creates any buffer or wasm memory.
import './install-counters.js';
import * as Comlink from 'comlink';
import { createOrtDecisionSession, startOrtRuntime } from '../src/engine/clef-session.js';
import { EngineHost } from '../src/engine/host.js';

Comlink.expose(new EngineHost(createOrtDecisionSession, startOrtRuntime));
