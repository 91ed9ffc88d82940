/** Regression: a worker SIGKILLed while Bash runs leaves no Bash process group behind. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgentClient } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { isAlive } from '../../unit/tools/fixtures.js';

const here = fileURLToPath(new URL('./', import.meta.url));
const children: ChildProcess[] = [];
const pidsToKill: number[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const p of pidsToKill) {
    try {
      process.kill(-p, 'SIGKILL');
    } catch {
      // Already gone.
    }
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});
async function startWorker(env: object): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'bash-worker.ts')], {
    env: { ...process.env, SCRATCH_ENV: JSON.stringify(env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (/ready /.test(out)) resolve();
      });
      child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
      child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${out}`)));
      timer = setTimeout(() => reject(new Error(`worker not ready: ${out}`)), 30_000);
    });
  } finally {
    clearTimeout(timer);
  }
  return child;
}

describe('Bash and worker lifetimes', () => {
  it('kills the Bash process group when its worker is SIGKILLed mid-command; the send finishes on a new worker', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'durable-agent-edge-crash-'));
    const env = { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-crash'), ws };
    const w1 = await startWorker(env);
    const client = await createAgentClient({
      model: scriptedModel(['unused']),
      workspaceRoots: [ws],
      advanced: {
        permission: 'bypass-permissions',
        temporal: { address: env.address, taskQueue: env.taskQueue },
      },
    });
    try {
      const session = await client.createSession();
      // Two children in the command's group, then bash itself; the file appears whole.
      const p = session.send(
        'sleep 60 & echo $! > pids.tmp; sleep 60 & echo $! >> pids.tmp; echo $$ >> pids.tmp; ' +
          'mv pids.tmp pids.txt; wait; echo finished > finished.txt',
      );
      await waitFor(() => existsSync(join(ws, 'pids.txt')), 15_000, 'bash');
      const pids = readFileSync(join(ws, 'pids.txt'), 'utf8').trim().split('\n').map(Number);
      pidsToKill.push(...pids);
      expect(pids).toHaveLength(3);
      expect(pids.every((pid) => isAlive(pid))).toBe(true);
      const exited = new Promise((r) => w1.once('exit', r));
      w1.kill('SIGKILL');
      await exited;
      // The orphan watchdog kills the command's whole group within about a second of the death
      // on a quiet machine; the bound leaves room for a loaded one (10 s failed once at load 20).
      await waitFor(
        () => pids.every((pid) => !isAlive(pid)),
        30_000,
        'the orphaned Bash group (bash and both children) to be killed',
      );
      await startWorker(env);
      const resp = await p;
      // A tool runs at most once: the retried attempt found the record that Bash began, and
      // the call ends as an error the model is told about.
      expect(resp.toolCalls.map((c) => c.status)).toEqual(['error']);
      expect(resp.text()).toMatch(/^done:Tool Bash failed to run: .*attempt 1 began the tool/);
      await session.close();
      expect(existsSync(join(ws, 'finished.txt'))).toBe(false);
    } finally {
      await client.close();
      rmSync(ws, { recursive: true, force: true });
    }
  }, 120_000);
});
