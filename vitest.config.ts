import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Temporal's native bridge fails inside worker threads (sdk-typescript #876): keep forks.
    pool: 'forks',
    globalSetup: ['./test/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    // The cluster tests start a multi-process cluster of their own: `npm run test:cluster`.
    exclude: [...configDefaults.exclude, 'test/cluster/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    // Three files at a time on two cores: most integration files wait (on timeouts of the
    // server, on worker processes they start), not compute.
    maxWorkers: 3,
  },
});
