/**
 * Issue 15, item 5: a variable planted in a worker process's environment never reaches the
 * Bash tool; a variable named in `advanced.toolEnv.allow` does. Real worker child process,
 * real Temporal server, real bash.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgentClient } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const here = fileURLToPath(new URL('./', import.meta.url));
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
});

/** Start bash-worker.ts with `extraEnv` added to its environment; resolves when it polls. */
async function startWorker(scratch: object, extraEnv: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'bash-worker.ts')], {
    env: { ...process.env, ...extraEnv, SCRATCH_ENV: JSON.stringify(scratch) },
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
}

describe('Bash environment through a real worker process', () => {
  it("a secret planted in the worker's environment never reaches Bash; an allowed variable does", async () => {
    const ws = tempDir('edge-env');
    const secret = `planted-${randomUUID()}`;
    const allowed = `visible-${randomUUID()}`;
    const scratch = {
      address: temporalAddress(),
      taskQueue: uniqueTaskQueue('edge-env'),
      ws,
      toolEnv: { allow: ['DURABLE_AGENT_TEST_ALLOWED'] },
    };
    await startWorker(scratch, {
      DURABLE_AGENT_TEST_SECRET: secret,
      OPENAI_API_KEY: secret,
      DURABLE_AGENT_TEST_ALLOWED: allowed,
    });
    const client = await createAgentClient({
      model: scriptedModel(['unused']),
      workspaceRoots: [ws],
      advanced: {
        permission: 'bypass-permissions',
        temporal: { address: scratch.address, taskQueue: scratch.taskQueue },
      },
    });
    try {
      const session = await client.createSession();
      // The worker's model runs the prompt as one Bash command and answers `done:<output>`.
      const response = await session.send('env; pwd');
      await session.close();
      expect(response.toolCalls.map((c) => c.status)).toEqual(['success']);
      const text = response.text();
      expect(text).toMatch(/^done:/);
      expect(text).toContain(`DURABLE_AGENT_TEST_ALLOWED=${allowed}\n`);
      expect(text).toContain(`${ws}\n`);
      expect(text).not.toContain(secret);
      expect(text).not.toContain('OPENAI_API_KEY');
    } finally {
      await client.close();
    }
  }, 120_000);
});
