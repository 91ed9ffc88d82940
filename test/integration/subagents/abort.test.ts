/**
 * Aborting a session while its sub-agent runs: the abort reaches the sub-agent's hook
 * callbacks through their `abortSignal`, with the reason `abort()` was called with (the very
 * object in this process; a rebuilt Error with its message when the abort came from a
 * client elsewhere), and the sub-agent's SessionEnd runs once, with reason `cancelled`,
 * before the parent's send answers. A real Temporal server; a scripted model.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type HookInput } from '../../../src/index.js';
import { Updates } from '../../../src/common/messages.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

/** What the callbacks saw, in order: `path event detail`. */
const log: string[] = [];
/** The reasons the sub-agent's PreToolUse got through its signal. */
const reasons: unknown[] = [];
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
    name: 'subagents-abort',
    model,
    advanced: {
      hooks: {
        // The sub-agent's PreToolUse waits until its signal aborts.
        [HookEvent.PreToolUse]: [
          async (input) => {
            log.push(`${pathOf(input)} PreToolUse ${String(input.toolName)}`);
            if (pathOf(input) === 'main') return { action: 'continue' };
            const signal = input.abortSignal!;
            await new Promise((resolve) =>
              signal.addEventListener('abort', resolve, { once: true }),
            );
            reasons.push(signal.reason);
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
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('subagents-abort') },
    },
  });
  client = new Client({ connection: await Connection.connect({ address: temporalAddress() }) });
});

afterAll(async () => {
  await agent?.shutdown();
  await client?.connection.close();
});

type Session = Awaited<ReturnType<Agent['createSession']>>;

/**
 * Send a prompt and wait until the sub-agent's PreToolUse waits on its signal.
 * @returns the send's response, once it answers (logged as `send answered`).
 */
async function sendUntilChildWaits(session: Session) {
  log.length = 0;
  reasons.length = 0;
  const response = session.send('go').then((r) => {
    log.push('send answered');
    return r;
  });
  await waitFor(() => log.includes('main/worker PreToolUse Bash'), 30_000, "the child's hook");
  return { response };
}

/** The SessionEnd lines of the log. */
const sessionEnds = () => log.filter((line) => line.includes(' SessionEnd '));

describe("an abort of the parent reaches the sub-agent's hooks", () => {
  it('abort() in this process: the callback gets the very reason; the child ends once, cancelled, before the send answers', async () => {
    const session = await agent.createSession();
    const { response } = await sendUntilChildWaits(session);
    const reason = new Error('stop the tree');
    expect(await session.abort(reason)).toBe(true);
    const result = await response;
    expect(result.status).toBe('aborted');
    expect(result.toolCalls).toMatchObject([{ toolName: 'Task', status: 'cancelled' }]);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBe(reason);
    expect(sessionEnds()).toEqual(['main/worker SessionEnd cancelled']);
    expect(log.indexOf('main/worker SessionEnd cancelled')).toBeLessThan(
      log.indexOf('send answered'),
    );
    await session.close();
    expect(sessionEnds()).toEqual(['main/worker SessionEnd cancelled', 'main SessionEnd other']);
  }, 60_000);

  it('an abort from a client elsewhere (its reason not in this process): a rebuilt Error with its message', async () => {
    const session = await agent.createSession();
    const { response } = await sendUntilChildWaits(session);
    // What another process's abort() sends: an abort id this process never saw.
    const handle = client.workflow.getHandle(sessionWorkflowId(session.id));
    const reason = { name: 'Error', message: 'stopped from elsewhere' };
    await handle.executeUpdate(Updates.abort, { args: [{ abortId: 'elsewhere-1', reason }] });
    expect((await response).status).toBe('aborted');
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(Error);
    expect(reasons[0]).toMatchObject({ message: 'stopped from elsewhere' });
    expect(sessionEnds()).toEqual(['main/worker SessionEnd cancelled']);
    await session.close();
  }, 60_000);
});
