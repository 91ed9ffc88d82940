/**
 * Sub-agents with the worker in a process of its own and the client in the test: an abort
 * the client sends reaches the sub-agent's hook in the worker process, with the client's
 * message; two Task calls of one step run at once in the worker process. The agent is
 * `test/fixtures/subagent-agent.ts` with `runner: true`; what ran is counted from the file
 * the worker process writes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { childSessionIdOf } from '../../../src/common/subagents.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { subagentAgentOptions, type SubagentAgentEnv } from '../../fixtures/subagent-agent.js';
import { historyOf } from '../../helpers/history.js';
import {
  count,
  crashEnv,
  effects,
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

/** A fresh environment of the agent with the `runner` sub-agent, its worker started. */
async function startRunnerAgent(): Promise<{ env: SubagentAgentEnv; client: AgentClient }> {
  const env: SubagentAgentEnv = {
    ...crashEnv({ definition: 'subagents', workspace: tempDir('subagents-processes') }),
    runner: true,
  };
  await startWorkerProcess(env, 'W');
  const client = await createAgentClient(subagentAgentOptions({ ...env, label: 'client' }));
  clients.push(client);
  return { env, client };
}

/** The workflow ids of the children the session's workflow started, from its history. */
async function childrenOf(sessionId: string): Promise<string[]> {
  const history = await historyOf(sessionWorkflowId(sessionId));
  return (history.events ?? []).flatMap((event) => {
    const started = event.startChildWorkflowExecutionInitiatedEventAttributes;
    return started?.workflowId ? [started.workflowId] : [];
  });
}

describe('sub-agents, worker and client in separate processes', () => {
  it("an abort from the client reaches the sub-agent's hook in the worker process with the client's message; the sub-agent ends once, cancelled, before the send answers", async () => {
    const { env, client } = await startRunnerAgent();
    const session = await client.createSession();
    const pending = session.send('run:wait-abort');
    await waitForEffect(env, 'W PreToolUse:waiting main/runner');
    expect(await session.abort(new Error('stop the tree from the client'))).toBe(true);

    const response = await pending;
    expect(response.status).toBe('aborted');
    expect(response.toolCalls).toMatchObject([{ toolName: 'Task', status: 'cancelled' }]);
    const childId = childSessionIdOf(session.id, 0, response.toolCalls[0]!.toolUseId);
    expect(await childrenOf(session.id)).toEqual([sessionWorkflowId(childId)]);
    // The send answered after the sub-agent's SessionEnd, which ran once, cancelled.
    expect(count(env, `SessionEnd main/runner ${childId}`)).toBe(1);
    expect(count(env, `W SessionEnd:reason main/runner ${childId} cancelled`)).toBe(1);
    // The callback's signal carried an Error rebuilt in the worker process from the message.
    await waitForEffect(
      env,
      'W PreToolUse:aborted main/runner Error:stop the tree from the client',
    );
    expect(count(env, 'PreToolUse:aborted')).toBe(1);

    await session.close();
    expect(count(env, `SessionEnd:reason main ${session.id} other`)).toBe(1);
    expect(count(env, 'SessionStart')).toBe(2);
    expect(count(env, 'SessionEnd ')).toBe(2);
  }, 60_000);

  it('two Task calls of one step run at once in the worker process; the parent reads their answers in call order', async () => {
    const { env, client } = await startRunnerAgent();
    const session = await client.createSession();
    // Each sub-agent's hook waits for a file the other's writes: one after the other, the
    // first would wait in vain. `a` then waits until `b`'s sub-agent has ended.
    const response = await session.send('run:meet a b outlast;meet b a');
    expect(response.toolCalls.map((call) => [call.toolName, call.status])).toEqual([
      ['Task', 'success'],
      ['Task', 'success'],
    ]);
    expect(response.text()).toBe('parent got: runner got: a met b | runner got: b met a');

    // Call order, though `b`'s sub-agent ended first.
    const [first, second] = response.toolCalls.map((call) =>
      childSessionIdOf(session.id, 0, call.toolUseId),
    );
    expect((await childrenOf(session.id)).sort()).toEqual(
      [sessionWorkflowId(first!), sessionWorkflowId(second!)].sort(),
    );
    const lines = effects(env);
    const endOf = (childId: string) =>
      lines.findIndex((line) => line.includes(`SessionEnd main/runner ${childId}`));
    expect(endOf(second!)).toBeGreaterThanOrEqual(0);
    expect(endOf(second!)).toBeLessThan(endOf(first!));
    expect(count(env, 'W PreToolUse main/runner Bash')).toBe(2);
    await session.close();
  }, 60_000);
});
