// The engine registry behind <clef-decide>: one engine per (package, device), shared, released
// after its last user, and a failed load not kept.
import { describe, expect, it, vi } from 'vitest';
import type { Clef, ClefOptions } from '../../../../src/client/clef.js';
import { EngineRegistry } from '../../../../src/element/clef-decide/engine-registry.js';
import type { LoadProgress } from '../../../../src/wire/wire.js';
import type { EngineInfo } from '../../../../src/wire/telemetry.js';

const URL_A = 'https://example.test/models/a/';
const URL_B = 'https://example.test/models/b/';

function fakeFactory(fail = false) {
  const created: Array<{ options: ClefOptions; dispose: ReturnType<typeof vi.fn> }> = [];
  const create = async (options: ClefOptions): Promise<Clef> => {
    const dispose = vi.fn(async () => undefined);
    created.push({ options, dispose });
    options.onProgress?.({ phase: 'manifest', loadedBytes: 0, totalBytes: 0 });
    if (fail) throw new Error('no such package');
    return {
      dispose,
      info: async () => ({ model: `model of ${String(options.model)}` }) as EngineInfo,
    } as unknown as Clef;
  };
  return { create, created };
}

describe('EngineRegistry', () => {
  it('shares one engine per package and device, and replays progress to late users', async () => {
    const { create, created } = fakeFactory();
    const registry = new EngineRegistry({ create, idleMs: 10 });
    const seen: LoadProgress[] = [];
    const a1 = registry.acquire(URL_A, 'wasm');
    const a2 = registry.acquire(URL_A, 'wasm', (p) => seen.push(p));
    const b = registry.acquire(URL_B, 'wasm');
    const aGpu = registry.acquire(URL_A, 'webgpu');
    expect(created.map((c) => [c.options.model, c.options.device])).toEqual([
      [URL_A, 'wasm'],
      [URL_B, 'wasm'],
      [URL_A, 'webgpu'],
    ]);
    expect(registry.loadsStarted).toBe(3);
    expect(await a1.clef).toBe(await a2.clef);
    expect((await a2.info).model).toBe(`model of ${URL_A}`);
    expect(seen.map((p) => p.phase)).toEqual(['manifest']);
    for (const lease of [b, aGpu]) lease.release();
  });

  it('disposes an engine only after its last user has gone for idleMs', async () => {
    const { create, created } = fakeFactory();
    const registry = new EngineRegistry({ create, idleMs: 20 });
    const first = registry.acquire(URL_A, 'wasm');
    const second = registry.acquire(URL_A, 'wasm');
    await first.clef;
    first.release();
    first.release(); // twice is harmless
    await new Promise((r) => setTimeout(r, 40));
    expect(created[0]!.dispose).not.toHaveBeenCalled();
    second.release();
    // Coming back within idleMs keeps the engine.
    const third = registry.acquire(URL_A, 'wasm');
    await new Promise((r) => setTimeout(r, 40));
    expect(registry.loadsStarted).toBe(1);
    third.release();
    await new Promise((r) => setTimeout(r, 40));
    expect(created[0]!.dispose).toHaveBeenCalledTimes(1);
    expect(registry.size).toBe(0);
  });

  it('forgets a failed load, so a retry loads again', async () => {
    const { create } = fakeFactory(true);
    const registry = new EngineRegistry({ create, idleMs: 10 });
    const lease = registry.acquire(URL_A, 'wasm');
    await expect(lease.clef).rejects.toThrow('no such package');
    await expect(lease.info).rejects.toThrow('no such package');
    expect(registry.size).toBe(0);
    lease.release();
    registry.acquire(URL_A, 'wasm').release();
    expect(registry.loadsStarted).toBe(2);
  });
});
