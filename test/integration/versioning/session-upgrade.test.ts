/**
 * `session.upgrade()` and version routing, on the shared server: a move with versioning off
 * (unversioned workers: the refusal finds the target version's worker), the refusals of a
 * move nobody can serve, a mistyped version or a version that is not a build id, a moved
 * session listed under its new version (search attribute, memo, gate), a client killed
 * between begin and finish (a child process: the session's hold ends after `holdMs`, the move
 * abandoned, or finished by the session when re-pinned), and a client whose fingerprint names
 * no version of its Worker Deployment (another toolchain's fingerprint).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  HookEvent,
  createAgent,
  createAgentClient,
  createAgentWorker,
  type AgentClient,
  type AgentOptions,
  type AgentWorker,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { Updates } from '../../../src/common/messages.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { gateDeploy } from '../../../src/testing/gate.js';
import { deployDefinition } from '../../fixtures/deploy-agent.js';
import { gate, rawClient, temporalAddress, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const dir = tempDir('upgrade');
const effectsFile = join(dir, 'effects.log');
writeFileSync(effectsFile, '');

const started: Array<AgentWorker | AgentClient> = [];
afterEach(async () => {
  for (const part of started.reverse()) {
    await ('shutdown' in part ? part.shutdown() : part.close()).catch(() => undefined);
  }
  started.length = 0;
});

function definition(
  version: string,
  name: string,
  versioning: 'deployments' | 'off',
): AgentOptions {
  const options = deployDefinition(version, effectsFile, name, dir);
  return { ...options, advanced: { ...options.advanced, temporal: { versioning } } };
}

async function worker(options: AgentOptions): Promise<AgentWorker> {
  const w = await createAgentWorker(options);
  started.push(w);
  return w;
}

/**
 * Stop `w` before the session closes: with versioning off, SessionEnd's 3 s budget may be spent
 * on refusals by a worker of the other version on the same queue (matching picks either).
 */
async function stop(w: AgentWorker): Promise<void> {
  started.splice(started.indexOf(w), 1);
  await w.shutdown();
}

async function client(options: AgentOptions): Promise<AgentClient> {
  const c = await createAgentClient(options);
  started.push(c);
  return c;
}

const fixtures = join(import.meta.dirname, '..', '..', 'fixtures');

/**
 * A client in a child process begins the move of `workflowId` to `toVersion` (and re-pins it,
 * given `deploymentName`), then is SIGKILLed before it can finish.
 */
async function beginAndDie(
  workflowId: string,
  toVersion: string,
  holdMs: number,
  deploymentName?: string,
): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(fixtures, 'upgrade-begin-process.ts'),
      workflowId,
      toVersion,
      String(holdMs),
      ...(deploymentName ? [deploymentName] : []),
    ],
    {
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress() },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('close', (_code, signal) => resolve(signal)),
  );
  try {
    await waitFor(
      () => stdout.includes('begun') || child.exitCode !== null,
      60_000,
      'the child process to begin the move',
    );
  } finally {
    child.kill('SIGKILL');
  }
  expect(stdout, stderr).toContain('begun');
  expect(await closed).toBe('SIGKILL');
}

/** `promise`'s outcome, or a failure naming `what` once `ms` passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Slack on top of a hold's bound for the workflow task that ends it, on a loaded machine. */
const SLACK_MS = 15_000;

