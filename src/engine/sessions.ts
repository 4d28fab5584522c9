/**
 * The session factory and runtime starter the engine worker runs with: each device's session by
 * its descriptor's runtime, onnxruntime-web (clef-session.ts, which loads the runtime only when
 * asked) or the js device (js-session.ts, nothing to load). A page whose device is js never
 * imports or fetches any part of onnxruntime.
 */
import { deviceOf } from '../core/devices.js';
import { createOrtDecisionSession, startOrtRuntime } from './clef-session.js';
import { createJsDecisionSession, JS_RUNTIME } from './js-session.js';
import type { RuntimeStarter, SessionFactory } from './session.js';

export const createDecisionSession: SessionFactory = (pkg, device, options) =>
  deviceOf(device).runtime === 'js'
    ? createJsDecisionSession(pkg, device, options)
    : createOrtDecisionSession(pkg, device, options);

export const startDeviceRuntime: RuntimeStarter = (device, threads, wasmBuild) =>
  deviceOf(device).runtime === 'js'
    ? Promise.resolve(JS_RUNTIME)
    : startOrtRuntime(device, threads, wasmBuild);
