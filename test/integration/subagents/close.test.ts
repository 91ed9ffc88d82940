/**
 * Closing a session while its sub-agent runs: the sub-agent ends first (its SessionEnd once,
 * reason `cancelled`), then the session's own SessionEnd runs; the same order when the
 * session's workflow is cancelled from outside. A real Temporal server; a scripted model.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type HookInput } from '../../../src/index.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

/** What the callbacks saw, in order: `path event detail`. */
const log: string[] = [];
let agent: Agent;
let client: Client;

const pathOf = (input: HookInput) => input.agentPath ?? 'main';

beforeAll(async () => {
  // The top session delegates to the worker, which runs one Bash call.
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (request.agentPath === 'main/worker') {
      return last?.role === 'tool' ? 'worker done' : toolCall('Bash', { command: 'ls' });
    }
    if (last?.role === 'tool') return 'parent done';
    return toolCall('Task', {
      description: 'list',
      prompt: 'List the files',
      subagent_type: 'worker',
    });
  });
  agent = await createAgent({
    name: 'subagents-close',
    model,
    advanced: {
      hooks: {
        // The sub-agent's PreToolUse waits until its signal aborts.
        [HookEvent.PreToolUse]: [
          async (input) => {
            log.push(`${pathOf(input)} PreToolUse`);
            if (pathOf(input) === 'main') return { action: 'continue' };
            const signal = input.abortSignal!;
            await new Promise((resolve) =>
              signal.addEventListener('abort', resolve, { once: true }),
            );
            return { action: 'continue' };
          },
        ],
        [HookEvent.SessionEnd]: [
          async (input) => {
            log.push(`${pathOf(input)} SessionEnd ${String(input.reason)}`);
            return { action: 'continue' };
          },
        ],
      },
      permission: 'bypass-permissions',
      subagents: {
        agents: { worker: { description: 'Lists files', prompt: 'You list.', tools: ['Bash'] } },
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('subagents-close') },
    },
  });
  client = new Client({ connection: await Connection.connect({ address: temporalAddress() }) });
});

afterAll(async () => {
  await agent?.shutdown();
  await client?.connection.close();
});

/** The SessionEnd lines of the log. */
const sessionEnds = () => log.filter((line) => line.includes(' SessionEnd '));

describe('the sub-agent ends before its parent', () => {
  it("close() while the sub-agent's hook runs: the child's SessionEnd (cancelled), then the parent's", async () => {
    log.length = 0;
    const session = await agent.createSession();
    const response = session.send('go');
    await waitFor(() => log.includes('main/worker PreToolUse'), 30_000, "the child's hook");
    expect(await session.close()).toMatchObject({ closedNow: true, sessionEndRan: true });
    expect((await response).status).toBe('aborted');
    expect(sessionEnds()).toEqual(['main/worker SessionEnd cancelled', 'main SessionEnd other']);
  }, 60_000);

  it("a cancel of the session's workflow from outside: the child's SessionEnd, then the parent's", async () => {
    log.length = 0;
    const session = await agent.createSession();
    void session.send('go').catch(() => undefined);
    await waitFor(() => log.includes('main/worker PreToolUse'), 30_000, "the child's hook");
    const handle = client.workflow.getHandle(sessionWorkflowId(session.id));
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    expect(sessionEnds()).toEqual([
      'main/worker SessionEnd cancelled',
      'main SessionEnd cancelled',
    ]);
  }, 60_000);
});
