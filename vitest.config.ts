import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    // Vitest's default is one worker fewer than the cores: one worker on a 2-core machine. Much
    // of the suite waits on child processes, sockets and worker threads, so two workers there
    // took the unit suite from 11.5 to 6.6 minutes on this project's 2-core machine, every test
    // passing (1,117; the heavy training tests carry their own 600 s limits, and took no longer).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
