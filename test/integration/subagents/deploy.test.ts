/**
 * A deploy while a sub-agent runs, on a real server with Worker Deployments: v1 and v2 of
 * one agent run as worker processes of their own. A v1 session's first sub-agent waits in its
 * UserPromptSubmit while v2 starts and becomes the deployment's current version; released,
 * it finishes on v1, and the parent (pinned to v1) starts its second sub-agent on v1 too.
 * New sessions, and their sub-agents, run on v2. Every callback of a session's tree ran on
 * the tree's version, once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { subagentDeployDefinition } from '../../fixtures/subagent-deploy-agent.js';
import { rawClient, temporalAddress, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workerFixture = fileURLToPath(
  new URL('../../fixtures/subagent-deploy-worker.ts', import.meta.url),
);
const name = `subagent-deploy-${randomUUID().slice(0, 8)}`;
const dir = tempDir('subagent-deploy');
const effectsFile = join(dir, 'effects.log');
writeFileSync(effectsFile, '');

const processes: ChildProcess[] = [];
const clients: AgentClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Start a worker process of `version`; resolves once it polls. */
async function startWorker(version: string): Promise<{ stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', workerFixture], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress(),
      DEPLOY_ENV: JSON.stringify({ name, version, dir }),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  processes.push(child);
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
  const client = await createAgentClient(subagentDeployDefinition(version, dir, name));
  clients.push(client);
  return client;
}

/** The effects lines `<event> <agentPath> <sessionId> <version>`, split. */
function effects(): string[][] {
  return readFileSync(effectsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '));
}

/** The session ids of the sub-agents of `sessionId`, in the order they started. */
function childrenOf(sessionId: string): string[] {
  const ids = effects()
    .filter(([event, , id]) => event === 'SessionStart' && id!.startsWith(`${sessionId}/`))
    .map(([, , id]) => id!);
  return [...new Set(ids)];
}

/** Make `version` the deployment's current version, once the server lists it. */
async function makeCurrent(version: string): Promise<void> {
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
    await raw.workflowService.setWorkerDeploymentCurrentVersion({
      namespace: 'default',
      deploymentName: name,
      buildId: version,
      identity: 'deploy-test',
      ignoreMissingTaskQueues: true,
    });
  } finally {
    await raw.connection.close();
  }
}

/** What the server and the history say of one session workflow: its version, per dispatch too. */
async function versionsOf(sessionId: string) {
  const raw = await rawClient();
  try {
    const handle = raw.workflow.getHandle(`session-${sessionId}`);
    const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
    const timeline = timelineFromHistory(await handle.fetchHistory());
    return {
      // The version it runs on, and its pinning override (a session's from its client; a
      // sub-agent's inherited from its parent).
      version: info?.deploymentVersion?.buildId,
      override: info?.versioningOverride?.pinned?.version?.buildId,
      dispatches: timeline.dispatches.map((d) => `${d.event} ${d.version}`),
    };
  } finally {
    await raw.connection.close();
  }
}

describe('a deploy v1 to v2 while a sub-agent runs', () => {
  it('keeps the running tree on v1 (its next sub-agent too), starts new trees on v2', async () => {
    const v1 = await startWorker('v1');
    const held = await (await clientOf('v1')).createSession();
    const pending = held.send('hold');
    await waitFor(
      () =>
        effects().some(([event, path]) => event === 'UserPromptSubmit' && path === 'main/helper'),
      60_000,
      "the sub-agent's UserPromptSubmit",
    );

    // The deploy: v2's worker starts beside v1's and becomes current; then the hook returns.
    const v2 = await startWorker('v2');
    await makeCurrent('v2');
    writeFileSync(join(dir, 'release'), '');

    const response = await pending;
    expect(response.text()).toBe('parent got: helped by v1 | helped by v1');
    expect(response.toolCalls.map((c) => [c.toolName, c.status])).toEqual([
      ['Task', 'success'],
      ['Task', 'success'],
    ]);

    // New sessions (the new deploy's clients pin them to v2) and their sub-agents run on v2.
    const fresh = await (await clientOf('v2')).createSession();
    expect((await fresh.send('quick')).text()).toBe('parent got: helped by v2');
    await held.close();
    await fresh.close();

    const [first, second] = childrenOf(held.id);
    const [freshChild] = childrenOf(fresh.id);
    const tree = {
      parent: await versionsOf(held.id),
      first: await versionsOf(first!),
      second: await versionsOf(second!),
      fresh: await versionsOf(fresh.id),
      freshChild: await versionsOf(freshChild!),
    };
    const child = (version: string) => ({
      version,
      override: version,
      dispatches: [
        `SessionStart ${version}`,
        `UserPromptSubmit ${version}`,
        `SessionEnd ${version}`,
      ],
    });
    expect(tree).toMatchObject({
      parent: {
        version: 'v1',
        override: 'v1',
        dispatches: ['SessionStart v1', 'UserPromptSubmit v1', 'SessionEnd v1'],
      },
      first: child('v1'),
      second: child('v1'),
      fresh: {
        version: 'v2',
        override: 'v2',
        dispatches: ['SessionStart v2', 'UserPromptSubmit v2', 'SessionEnd v2'],
      },
      freshChild: child('v2'),
    });

    // Each callback of a tree ran once, on the tree's version (never another definition's).
    const ran = (sessionId: string) =>
      effects()
        .filter(([, , id]) => id === sessionId || id!.startsWith(`${sessionId}/`))
        .map(([event, path, , version]) => `${event} ${path} ${version}`);
    const once = (path: string, version: string) =>
      ['SessionStart', 'UserPromptSubmit', 'SessionEnd'].map((e) => `${e} ${path} ${version}`);
    expect(ran(held.id).sort()).toEqual(
      [...once('main', 'v1'), ...once('main/helper', 'v1'), ...once('main/helper', 'v1')].sort(),
    );
    expect(ran(fresh.id).sort()).toEqual(
      [...once('main', 'v2'), ...once('main/helper', 'v2')].sort(),
    );

    await Promise.all([v1.stop(), v2.stop()]);
  }, 300_000);
});
