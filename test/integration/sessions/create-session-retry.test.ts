/**
 * createSession on a session whose first workflow task failed (issue 19): the `ready` Update
 * is answered "Workflow Task in failed state" until a worker runs the next task. With a good
 * worker taking it, createSession succeeds; with none, it fails naming the task's failure.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import {
  createAgentClient,
  createAgentWorker,
  EngineError,
  HookEvent,
  type AgentClient,
  type AgentWorker,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const failingWorkflows = fileURLToPath(
  new URL('../../fixtures/failing-workflow/index.ts', import.meta.url),
);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A plain Temporal worker on `taskQueue` whose every workflow task fails. */
async function breakingWorker(taskQueue: string): Promise<{ stop(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: temporalAddress() });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: failingWorkflows,
  });
  const running = worker.run();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    worker.shutdown();
    await running;
    await connection.close();
  };
  cleanups.push(stop);
  return { stop };
}

function options(taskQueue: string, client?: WorkflowClientInterceptor) {
  return {
    name: 'ready-retry',
    model: scriptedModel((request) => `echo:${String(request.prompt)}`),
    advanced: {
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' as const })] },
      temporal: {
        address: temporalAddress(),
        taskQueue,
        // The failing worker is a plain, unversioned Temporal worker: so is the agent.
        versioning: 'off' as const,
        ...(client ? { interceptors: { client: { workflow: [client] } } } : {}),
      },
    },
  };
}

/** A client interceptor that records each refusal of the `ready` Update (its message). */
function readyRefusals(): { refusals: string[]; interceptor: WorkflowClientInterceptor } {
  const refusals: string[] = [];
  return {
    refusals,
    interceptor: {
      async startUpdate(input, next) {
        try {
          return await next(input);
        } catch (error) {
          if (input.updateName === 'ready') {
            const chain: string[] = [];
            for (let e: unknown = error; e instanceof Error; e = e.cause) chain.push(e.message);
            refusals.push(chain.join(' <- '));
          }
          throw error;
        }
      },
    },
  };
}

async function client(
  taskQueue: string,
  interceptor?: WorkflowClientInterceptor,
): Promise<AgentClient> {
  const agentClient = await createAgentClient(options(taskQueue, interceptor));
  cleanups.push(() => agentClient.close());
  return agentClient;
}

async function goodWorker(taskQueue: string): Promise<AgentWorker> {
  const worker = await createAgentWorker(options(taskQueue));
  cleanups.push(() => worker.shutdown());
  return worker;
}

/** Whether the history of `workflowId` records a failed workflow task. */
async function taskFailed(workflowId: string): Promise<boolean> {
  const raw = await rawClient();
  try {
    const history = await raw.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? []).some((e) => e.workflowTaskFailedEventAttributes);
  } catch {
    return false;
  } finally {
    await raw.connection.close();
  }
}

describe('createSession after the first workflow task failed', () => {
  it('succeeds once a good worker takes the task', async () => {
    const taskQueue = uniqueTaskQueue('ready-retry');
    const broken = await breakingWorker(taskQueue);
    const { refusals, interceptor } = readyRefusals();
    const agentClient = await client(taskQueue, interceptor);
    const sessionId = `ready-retry-${randomUUID()}`;
    const creating = agentClient.createSession({ sessionId });
    creating.catch(() => undefined);
    // The server refused `ready` because the session's workflow task is in failed state ...
    await waitFor(() => refusals.length > 0, 60_000, 'the server to refuse the ready Update');
    expect(refusals[0]).toMatch(/Workflow Task in failed state/);
    expect(await taskFailed(sessionWorkflowId(sessionId))).toBe(true);
    // ... and only then does a worker that can run it start.
    await broken.stop();
    await goodWorker(taskQueue);
    const session = await creating;
    expect(session.id).toBe(sessionId);
    expect((await session.send('hello')).text()).toBe('echo:hello');
    await session.close();
  }, 90_000);

  it('fails, naming the workflow task failure, while no worker can run the task', async () => {
    const taskQueue = uniqueTaskQueue('ready-fails');
    await breakingWorker(taskQueue);
    const agentClient = await client(taskQueue);
    const error = await agentClient.createSession().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toMatch(/did not open: its workflow task kept failing/);
    expect((error as Error).message).toContain('this worker breaks every workflow task it runs');
  }, 120_000);
});
