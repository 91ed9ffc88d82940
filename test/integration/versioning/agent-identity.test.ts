/**
 * Agent identity on a real server with real processes: a session's hooks always run the
 * definition it was started with. Two teams' agents with default options (only their hooks
 * differ) each decide their own sessions; a worker of another version refuses a task, never
 * runs its own callbacks instead, and the session's error names both versions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  HookError,
  HookEvent,
  createAgentClient,
  createAgentWorker,
  type AgentClient,
  type AgentWorker,
} from '../../../src/index.js';
import { goldenFromHistories, scriptedModel } from '../../../src/testing/index.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import type { IdentityEnv } from '../../fixtures/identity-process.js';
import { rawClient, temporalAddress, waitFor } from '../../helpers/common.js';

const fixture = fileURLToPath(new URL('../../fixtures/identity-process.ts', import.meta.url));

interface AgentProcess {
  ready: { name: string; version: string; fingerprint: string; taskQueue: string };
  /** The `result` line after `go`. */
  run(): Promise<{ sessionId: string; outcomes: string[]; versions: string[] }>;
  /** Stop it; resolves with the sessions its callbacks ran for. */
  stop(): Promise<Record<string, number>>;
}

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.clear();
});

async function startAgentProcess(env: IdentityEnv): Promise<AgentProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), IDENTITY_ENV: JSON.stringify(env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const line = async (tag: string, timeoutMs: number) => {
    await waitFor(
      () => {
        if (child.exitCode !== null && !output.includes(`${tag} `)) {
          throw new Error(
            `${env.policy} process exited (${child.exitCode}):\n${output}\n${stderr}`,
          );
        }
        return new RegExp(`^${tag} `, 'm').test(output);
      },
      timeoutMs,
      `'${tag}' from the ${env.policy} process`,
    );
    return JSON.parse(new RegExp(`^${tag} (.*)$`, 'm').exec(output)![1]!) as unknown;
  };
  const ready = (await line('ready', 60_000)) as AgentProcess['ready'];
  return {
    ready,
    async run() {
      child.stdin!.write('go\n');
      return (await line('result', 240_000)) as Awaited<ReturnType<AgentProcess['run']>>;
    },
    async stop() {
      child.stdin!.write('stop\n');
      const seen = (await line('seen', 60_000)) as Record<string, number>;
      await new Promise((resolve) =>
        child.exitCode !== null ? resolve(0) : child.once('exit', resolve),
      );
      return seen;
    },
  };
}

describe('two processes with default options on one server, one strict and one lax', () => {
  it("decides each session's 20 prompts with its own definition, always", async () => {
    const [strict, lax] = await Promise.all([
      startAgentProcess({ policy: 'strict', prompts: 20 }),
      startAgentProcess({ policy: 'lax', prompts: 20 }),
    ]);
    // Same default name and task queue (they are two teams that named nothing) ...
    expect(strict.ready.name).toBe('default');
    expect(lax.ready.taskQueue).toBe(strict.ready.taskQueue);
    // ... but their hooks differ, so their versions do.
    expect(strict.ready.version).not.toBe(lax.ready.version);

    const [strictRun, laxRun] = await Promise.all([strict.run(), lax.run()]);
    const [strictSeen, laxSeen] = [await strict.stop(), await lax.stop()];

    expect(strictRun.outcomes).toEqual(Array(20).fill('rejected:HOOK_ABORTED'));
    expect(laxRun.outcomes).toEqual(Array(20).fill('completed:answered'));
    // Every decision on each timeline was made by the session's own version.
    expect(strictRun.versions).toEqual([strict.ready.version]);
    expect(laxRun.versions).toEqual([lax.ready.version]);
    // And no callback ever ran for the other team's session.
    expect(strictSeen).toEqual({ [strictRun.sessionId]: 20 });
    expect(laxSeen).toEqual({ [laxRun.sessionId]: 20 });
  }, 300_000);
});

