import { defineConfig } from 'vitest/config';

// Tests on a real multi-process Temporal cluster on PostgreSQL (scripts/cluster.ts): the
// cluster's global setup starts one cluster for the run (and stops it after), then the shared
// setup bundles the workflow code against it. The files kill and restart the cluster's
// services, so they run one at a time.
export default defineConfig({
  test: {
    pool: 'forks',
    globalSetup: ['./test/cluster/global-setup.ts', './test/global-setup.ts'],
    include: ['test/cluster/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
