/**
 * A refused createAgent leaves nothing running: with `runtime: 'if-absent'` the worker
 * installed Temporal's runtime before it checked the options, and that runtime (no worker or
 * connection ever used it) kept the process alive and took over SIGTERM. A child process of
 * its own, since the runtime is one per process.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { temporalAddress } from '../../helpers/common.js';

const fixtures = join(import.meta.dirname, '..', '..', 'fixtures');

it('exits on its own after createAgent is refused, with the quiet runtime asked for', async () => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(fixtures, 'refused-agent-process.ts')],
    {
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress() },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // Bounded: a process kept alive is killed here, and the test says so.
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('close', (c, s) => resolve([c, s])),
  );
  clearTimeout(killer);
  expect(signal, `still running after 30 s; stderr: ${stderr}`).toBeNull();
  expect(code, stderr).toBe(0);
  expect(stdout.trim()).toBe('ConfigError');
}, 60_000);
