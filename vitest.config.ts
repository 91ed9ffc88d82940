import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Temporal's native bridge fails inside worker threads (sdk-typescript #876): keep forks.
    pool: 'forks',
    globalSetup: ['./test/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
