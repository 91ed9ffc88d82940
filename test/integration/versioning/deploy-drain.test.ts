/**
 * A rolling deploy on a real server with Worker Deployments (`advanced.temporal.versioning:
 * 'deployments'`): v1 and v2 of one agent run side by side as worker processes of their own.
 * A v1 session holds a pending approval across the switch (v2 becomes the deployment's current
 * version) and finishes on v1; new sessions start on v2; a session that upgrades between
 * turns is recorded as moved, and decides on v2 from then on. Nothing is lost: SessionStart
 * and SessionEnd run once per session, the approval survives, and the timeline, describe()
 * and the history show which version decided what.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { deployDefinition } from '../../fixtures/deploy-agent.js';
import type { IdentityEnv } from '../../fixtures/identity-process.js';
import { rawClient, temporalAddress, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workerFixture = fileURLToPath(new URL('../../fixtures/deploy-worker.ts', import.meta.url));
const name = `deploy-${randomUUID().slice(0, 8)}`;
const dir = tempDir('deploy');
const effectsFile = join(dir, 'effects.log');
writeFileSync(effectsFile, '');

const children: ChildProcess[] = [];
const clients: AgentClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Start a worker process of `version`; resolves once it polls. */
async function startWorker(version: string): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', workerFixture], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress(),
      DEPLOY_ENV: JSON.stringify({ name, version, effectsFile, workspace: dir }),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`worker ${version} exited:\n${output}`);
      return /^ready /m.test(output);
    },
    60_000,
    `worker ${version} ready`,
  );
  expect(JSON.parse(/^ready (.*)$/m.exec(output)![1]!)).toMatchObject({
    version,
    versioning: 'deployments',
  });
  return {
    async stop() {
      child.stdin!.write('stop\n');
      await new Promise((resolve) =>
        child.exitCode !== null ? resolve(0) : child.once('exit', resolve),
      );
    },
  };
}

async function clientOf(version: string): Promise<AgentClient> {
  const client = await createAgentClient(deployDefinition(version, effectsFile, name, dir));
  clients.push(client);
  return client;
}

/** The lines `<event> <sessionId> <version>` of one session. */
function effectsOf(sessionId: string): string[] {
  return readFileSync(effectsFile, 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[1] === sessionId)
    .map((line) => `${line.split(' ')[0]} ${line.split(' ')[2]}`);
}

/** Wait until the server lists `version` of the deployment with the agent's task queue. */
async function versionRegistered(version: string): Promise<void> {
  const raw = await rawClient();
  try {
    await waitFor(
      async () => {
        const info = await raw.workflowService
          .describeWorkerDeploymentVersion({
            namespace: 'default',
            deploymentVersion: { deploymentName: name, buildId: version },
          })
          .catch(() => undefined);
        return (info?.workerDeploymentVersionInfo?.taskQueueInfos ?? []).length > 0;
      },
      30_000,
      `version ${version} registered`,
    );
  } finally {
    await raw.connection.close();
  }
}