describe('session.upgrade() with versioning off', () => {
  it('moves a session to the version named, found among unversioned workers, and records it', async () => {
    const name = `upgrade-off-${randomUUID().slice(0, 8)}`;
    const v1 = await worker(definition('v1', name, 'off'));
    await worker(definition('v2', name, 'off'));
    const session = await (await client(definition('v1', name, 'off'))).createSession();
    expect((await session.send('hello')).text()).toBe('answered by v1');

    const moved = await session.upgrade('v2', { identity: 'tester' });
    expect(moved).toMatchObject({
      version: 'v2',
      upgrade: { fromVersion: 'v1', toVersion: 'v2', by: 'tester', afterPrompts: 1 },
    });
    expect((await session.send('hello')).text()).toBe('answered by v2');
    expect((await session.timeline()).map((e) => `${e.event} ${e.version}`)).toEqual([
      'SessionStart v1',
      'UserPromptSubmit v1',
      'UserPromptSubmit v2',
    ]);
    await stop(v1);
    await session.close();
  }, 120_000);

  it('two callers finishing one move share it: recorded once, the turn given back once', async () => {
    const name = `upgrade-twice-${randomUUID().slice(0, 8)}`;
    const v1 = await worker(definition('v1', name, 'off'));
    await worker(definition('v2', name, 'off'));
    const session = await (await client(definition('v1', name, 'off'))).createSession();
    expect((await session.send('hello')).text()).toBe('answered by v1');
    const raw = await rawClient();
    try {
      const handle = raw.workflow.getHandle(session.workflowId);
      const phase = (p: 'begin' | 'finish', by: string) =>
        handle.executeUpdate(Updates.upgrade, {
          args: [{ phase: p, toVersion: 'v2', by }],
          updateId: `${p}-${randomUUID()}`,
        });
      await phase('begin', 'a');
      // Both finishes are accepted while the first one's describeDefinition runs.
      const [first, second] = await Promise.all([phase('finish', 'a'), phase('finish', 'b')]);
      expect(second).toEqual(first);
      expect(first.upgrade).toMatchObject({ fromVersion: 'v1', toVersion: 'v2' });
    } finally {
      await raw.connection.close();
    }
    // The next send gets its turn (a second give-back would have skipped it for good).
    expect((await session.send('hello')).text()).toBe('answered by v2');
    expect((await session.describe()).upgrades).toHaveLength(1);
    await stop(v1);
    await session.close();
  }, 120_000);

  it('a move whose client died before finishing holds the turn only holdMs: another client then sends and closes, and the move is recorded as abandoned', async () => {
    const name = `upgrade-dead-${randomUUID().slice(0, 8)}`;
    await worker(definition('v1', name, 'off'));
    const v2 = await worker(definition('v2', name, 'off'));
    const session = await (await client(definition('v1', name, 'off'))).createSession();
    expect((await session.send('hello')).text()).toBe('answered by v1');
    const holdMs = 3_000;
    await beginAndDie(session.workflowId, 'v2', holdMs);
    await stop(v2);

    const otherClient = await client(definition('v1', name, 'off'));
    const other = await otherClient.session(session.id);
    const sent = await within(other.send('after'), holdMs + SLACK_MS, 'the send after the move');
    expect(sent.text()).toBe('answered by v1');
    const description = await other.describe();
    expect(description).toMatchObject({
      version: 'v1',
      status: 'open',
      abandonedUpgrades: [{ version: 'v1', toVersion: 'v2', by: 'dying-client', heldMs: holdMs }],
    });
    expect(description.upgrades).toBeUndefined();
    const history = await otherClient.temporal.workflow
      .getHandle(session.workflowId)
      .fetchHistory();
    expect(timelineFromHistory(history).abandonedUpgrades).toEqual(description.abandonedUpgrades);
    // A late finish of that client is refused, naming what happened.
    const late = await otherClient.temporal.workflow
      .getHandle(session.workflowId)
      .executeUpdate(Updates.upgrade, {
        args: [{ phase: 'finish', toVersion: 'v2', by: 'dying-client' }],
      })
      .catch((e: unknown) => e);
    expect((late as Error).cause).toMatchObject({
      message: expect.stringMatching(/the move to 'v2' begun by 'dying-client' was abandoned/),
    });
    await within(other.close(), SLACK_MS, 'the close after the move');
  }, 120_000);

  it('refuses a mistyped version within seconds, naming it and the versions that poll, and the session still works', async () => {
    const name = `upgrade-typo-${randomUUID().slice(0, 8)}`;
    await worker(definition('v1', name, 'off'));
    const v2 = await worker(definition('v2', name, 'off'));
    const session = await (await client(definition('v1', name, 'off'))).createSession();
    const asked = Date.now();
    const error = await session.upgrade('v3').catch((e: unknown) => e);
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `no worker of agent '${name}' version 'v3' polls task queue 'durable-agent.${name}'; ` +
          `the versions that poll it: ('v1', 'v2'|'v2', 'v1')`,
      ),
    );
    expect((await session.send('hello')).text()).toBe('answered by v1');
    expect((await session.describe()).upgrades).toBeUndefined();
    await stop(v2);
    await session.close();
  }, 120_000);

  it('refuses a move without a version named, and a version that is not a build id', async () => {
    const name = `upgrade-bad-${randomUUID().slice(0, 8)}`;
    await worker(definition('v1', name, 'off'));
    const session = await (await client(definition('v1', name, 'off'))).createSession();
    await expect(session.upgrade()).rejects.toThrow(
      /without Worker Deployments .* name the version to move to/,
    );
    await expect(session.upgrade('v 2')).rejects.toThrow(
      /toVersion must be 1 to 255 letters, digits.*got 'v 2'/,
    );
    expect((await session.send('hello')).text()).toBe('answered by v1');
    await session.close();
  }, 120_000);
});

