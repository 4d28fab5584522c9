/**
 * The devices by name, as load options and info() carry them. src/core/devices.ts holds a
 * descriptor for each (the compiler checks it names the same devices).
 */
export type DeviceName = 'webgpu' | 'wasm' | 'js';

/** A device to load on, or 'auto': the best one that can run the package. */
export type DeviceRequest = 'auto' | DeviceName;
