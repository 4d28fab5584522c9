/**
 * Which KV cache precision a session runs: float32, or float16 through the package's kv16
 * backbone graphs (half the state a long input holds between runs). Pure: the host asks it once
 * per device it tries.
 */
import { DeviceError, PackageError } from '../wire/errors.js';
import type { Capabilities } from '../core/devices.js';
import { hasFloat16Kv, type KvDtype, type PackageManifest } from '../core/manifest.js';
import { deviceOf, type DeviceName } from '../core/devices.js';

export type KvRequest = 'auto' | KvDtype;

export interface KvChoice {
  dtype: KvDtype;
  /** What `info().kvReason` says. */
  reason: string;
}

/**
 * 'auto' takes float16 on WebGPU with shader-f16 (where the GPU computes it natively) and stays
 * float32 on the CPU devices (the exact path; the casts cost CPU time). An explicit 'float16'
 * runs anywhere the runtime can: WASM and js always, WebGPU only with shader-f16 (DeviceError
 * otherwise); a package without kv16 graphs refuses it (PackageError).
 */
export function chooseKv(
  requested: KvRequest,
  device: DeviceName,
  manifest: PackageManifest,
  caps: Pick<Capabilities, 'shaderF16' | 'adapter'>,
): KvChoice {
  const packaged = hasFloat16Kv(manifest);
  const gpu = deviceOf(device).gpu;
  const f16 = gpu && caps.shaderF16;
  if (requested === 'float32') return { dtype: 'float32', reason: "kvDtype 'float32' requested" };
  if (requested === 'float16') {
    if (!packaged) {
      throw new PackageError(
        `kvDtype 'float16': the package ${manifest.model.name} has no float16-KV backbone graphs; convert it again with this version of clef-web, or use kvDtype 'auto'`,
      );
    }
    if (gpu && !f16) {
      throw new DeviceError(
        `kvDtype 'float16' on WebGPU needs the feature shader-f16, which the adapter (${caps.adapter ?? 'unknown'}) lacks; use kvDtype 'auto' or device 'wasm'`,
        { device, reason: 'no shader-f16' },
      );
    }
    return { dtype: 'float16', reason: "kvDtype 'float16' requested" };
  }
  if (!packaged) {
    return { dtype: 'float32', reason: 'auto: float32, the package has no float16-KV graphs' };
  }
  if (!gpu) {
    const label = deviceOf(device).label;
    return {
      dtype: 'float32',
      reason: `auto: float32 on ${label} (kvDtype 'float16' halves the KV)`,
    };
  }
  return f16
    ? { dtype: 'float16', reason: 'auto: float16, the WebGPU adapter has shader-f16' }
    : { dtype: 'float32', reason: 'auto: float32, the WebGPU adapter lacks shader-f16' };
}
