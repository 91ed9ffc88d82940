/**
 * Sub-agents on a real Temporal server, with the worker in a process of its own and the
 * client in the test (`test/fixtures/subagent-agent.ts`): a `Task` call starts a child
 * session that runs under the agent's policy. The agent's PreToolUse hook, inherited by the
 * sub-agent, blocks its `rm -rf` (the files stay); the permission function's deny of a Task
 * call starts no child; an unknown sub-agent name is a tool error naming the known ones; a
 * query by the parent's search attributes finds the sub-agent too. Real built-in tools on a
 * real workspace, driven by a scripted model; the callbacks' effects are counted from the
 * file the worker process writes.
 */
import { mkdirSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { AGENT_VERSION_KEY, STATUS_KEY } from '../../../src/common/search-attributes.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import type { CrashAgentEnv } from '../../fixtures/crash-agent.js';
import { SUBAGENT_AGENT_NAME, subagentAgentOptions } from '../../fixtures/subagent-agent.js';
import { rawClient, waitFor } from '../../helpers/common.js';
import { historyOf } from '../../helpers/history.js';
import { crashEnv, effects, killAll, startWorkerProcess } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dirs.js';

/** Visibility is eventually consistent: how long a listing may lag behind a start. */
const LIST_WAIT_MS = 20_000;

const workspace = tempDir('subagents-spawn');
mkdirSync(join(workspace, 'build'));
writeFileSync(join(workspace, 'build', 'out.js'), 'built\n');

let env: CrashAgentEnv;
let client: AgentClient;

beforeAll(async () => {
  env = crashEnv({ definition: 'subagents', workspace });
  await startWorkerProcess(env, 'worker');
  client = await createAgentClient(subagentAgentOptions({ ...env, label: 'client' }));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await killAll();
});

/** The workflow ids of the children the session's workflow started, from its history. */
async function childrenOf(sessionId: string): Promise<string[]> {
  const history = await historyOf(sessionWorkflowId(sessionId));
  return (history.events ?? []).flatMap((event) => {
    const started = event.startChildWorkflowExecutionInitiatedEventAttributes;
    return started?.workflowId ? [started.workflowId] : [];
  });
}

/** The effect lines of sessions under `sessionId` (its own and its sub-agents'), without the label. */
function effectsOf(sessionId: string): string[] {
  return effects(env)
    .filter((line) => line.includes(sessionId))
    .map((line) => line.split(' ').slice(1).join(' '));
}

describe('a sub-agent under the agent policy, worker in another process', () => {
  it("the agent's PreToolUse, inherited by the sub-agent, blocks its rm -rf; the parent reads the sub-agent's answer", async () => {
    const session = await client.createSession();
    const response = await session.send('clean');
    expect(response.toolCalls).toMatchObject([{ toolName: 'Task', status: 'success' }]);
    expect(response.text()).toBe('parent got: cleaner got: rm -rf is not allowed');
    expect(existsSync(join(workspace, 'build', 'out.js'))).toBe(true);
    const [childWorkflowId] = await childrenOf(session.id);
    const childId = childWorkflowId!.slice('session-'.length);
    expect(childId.startsWith(`${session.id}/`)).toBe(true);
    // The hook ran for the parent's Task call, then for the sub-agent's Bash call, in the
    // worker process; the sub-agent's SessionStart and SessionEnd ran once each.
    const lines = effects(env).map((line) => line.split(' ').slice(1).join(' '));
    expect(lines.filter((line) => line.startsWith('PreToolUse'))).toEqual(
      expect.arrayContaining(['PreToolUse main Task', 'PreToolUse main/cleaner Bash']),
    );
    expect(effectsOf(childId)).toEqual([
      `SessionStart main/cleaner ${childId}`,
      `SessionEnd main/cleaner ${childId}`,
    ]);
    await session.close();
  }, 60_000);

  it("the permission function's deny of a Task call starts no child", async () => {
    const session = await client.createSession();
    const response = await session.send('review');
    expect(response.toolCalls).toMatchObject([{ toolName: 'Task', status: 'denied' }]);
    expect(response.text()).toContain('no reviews today');
    expect(await childrenOf(session.id)).toEqual([]);
    // Not even a run that failed to start: no workflow of the child's id exists.
    const toolUseId = response.toolCalls[0]!.toolUseId;
    const temporal = await rawClient();
    try {
      const childId = sessionWorkflowId(`${session.id}/0-${toolUseId}`);
      await expect(temporal.workflow.getHandle(childId).describe()).rejects.toBeInstanceOf(
        WorkflowNotFoundError,
      );
    } finally {
      await temporal.connection.close();
    }
    expect(effectsOf(session.id).filter((line) => line.includes('reviewer'))).toEqual([]);
    await session.close();
  }, 60_000);

  it('an unknown sub-agent name is a tool error naming the known ones; no child starts', async () => {
    const session = await client.createSession();
    const response = await session.send('ask nobody');
    expect(response.toolCalls).toMatchObject([{ toolName: 'Task', status: 'error' }]);
    expect(response.text()).toBe(
      "parent got: Unknown sub-agent 'nobody'; known: cleaner, reviewer",
    );
    expect(await childrenOf(session.id)).toEqual([]);
    await session.close();
  }, 60_000);

  it("a query by the parent's search attributes finds its sub-agent too", async () => {
    const session = await client.createSession();
    await session.send('clean');
    const [childWorkflowId] = await childrenOf(session.id);
    const temporal = await rawClient();
    try {
      // The agent name the client started the parent with; the child got it from the parent.
      const query =
        `DurableAgentName = '${SUBAGENT_AGENT_NAME}' AND ` +
        `(WorkflowId = '${sessionWorkflowId(session.id)}' OR WorkflowId = '${childWorkflowId}')`;
      let found: string[] = [];
      await waitFor(
        async () => {
          found = [];
          for await (const execution of temporal.workflow.list({ query })) {
            found.push(execution.workflowId);
          }
          return found.length === 2;
        },
        LIST_WAIT_MS,
        'the parent and its sub-agent listed by agent name',
      );
      expect(found.sort()).toEqual([sessionWorkflowId(session.id), childWorkflowId].sort());
      // Its own status and version, as a session keeps them: closed once it ended.
      const child = await temporal.workflow.getHandle(childWorkflowId!).describe();
      expect(child.typedSearchAttributes.get(AGENT_VERSION_KEY)).toBe(
        (
          await temporal.workflow.getHandle(sessionWorkflowId(session.id)).describe()
        ).typedSearchAttributes.get(AGENT_VERSION_KEY),
      );
      expect(child.typedSearchAttributes.get(STATUS_KEY)).toBe('closed');
    } finally {
      await temporal.connection.close();
    }
    await session.close();
  }, 60_000);
});
