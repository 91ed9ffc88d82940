/**
 * A session whose task queue no worker polls: reads that only a worker can answer (queries)
 * fail with `EngineError` `WORKER_UNAVAILABLE`, naming the session and what to do, instead of
 * Temporal's raw "Failed to query Workflow".
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient, EngineError, type AgentClient } from '../../../src/index.js';
import { SESSION_WORKFLOW, sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

const taskQueue = uniqueTaskQueue('no-worker');
let client: AgentClient;
beforeAll(async () => {
  client = await createAgentClient({
    model: scriptedModel(['unused']),
    advanced: { temporal: { address: temporalAddress(), taskQueue } },
  });
});
afterAll(() => client.close());

describe('a session with no worker', () => {
  it('answers pendingPermissions() with WORKER_UNAVAILABLE naming the session workflow', async () => {
    const sessionId = `no-worker-${randomUUID()}`;
    const raw = await rawClient();
    // Started straight on the server: no worker ever polls its queue.
    const handle = await raw.workflow.start(SESSION_WORKFLOW, {
      workflowId: sessionWorkflowId(sessionId),
      taskQueue,
      args: [{ sessionId }],
    });
    try {
      const session = await client.session(sessionId);
      const error = await session.pendingPermissions().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'WORKER_UNAVAILABLE' });
      expect((error as Error).message).toContain(sessionWorkflowId(sessionId));
      expect((error as Error).message).toContain(`no worker polls its task queue '${taskQueue}'`);
      expect((error as Error).message).toMatch(/start the agent's worker/);
    } finally {
      await handle.terminate('test done');
      await raw.connection.close();
    }
  });
});

describe('createSession with no worker to take the session', () => {
  it('rejects with WORKER_UNAVAILABLE after about 40 s and leaves no running workflow', async () => {
    const queue = uniqueTaskQueue('no-worker-create');
    const offClient = await createAgentClient({
      model: scriptedModel(['unused']),
      advanced: { temporal: { address: temporalAddress(), taskQueue: queue, versioning: 'off' } },
    });
    const raw = await rawClient();
    const sessionId = `no-worker-create-${randomUUID()}`;
    try {
      const started = Date.now();
      const error = await offClient.createSession({ sessionId }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'WORKER_UNAVAILABLE' });
      const message = (error as Error).message;
      expect(message).toContain(`Session '${sessionId}' was not started`);
      expect(message).toContain(`task queue '${queue}'`);
      expect(message).toMatch(/was terminated\. Start a worker/);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(40_000);
      expect(waited).toBeLessThan(60_000);
      const described = await raw.workflow.getHandle(sessionWorkflowId(sessionId)).describe();
      expect(described.status.name).toBe('TERMINATED');
    } finally {
      await offClient.close();
      await raw.connection.close();
    }
  }, 90_000);
});