describe('one name, two versions', () => {
  let client: AgentClient | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  it("refuses a v2 session's prompt on the v1 worker, never runs v1's callback, and names both versions", async () => {
    const name = `identity-${randomUUID().slice(0, 8)}`;
    // Unversioned on both sides (with Worker Deployments, Temporal would not even start a
    // session pinned to a version no worker polls as): the refusal alone must hold.
    const worker = await startAgentProcess({
      policy: 'lax',
      name,
      version: 'v1',
      workerOnly: true,
      versioning: 'off',
    });
    expect(worker.ready.version).toBe('v1');
    client = await createAgentClient({
      name,
      version: 'v2',
      model: scriptedModel(() => 'unused'),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
        hookTimeoutMs: 1_500,
        temporal: { versioning: 'off' },
      },
    });
    const session = await client.createSession();
    const error = await session.send('hello').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HookError);
    expect((error as HookError).code).toBe('WORKER_VERSION_MISMATCH');
    expect((error as HookError).event).toBe(HookEvent.UserPromptSubmit);
    expect((error as HookError).message).toContain("version 'v2'");
    expect((error as HookError).message).toContain("'v1'");
    const [entry] = await session.timeline();
    expect(entry).toMatchObject({
      event: HookEvent.UserPromptSubmit,
      outcome: 'refused',
      version: 'v2',
      error: { code: 'WORKER_VERSION_MISMATCH' },
    });
    await session.close();
    expect(await worker.stop()).toEqual({});
    // inspect: the refused attempts are one row, refused, of the session's version.
    const history = await (await rawClient()).workflow.getHandle(session.workflowId).fetchHistory();
    const rows = timelineFromHistory(history).dispatches;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ decision: 'refused', version: 'v2' });
    expect(rows[0]!.refusals).toBeGreaterThan(1);
    // golden: nothing was decided, so nothing is recorded.
    expect(goldenFromHistories(session.id, [history]).dispatches).toEqual([]);
  }, 120_000);

  it('refuses a session of the same version with another definition, naming what differs', async () => {
    const name = `identity-${randomUUID().slice(0, 8)}`;
    const worker = await startAgentProcess({
      policy: 'lax',
      name,
      version: 'v1',
      workerOnly: true,
    });
    client = await createAgentClient({
      name,
      version: 'v1',
      model: scriptedModel(() => 'unused'),
      advanced: {
        // Same count, another source: the fingerprint differs, the version does not.
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'abort', reason: 'x' })] },
        hookTimeoutMs: 1_500,
      },
    });
    const session = await client.createSession();
    const error = (await session.send('hello').then(
      () => undefined,
      (e: unknown) => e,
    )) as HookError;
    expect(error.code).toBe('VERSION_FINGERPRINT_MISMATCH');
    expect(error.message).toContain('UserPromptSubmit[0] callback source');
    expect(error.message).toContain('option hookTimeoutMs (1500 vs 600000)');
    await session.close();
    expect(await worker.stop()).toEqual({});
  }, 120_000);
});

describe('a fingerprint mismatch with the default hook budget', () => {
  it('fails the send after about 30 s of refusals, not the hook budget of 10 minutes', async () => {
    const name = `identity-${randomUUID().slice(0, 8)}`;
    const worker = await startAgentProcess({
      policy: 'lax',
      name,
      version: 'v1',
      workerOnly: true,
    });
    const other = await createAgentClient({
      name,
      version: 'v1',
      model: scriptedModel(() => 'unused'),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'abort', reason: 'y' })] },
      },
    });
    try {
      const session = await other.createSession();
      const error = (await session.send('hello').then(
        () => undefined,
        (e: unknown) => e,
      )) as HookError;
      expect(error.code).toBe('VERSION_FINGERPRINT_MISMATCH');
      const waited = Number(/within (\d+) ms/.exec(error.message)?.[1]);
      expect(waited).toBeGreaterThanOrEqual(30_000);
      expect(waited).toBeLessThan(40_000);
      expect(error.message).toContain('Give the changed definition a new `version`.');
      await session.close();
    } finally {
      await other.close();
    }
    expect(await worker.stop()).toEqual({});
  }, 120_000);
});

describe('two definitions of one process claiming one version', () => {
  it('refuses the second at worker start, naming what differs', async () => {
    const name = `identity-${randomUUID().slice(0, 8)}`;
    const options = (reason: string) => ({
      name,
      version: 'v1',
      model: scriptedModel(() => 'unused'),
      workspaceRoots: [join(fileURLToPath(new URL('.', import.meta.url)))],
      advanced: {
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            reason === 'a'
              ? async () => ({ action: 'continue' as const })
              : async () => ({ action: 'abort' as const, reason }),
          ],
        },
        temporal: { address: temporalAddress() },
      },
    });
    let first: AgentWorker | undefined;
    try {
      first = await createAgentWorker(options('a'));
      const second = createAgentWorker(options('b'));
      await expect(second).rejects.toThrow(ConfigError);
      await expect(second).rejects.toThrow(
        new RegExp(
          `Agent '${name}' version 'v1' is already run by this process.*UserPromptSubmit\\[0\\] callback source`,
        ),
      );
    } finally {
      await first?.shutdown();
    }
  }, 60_000);
});
