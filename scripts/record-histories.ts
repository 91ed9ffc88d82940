/**
 * Record representative session histories as replay fixtures in test/fixtures/histories/.
 * Every workflow change must keep them replayable (test/integration/testing/replay.test.ts); the
 * fixtures recorded by 0.1 are the baseline, and a patch's fixture is recorded by the code
 * before it (CONTRIBUTING.md, "Changing workflow code").
 *
 *   npx tsx scripts/record-histories.ts [name ...]   (starts its own dev server)
 *
 * With names, only those fixtures are recorded (e.g. `continued-as-new`), so the others keep
 * the histories of the code that recorded them. The sub-agent scenarios (`subagent-task`, ...)
 * are in scripts/record-subagent-histories.ts; each saves its sub-agents' histories too. The
 * MCP session (`mcp-session`) is in scripts/record-mcp-histories.ts, the budget session
 * (`budget-session`) in scripts/record-budget-histories.ts, the staged approvals
 * (`approval-stages`) in scripts/record-approval-histories.ts. The demo's session is recorded by the demo:
 * `npm run demo -- --record-fixture test/fixtures/histories/demo-session.json`; the session
 * moved between deployment versions by the deploy test:
 * `RECORD_UPGRADE_HISTORY=$PWD/test/fixtures/histories/upgraded-session.json npx vitest run
 * test/integration/versioning/deploy-drain.test.ts -t "keeps a v1 session"`.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import {
  createAgent,
  createAgentClient,
  createAgentWorker,
  fileStore,
  HookEvent,
  type AgentOptions,
  type HookMap,
  type Session,
} from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';
import { recordSubagentHistories } from './record-subagent-histories.js';
import { recordMcpHistories } from './record-mcp-histories.js';
import { recordBudgetHistories } from './record-budget-histories.js';
import { recordApprovalHistories } from './record-approval-histories.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(repoRoot, 'test', 'fixtures', 'histories');
const server = await startDevServer({ cacheDir: join(repoRoot, '.temporal') });
let release!: () => void;
const released = new Promise<void>((resolve) => (release = resolve));
let failSessionEnd = false;
const only = process.argv.slice(2);
const want = (name: string) => only.length === 0 || only.includes(name);
const hooks = {
  [HookEvent.SessionStart]: [async () => ({ action: 'continue' })],
  [HookEvent.UserPromptSubmit]: [
    async (input) => {
      const prompt = String(input.userPrompt ?? '');
      if (prompt === 'stuck') await released;
      if (prompt === 'wait-abort') {
        await new Promise((r) => input.abortSignal!.addEventListener('abort', r, { once: true }));
      }
      if (prompt === 'reject') return { action: 'abort', reason: 'rejected by policy' };
      return { action: 'continue', modifiedInput: { userPrompt: `[tenant:acme]\n${prompt}` } };
    },
  ],
  [HookEvent.TaskCompleted]: [async () => ({ action: 'continue' })],
  [HookEvent.SessionEnd]: [
    async () => {
      if (failSessionEnd) throw new Error('flush failed');
      return { action: 'continue' as const };
    },
  ],
} satisfies HookMap;
const agent = await createAgent({
  model: scriptedModel((request) => `reply ${request.modelStepIndex}`),
  advanced: { hooks, temporal: { address: server.address, taskQueue: 'record-histories' } },
});
// Continues as new after every two prompts: the rollover's archive and carry are replayed.
const rolloverAgent = await createAgent({
  model: scriptedModel((request) => `reply ${request.modelStepIndex}`),
  advanced: {
    hooks,
    continueAsNewAfterPrompts: 2,
    payloadStore: fileStore(join(repoRoot, '.durable-agent', 'record-payloads')),
    temporal: { address: server.address, taskQueue: 'record-histories-rollover' },
  },
});
// Reads README.md, then answers; its PreToolUse hook returns undefined (a malformed output).
const toolHookAgent = (name: string, toolHookErrors: 'tool-error' | 'reject') =>
  createAgent({
    name,
    model: scriptedModel((request) =>
      request.step === 0 ? toolCall('Read', { file_path: 'README.md' }) : 'done',
    ),
    workspaceRoots: [repoRoot],
    advanced: {
      hooks: { [HookEvent.PreToolUse]: [async () => undefined as never] },
      toolHookErrors,
      temporal: { address: server.address, taskQueue: `record-histories-${name}` },
    },
  });
const toolHookErrorAgent = await toolHookAgent('tool-hook-error', 'tool-error');
const toolHookRejectAgent = await toolHookAgent('tool-hook-error-reject', 'reject');
const client = new Client({ connection: await Connection.connect({ address: server.address }) });
const save = async (name: string, session: Session, runId?: string) => {
  const history = await client.workflow.getHandle(session.workflowId, runId).fetchHistory();
  writeFileSync(join(out, `${name}.json`), historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length ?? 0} events`);
};

try {
  if (want('continued-as-new')) {
    const s = await rolloverAgent.createSession({ sessionId: 'fixture-continued-as-new' });
    const first = (await client.workflow.getHandle(s.workflowId).describe()).runId;
    for (const prompt of ['one', 'two', 'three']) await s.send(prompt);
    while ((await client.workflow.getHandle(s.workflowId).describe()).runId === first) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await s.close();
    await save('continued-as-new-run1', s, first);
    await save('continued-as-new-run2', s);
  }
  if (want('prompts-and-close')) {
    const s = await agent.createSession({ sessionId: 'fixture-prompts' });
    await s.send('hello');
    await s.send('reject').catch(() => undefined);
    await s.send('again');
    await s.close();
    await save('prompts-and-close', s);
  }
  if (want('queued-sends')) {
    // One send alone, two at once (the second waits for the first), one rejected by its
    // hook; UserPromptSubmit as a local activity, TaskCompleted through the task queue.
    const s = await agent.createSession({
      sessionId: 'fixture-queued-sends',
      hookDispatch: { UserPromptSubmit: 'local' },
    });
    await s.send('hello');
    await Promise.all([s.send('first'), s.send('second')]);
    await s.send('reject').catch(() => undefined);
    await s.close();
    await save('queued-sends', s);
  }
  if (want('timeout-fail-closed')) {
    const s = await agent.createSession({ sessionId: 'fixture-timeout', hookTimeoutMs: 100 });
    await s.send('stuck').catch(() => undefined);
    await s.send('refused').catch(() => undefined);
    release();
    while ((await s.describe()).pendingCleanups > 0) await new Promise((r) => setTimeout(r, 20));
    await s.send('after');
    await s.close();
    await save('timeout-fail-closed', s);
  }
  if (want('abort')) {
    const s = await agent.createSession({ sessionId: 'fixture-abort' });
    const pending = s.send('wait-abort');
    await new Promise((r) => setTimeout(r, 300));
    await s.abort(new Error('stop'));
    await pending;
    await s.send('next');
    await s.close();
    await save('abort', s);
  }
  if (want('session-end-failed-then-closed')) {
    failSessionEnd = true;
    const s = await agent.createSession({ sessionId: 'fixture-session-end-retry' });
    await s.close().catch(() => undefined);
    failSessionEnd = false;
    await s.close();
    await save('session-end-failed-then-closed', s);
  }
  if (want('idle-timeout')) {
    const s = await agent.createSession({ sessionId: 'fixture-idle', idleTimeoutMs: 200 });
    while ((await s.describe()).status !== 'closed') await new Promise((r) => setTimeout(r, 50));
    await save('idle-timeout', s);
  }
  if (want('tool-hook-error')) {
    const s = await toolHookErrorAgent.createSession({ sessionId: 'fixture-tool-hook-error' });
    await s.send('read the readme');
    await s.close();
    await save('tool-hook-error', s);
  }
  if (want('tool-hook-error-reject')) {
    const s = await toolHookRejectAgent.createSession({ sessionId: 'fixture-tool-hook-reject' });
    await s.send('read the readme').catch(() => undefined);
    await s.close();
    await save('tool-hook-error-reject', s);
  }
  if (want('local-dispatch')) {
    // UserPromptSubmit dispatched as a local activity (a marker, no activity task).
    const s = await agent.createSession({
      sessionId: 'fixture-local-dispatch',
      hookDispatch: { UserPromptSubmit: 'local' },
    });
    await s.send('hello');
    await s.send('again');
    await s.close();
    await save('local-dispatch', s);
  }
  if (want('abort-then-queued')) {
    // A prompt, one aborted, then two sent at once: the prompts after an abort run in a new
    // cancellation scope.
    const s = await agent.createSession({ sessionId: 'fixture-abort-then-queued' });
    await s.send('hello');
    const pending = s.send('wait-abort');
    await new Promise((r) => setTimeout(r, 300));
    await s.abort(new Error('stop'));
    await pending;
    await Promise.all([s.send('next'), s.send('last')]);
    await s.close();
    await save('abort-then-queued', s);
  }
  if (want('rollover-by-updates')) {
    // A run continues as new after 200 Updates (the ready Update and 199 sends, then one more).
    // No hooks, so the run stays far below Temporal's own suggestion (4,096 events).
    const bare = await createAgent({
      model: scriptedModel((request) => `reply ${request.modelStepIndex}`),
      advanced: { temporal: { address: server.address, taskQueue: 'record-histories-bare' } },
    });
    const s = await bare.createSession({ sessionId: 'fixture-rollover-by-updates' });
    const first = (await client.workflow.getHandle(s.workflowId).describe()).runId;
    for (let i = 0; i < 200; i++) await s.send(`p${i}`);
    while ((await client.workflow.getHandle(s.workflowId).describe()).runId === first) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await s.close();
    await save('rollover-by-updates-run1', s, first);
    await bare.shutdown();
  }
  if (want('cancelled-from-outside')) {
    const s = await agent.createSession({ sessionId: 'fixture-cancelled' });
    await client.workflow.getHandle(s.workflowId).cancel();
    while ((await s.describe()).status !== 'closed') await new Promise((r) => setTimeout(r, 50));
    await save('cancelled-from-outside', s);
  }
  if (want('version-refused')) {
    const fixture = 'version-refused';
    // A v2 session whose tasks a v1 worker refuses until a v2 worker polls: the version in
    // the input and the activity inputs, refused attempts, and their retries, replayed.
    const definition = (version: string): AgentOptions => ({
      name: 'record-versions',
      version,
      model: scriptedModel((request) => `reply ${request.modelStepIndex}`),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
        // Unversioned: refusals happen where Temporal does not route by version.
        temporal: {
          address: server.address,
          taskQueue: 'record-histories-versions',
          versioning: 'off',
        },
      },
    });
    const v1 = await createAgentWorker(definition('v1'));
    const v2Client = await createAgentClient(definition('v2'));
    let v2: Awaited<ReturnType<typeof createAgentWorker>> | undefined;
    try {
      const s = await v2Client.createSession({ sessionId: `fixture-${fixture}` });
      const sending = s.send('hello');
      const refused = async () =>
        (await client.workflow.getHandle(s.workflowId).fetchHistory()).events?.some(
          (e) => e.activityTaskFailedEventAttributes,
        );
      while (!(await refused())) await new Promise((r) => setTimeout(r, 50));
      v2 = await createAgentWorker(definition('v2'));
      await sending;
      await s.close();
      await save(fixture, s);
    } finally {
      await v2?.shutdown();
      await v1.shutdown();
      await v2Client.close();
    }
  }
  if (want('upgrade-abandoned-then-moved')) {
    // A move begun and never finished (its hold's timer fires: abandoned, recorded in the
    // memo), then a move finished (its timer cancelled; the version search attribute and memo
    // upserted), each side of a prompt: the bounded hold and the upserts, replayed.
    const definition = (version: string): AgentOptions => ({
      name: 'record-upgrades',
      version,
      model: scriptedModel(() => `answered by ${version}`),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
        temporal: { address: server.address, taskQueue: 'record-histories-upgrades' },
      },
    });
    const v1 = await createAgentWorker(definition('v1'));
    const v2 = await createAgentWorker(definition('v2'));
    const v1Client = await createAgentClient(definition('v1'));
    try {
      const s = await v1Client.createSession({ sessionId: 'fixture-upgrade-abandoned' });
      await s.send('one');
      await client.workflow.getHandle(s.workflowId).executeUpdate('upgrade', {
        args: [{ phase: 'begin', toVersion: 'v2', by: 'dead-client', holdMs: 500 }],
      });
      while (!(await s.describe()).abandonedUpgrades) await new Promise((r) => setTimeout(r, 50));
      await s.send('two');
      await s.upgrade('v2', { identity: 'operator' });
      await s.send('three');
      // SessionEnd on v2 only: a v1 worker would refuse it within its short budget.
      await v1.shutdown();
      await s.close();
      await save('upgrade-abandoned-then-moved', s);
    } finally {
      await v2.shutdown();
      await v1.shutdown().catch(() => undefined);
      await v1Client.close();
    }
  }
  await recordSubagentHistories({ address: server.address, client, out, repoRoot, want });
  await recordMcpHistories({ address: server.address, client, out, repoRoot, want });
  await recordBudgetHistories({ address: server.address, client, out, want });
  await recordApprovalHistories({ address: server.address, client, out, want });
} finally {
  await client.connection.close();
  await agent.shutdown();
  await rolloverAgent.shutdown();
  await toolHookErrorAgent.shutdown();
  await toolHookRejectAgent.shutdown();
  await server.stop();
}
