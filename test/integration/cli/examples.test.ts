/**
 * The testing examples run as users would run them, under node --test and under jest. The
 * scenario folders (examples/<name>/, on the packed package) run in scripts/check-examples.ts.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

describe('examples/testing', () => {
  it('node-test.test.ts passes under node --test', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--test', 'examples/testing/node-test.test.ts'],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(run.stdout).toMatch(/# pass 1/);
    expect(run.stdout).toMatch(/# fail 0/);
    expect(run.status).toBe(0);
  }, 60_000);

  it('hooks.jest.test.ts passes under jest, with the matchers', () => {
    const run = spawnSync(process.execPath, ['node_modules/jest/bin/jest.js', '--ci'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules' },
    });
    const output = run.stdout + run.stderr;
    expect(output).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(run.status).toBe(0);
  }, 120_000);
});
