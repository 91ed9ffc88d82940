/**
 * A worker process killed with SIGKILL while a sub-agent's hook runs: another worker takes
 * the parent and the sub-agent over. The cut dispatch ends as `worker_lost` and is never run
 * again; every other callback ran once, SessionStart and SessionEnd once per session; the
 * parent's history starts one child for the Task call. The worker and the client are in
 * separate processes (`test/fixtures/subagent-agent.ts`, `runner: true`); what ran is
 * counted from the file the worker processes write.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { childSessionIdOf } from '../../../src/common/subagents.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { subagentAgentOptions, type SubagentAgentEnv } from '../../fixtures/subagent-agent.js';
import { historyOf } from '../../helpers/history.js';
import {
  count,
  crashEnv,
  killAll,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const clients: AgentClient[] = [];
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A fresh environment of the agent with the `runner` sub-agent; lost workers show in 2 s. */
function runnerEnv(): SubagentAgentEnv {
  return {
    ...crashEnv({
      definition: 'subagents',
      workspace: tempDir('subagents-crash'),
      dispatchHeartbeatTimeoutMs: 2_000,
    }),
    runner: true,
  };
}

async function clientFor(env: SubagentAgentEnv): Promise<AgentClient> {
  const client = await createAgentClient(subagentAgentOptions({ ...env, label: 'client' }));
  clients.push(client);
  return client;
}

/** The workflow ids of the children the session's workflow started, from its history. */
async function childrenOf(sessionId: string): Promise<string[]> {
  const history = await historyOf(sessionWorkflowId(sessionId));
  return (history.events ?? []).flatMap((event) => {
    const started = event.startChildWorkflowExecutionInitiatedEventAttributes;
    return started?.workflowId ? [started.workflowId] : [];
  });
}

describe("a worker killed with SIGKILL during a sub-agent's hook", () => {
  it('the sub-agent resumes on a new worker: the cut dispatch is worker_lost and never re-run; every other callback ran once', async () => {
    const env = runnerEnv();
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const pending = session.send('run:hold');
    await waitForEffect(env, 'A PreToolUse:waiting main/runner');
    await a.kill();
    await startWorkerProcess(env, 'B');

    const response = await pending;
    expect(response.status).toBe('completed');
    expect(response.toolCalls).toMatchObject([{ toolName: 'Task', status: 'success' }]);
    // The sub-agent's Bash call got the lost dispatch's error; its answer reached the parent.
    expect(response.text()).toMatch(
      /^parent got: runner got: PreToolUse hook failed: Hook PreToolUse was lost with its worker/,
    );

    // One child for the Task call, and it is the one whose hook was cut.
    const children = await childrenOf(session.id);
    const childId = childSessionIdOf(session.id, 0, response.toolCalls[0]!.toolUseId);
    expect(children).toEqual([sessionWorkflowId(childId)]);
    expect(count(env, `A PreToolUse:waiting main/runner ${childId}`)).toBe(1);
    const child = timelineFromHistory(await historyOf(sessionWorkflowId(childId)));
    expect(child.dispatches.filter((d) => d.event === 'PreToolUse')).toMatchObject([
      { toolName: 'Bash', decision: 'worker_lost' },
    ]);
    // The sub-agent's own timeline, read through a handle on its session, says the same.
    const childTimeline = await (await client.session(childId)).timeline();
    expect(childTimeline.filter((entry) => entry.event === 'PreToolUse')).toMatchObject([
      { toolName: 'Bash', outcome: 'worker_lost' },
    ]);

    await session.close();
    // Never re-run: the cut PreToolUse began once, on A; B ran the rest.
    expect(count(env, 'PreToolUse main/runner Bash')).toBe(1);
    expect(count(env, 'B PreToolUse')).toBe(0);
    expect(count(env, 'PreToolUse main Task')).toBe(1);
    expect(count(env, `SessionStart main ${session.id}`)).toBe(1);
    expect(count(env, `SessionStart main/runner ${childId}`)).toBe(1);
    expect(count(env, `SessionEnd main/runner ${childId}`)).toBe(1);
    expect(count(env, `SessionEnd main ${session.id}`)).toBe(1);
    expect(count(env, 'SessionStart')).toBe(2);
    expect(count(env, 'SessionEnd ')).toBe(2);
    expect(count(env, `SessionEnd:reason main/runner ${childId} other`)).toBe(1);
  }, 90_000);
});
