import { defineConfig } from 'vitest/config';

// Unit tests are pure logic: no Temporal server, so no globalSetup.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/unit/**/*.test.ts'],
  },
});