describe('a rolling deploy v1 to v2 with Worker Deployments', () => {
  it('keeps a v1 session with a pending approval on v1, starts new sessions on v2, records an upgrade, loses nothing', async () => {
    const v1 = await startWorker('v1');
    const clientV1 = await clientOf('v1');

    // Before the deploy: two v1 sessions; one holds an approval open.
    const held = await clientV1.createSession();
    const pending = held.send('write held.txt');
    await waitFor(async () => (await held.pendingPermissions()).length === 1, 30_000, 'the ask');
    const [ask] = await held.pendingPermissions();
    const moving = await clientV1.createSession();
    expect((await moving.send('hello')).text()).toBe('answered by v1');

    // The deploy: v2 workers start beside v1's and v2 becomes the current version.
    const v2 = await startWorker('v2');
    await versionRegistered('v2');
    const raw = await rawClient();
    try {
      await raw.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: 'default',
        deploymentName: name,
        buildId: 'v2',
        identity: 'deploy-test',
        ignoreMissingTaskQueues: true,
      });
    } finally {
      await raw.connection.close();
    }

    // New sessions start on v2 (the new deploy's clients pin them to their own version).
    const clientV2 = await clientOf('v2');
    const fresh = await clientV2.createSession();
    expect((await fresh.send('hello')).text()).toBe('answered by v2');
    expect((await fresh.describe()).version).toBe('v2');

    // The v1 session moves at a turn boundary, to the current version, and is recorded so.
    const moved = await moving.upgrade(undefined, { identity: 'operator@deploy' });
    expect(moved.version).toBe('v2');
    expect(moved.upgrade).toMatchObject({
      fromVersion: 'v1',
      toVersion: 'v2',
      by: 'operator@deploy',
      afterPrompts: 1,
    });
    expect((await moving.send('hello again')).text()).toBe('answered by v2');
    expect((await moving.describe()).upgrades).toEqual([moved.upgrade]);

    // The held session was never moved: its approval, given now, lets v1 finish it.
    await held.approve(ask!.requestId);
    const heldResponse = await pending;
    expect(heldResponse.text()).toBe('answered by v1');
    expect(heldResponse.toolCalls.map((c) => [c.toolName, c.status])).toEqual([
      ['Write', 'success'],
    ]);
    expect(readFileSync(join(dir, 'held.txt'), 'utf8')).toBe('v1');
    expect((await held.describe()).version).toBe('v1');

    // Which version decided what: per dispatch, on the sessions' timelines.
    const versionsOf = async (s: typeof held) =>
      (await s.timeline()).map((entry) => `${entry.event} ${entry.version}`);
    expect(await versionsOf(held)).toEqual(['SessionStart v1', 'UserPromptSubmit v1']);
    expect(await versionsOf(moving)).toEqual([
      'SessionStart v1',
      'UserPromptSubmit v1',
      'UserPromptSubmit v2',
    ]);
    expect(await versionsOf(fresh)).toEqual(['SessionStart v2', 'UserPromptSubmit v2']);

    for (const s of [held, moving, fresh]) await s.close();

    // Nothing lost, nothing twice: each callback ran once, on the version that decided.
    expect(effectsOf(held.id)).toEqual(['SessionStart v1', 'UserPromptSubmit v1', 'SessionEnd v1']);
    expect(effectsOf(moving.id)).toEqual([
      'SessionStart v1',
      'UserPromptSubmit v1',
      'UserPromptSubmit v2',
      'SessionEnd v2',
    ]);
    expect(effectsOf(fresh.id)).toEqual([
      'SessionStart v2',
      'UserPromptSubmit v2',
      'SessionEnd v2',
    ]);

    // The history records the move: the upgrade (from, to, by, when) and Temporal's re-pin.
    const history = await clientV1.temporal.workflow.getHandle(moving.workflowId).fetchHistory();
    const timeline = timelineFromHistory(history);
    expect(timeline.version).toBe('v1');
    expect(timeline.upgrades).toEqual([moved.upgrade]);
    expect(timeline.dispatches.map((d) => `${d.event} ${d.version}`)).toEqual([
      'SessionStart v1',
      'UserPromptSubmit v1',
      'UserPromptSubmit v2',
      'SessionEnd v2',
    ]);
    const repin = history.events!.find((e) => e.workflowExecutionOptionsUpdatedEventAttributes);
    expect(
      repin?.workflowExecutionOptionsUpdatedEventAttributes?.versioningOverride?.pinned?.version,
    ).toMatchObject({ deploymentName: name, buildId: 'v2' });
    if (process.env.RECORD_UPGRADE_HISTORY) {
      const { historyToJSON } = await import('@temporalio/common/lib/proto-utils.js');
      writeFileSync(process.env.RECORD_UPGRADE_HISTORY, historyToJSON(history) + '\n');
    }

    await Promise.all([v1.stop(), v2.stop()]);
  }, 300_000);
});

const identityFixture = fileURLToPath(
  new URL('../../fixtures/identity-process.ts', import.meta.url),
);

/** An agent process of `test/fixtures/identity-process.ts`; resolves with its `result`. */
async function runIdentityProcess(env: IdentityEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', identityFixture], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), IDENTITY_ENV: JSON.stringify(env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const line = async (tag: string) => {
    await waitFor(
      () => {
        if (child.exitCode !== null && !new RegExp(`^${tag} `, 'm').test(output)) {
          throw new Error(`${env.policy} process exited (${child.exitCode}):\n${output}`);
        }
        return new RegExp(`^${tag} `, 'm').test(output);
      },
      240_000,
      `'${tag}' from the ${env.policy} process`,
    );
    return JSON.parse(new RegExp(`^${tag} (.*)$`, 'm').exec(output)![1]!) as unknown;
  };
  const ready = (await line('ready')) as { version: string };
  return {
    ready,
    async run() {
      child.stdin!.write('go\n');
      const result = (await line('result')) as {
        sessionId: string;
        outcomes: string[];
        versions: string[];
      };
      child.stdin!.write('stop\n');
      const seen = (await line('seen')) as Record<string, number>;
      return { ...result, seen };
    },
  };
}

describe("two teams' agents with default names and routing on", () => {
  it('routes each session to its own definition: every decision its own, no task ever refused', async () => {
    const [strict, lax] = await Promise.all([
      runIdentityProcess({ policy: 'strict', prompts: 10, versioning: 'deployments' }),
      runIdentityProcess({ policy: 'lax', prompts: 10, versioning: 'deployments' }),
    ]);
    expect(strict.ready.version).not.toBe(lax.ready.version);
    const [strictRun, laxRun] = await Promise.all([strict.run(), lax.run()]);
    expect(strictRun.outcomes).toEqual(Array(10).fill('rejected:HOOK_ABORTED'));
    expect(laxRun.outcomes).toEqual(Array(10).fill('completed:answered'));
    expect(strictRun.versions).toEqual([strict.ready.version]);
    expect(laxRun.versions).toEqual([lax.ready.version]);
    expect(strictRun.seen).toEqual({ [strictRun.sessionId]: 10 });
    expect(laxRun.seen).toEqual({ [laxRun.sessionId]: 10 });
    // Temporal routed every task to the session's own version: no worker refused one.
    const raw = await rawClient();
    try {
      for (const run of [strictRun, laxRun]) {
        const history = await raw.workflow.getHandle(`session-${run.sessionId}`).fetchHistory();
        const dispatches = timelineFromHistory(history).dispatches;
        expect(dispatches).toHaveLength(10);
        expect(dispatches.filter((d) => d.refusals !== undefined)).toEqual([]);
      }
    } finally {
      await raw.connection.close();
    }
  }, 300_000);
});