describe('routing by Worker Deployments', () => {
  it('keeps the version moved to across continue-as-new', async () => {
    const name = `upgrade-can-${randomUUID().slice(0, 8)}`;
    const rolling = (version: string): AgentOptions => {
      const options = definition(version, name, 'deployments');
      return { ...options, advanced: { ...options.advanced, continueAsNewAfterPrompts: 2 } };
    };
    await worker(rolling('v1'));
    await worker(rolling('v2'));
    const session = await (await client(rolling('v1'))).createSession();
    expect((await session.send('one')).text()).toBe('answered by v1');
    const moved = await session.upgrade('v2');
    expect(moved.version).toBe('v2');
    expect((await session.send('two')).text()).toBe('answered by v2');
    // The run continued as new after two prompts; the next run is still on v2.
    expect((await session.send('three')).text()).toBe('answered by v2');
    const raw = await rawClient();
    try {
      const description = await raw.workflow.getHandle(session.workflowId).describe();
      expect(description.runId).not.toBe(description.raw.workflowExecutionInfo?.firstRunId);
      expect(
        description.raw.workflowExecutionInfo?.versioningInfo?.versioningOverride?.pinned?.version
          ?.buildId,
      ).toBe('v2');
    } finally {
      await raw.connection.close();
    }
    expect(await session.describe()).toMatchObject({ version: 'v2', upgrades: [moved.upgrade] });
    await session.close();
  }, 120_000);

  it('finishes a move cut short after its re-pin when upgrade() is called again', async () => {
    const name = `upgrade-resume-${randomUUID().slice(0, 8)}`;
    await worker(definition('v1', name, 'deployments'));
    await worker(definition('v2', name, 'deployments'));
    const agentClient = await client(definition('v1', name, 'deployments'));
    const session = await agentClient.createSession();
    expect((await session.send('hello')).text()).toBe('answered by v1');
    // A client that began the move and re-pinned the session, then died before finishing it.
    const handle = agentClient.temporal.workflow.getHandle(session.workflowId);
    await handle.executeUpdate(Updates.upgrade, {
      args: [{ phase: 'begin', toVersion: 'v2', by: 'crashed-client' }],
    });
    await agentClient.temporal.workflowService.updateWorkflowExecutionOptions({
      namespace: 'default',
      workflowExecution: { workflowId: session.workflowId },
      workflowExecutionOptions: {
        versioningOverride: {
          pinned: { behavior: 1, version: { deploymentName: name, buildId: 'v2' } },
        },
      },
      updateMask: { paths: ['versioning_override'] },
      identity: 'crashed-client',
    });
    const moved = await session.upgrade('v2', { identity: 'second-try' });
    expect(moved.upgrade).toMatchObject({ fromVersion: 'v1', toVersion: 'v2', by: 'second-try' });
    expect((await session.send('hello')).text()).toBe('answered by v2');
    await session.close();
  }, 120_000);

  it('files a moved session under its new version: search attribute, memo and gate', async () => {
    const name = `upgrade-list-${randomUUID().slice(0, 8)}`;
    await worker(definition('v1', name, 'deployments'));
    await worker(definition('v2', name, 'deployments'));
    const agentClient = await client(definition('v1', name, 'deployments'));
    const session = await agentClient.createSession();
    expect((await session.send('hello')).text()).toBe('answered by v1');
    await session.upgrade('v2');
    const raw = agentClient.temporal;
    const listed = async (query: string) => {
      const ids: string[] = [];
      for await (const execution of raw.workflow.list({ query })) ids.push(execution.workflowId);
      return ids;
    };
    const agentIs = `DurableAgentName = '${name}'`;
    await waitFor(
      async () =>
        (await listed(`${agentIs} AND DurableAgentVersion = 'v2'`)).includes(session.workflowId),
      20_000,
      'the session listed under DurableAgentVersion v2',
    );
    expect(await listed(`${agentIs} AND DurableAgentVersion = 'v1'`)).not.toContain(
      session.workflowId,
    );
    expect((await raw.workflow.getHandle(session.workflowId).describe()).memo).toMatchObject({
      version: 'v2',
    });
    const report = await gateDeploy({
      agent: definition('v2', name, 'deployments'),
      client: agentClient,
      version: 'v2',
    });
    expect(report.sessions.map((s) => s.sessionId)).toEqual([session.id]);
    await session.close();
  }, 120_000);

  it('a re-pinned move whose client died before finishing is finished by the session once holdMs passed', async () => {
    const name = `upgrade-repin-dead-${randomUUID().slice(0, 8)}`;
    await worker(definition('v1', name, 'deployments'));
    await worker(definition('v2', name, 'deployments'));
    const session = await (await client(definition('v1', name, 'deployments'))).createSession();
    expect((await session.send('hello')).text()).toBe('answered by v1');
    const holdMs = 3_000;
    await beginAndDie(session.workflowId, 'v2', holdMs, name);

    const other = await (await client(definition('v1', name, 'deployments'))).session(session.id);
    const sent = await within(other.send('after'), holdMs + SLACK_MS, 'the send after the move');
    expect(sent.text()).toBe('answered by v2');
    const description = await other.describe();
    expect(description).toMatchObject({
      version: 'v2',
      upgrades: [{ fromVersion: 'v1', toVersion: 'v2', by: 'dying-client', afterPrompts: 1 }],
    });
    expect(description.abandonedUpgrades).toBeUndefined();
    await within(other.close(), SLACK_MS, 'the close after the move');
  }, 120_000);

  it('refuses a move to a version no worker polls, and the session stays on its own', async () => {
    const name = `upgrade-none-${randomUUID().slice(0, 8)}`;
    await worker(definition('v1', name, 'deployments'));
    const session = await (await client(definition('v1', name, 'deployments'))).createSession();
    const error = await session.upgrade('v9').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `no worker of agent '${name}' version 'v9' polls task queue 'durable-agent.${name}'; ` +
          `start workers of that version first \\(the versions Worker Deployment '${name}' has: 'v1'\\)`,
      ),
    );
    expect((await session.send('hello')).text()).toBe('answered by v1');
    expect((await session.describe()).upgrades).toBeUndefined();
    await session.close();
  }, 120_000);

  it("waits for a callback that outlived its budget on the process's own (unversioned) queue, then lifts the lock", async () => {
    const agent = await createAgent({
      name: `cleanup-${randomUUID().slice(0, 8)}`,
      model: scriptedModel(() => 'answered'),
      advanced: { temporal: { versioning: 'deployments' } },
    });
    started.push(agent.worker, agent.client);
    const hold = gate();
    const session = await agent.createSession({
      hookTimeoutMs: 150,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            await hold.opened; // ignores its signal on purpose
            return { action: 'continue' };
          },
        ],
      },
    });
    expect(await session.send('x').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    expect((await session.describe()).pendingCleanups).toBe(1);
    hold.open();
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      20_000,
      'the cleanup wait on the unversioned cleanup queue to end',
    );
    expect((await session.timeline())[0]).toMatchObject({ cleanup: 'settled' });
    await session.close();
  }, 120_000);

  it('refuses to start a session pinned to a fingerprint its deployment does not have, naming the versions it has', async () => {
    const name = `drift-${randomUUID().slice(0, 8)}`;
    // The worker's and the client's callbacks print differently (as two toolchains may print
    // one callback): no explicit version, so their fingerprints differ.
    const base = { name, model: scriptedModel(() => 'answered') };
    const w = await worker({
      ...base,
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' as const })] },
        temporal: { versioning: 'deployments' },
      },
    });
    const raw = await rawClient();
    try {
      await waitFor(
        async () => {
          const info = await raw.workflowService
            .describeWorkerDeployment({ namespace: 'default', deploymentName: name })
            .catch(() => undefined);
          return (info?.workerDeploymentInfo?.versionSummaries ?? []).length > 0;
        },
        30_000,
        'the deployment registered',
      );
    } finally {
      await raw.connection.close();
    }
    const other = await client({
      ...base,
      advanced: {
        hooks: {
          [HookEvent.UserPromptSubmit]: [async (_input) => ({ action: 'continue' as const })],
        },
        temporal: { versioning: 'deployments' },
      },
    });
    const error = await other.createSession().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(
      `is not a version of Worker Deployment '${name}', which has '${w.version}'`,
    );
    expect((error as Error).message).toContain('explicit `version`');
  }, 120_000);
});
