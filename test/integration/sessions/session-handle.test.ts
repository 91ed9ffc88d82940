/**
 * `agent.session(id)` takes a session id or its workflow id, `session-<id>`, as the Web UI
 * shows it (issue 13, item 12).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, SessionNotFoundError, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model: scriptedModel((request) => `echo:${String(request.prompt)}`),
    advanced: {
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('session-handle') },
    },
  });
});
afterAll(() => agent.shutdown());

describe('agent.session()', () => {
  it('finds a session by its workflow id session-<id> and drives it', async () => {
    const created = await agent.createSession({ sessionId: `handle-${randomUUID()}` });
    const handle = await agent.session(created.workflowId);
    expect(created.workflowId).toBe(`session-${created.id}`);
    expect(handle.id).toBe(created.id);
    expect((await handle.send('hi')).text()).toBe('echo:hi');
    await handle.close();
  });

  it('finds a session whose own id starts with session- by that id and by its workflow id', async () => {
    const own = `session-${randomUUID()}`;
    const created = await agent.createSession({ sessionId: own });
    expect((await agent.session(own)).id).toBe(own);
    expect((await agent.session(`session-${own}`)).id).toBe(own);
    await created.close();
  });

  it('rejects an id that names no session with SessionNotFoundError naming the argument', async () => {
    const missing = `session-missing-${randomUUID()}`;
    const error = await agent.session(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionNotFoundError);
    expect((error as Error).message).toContain(missing);
  });

  it("releases a closed session's hooks and permission function in this process", async () => {
    const session = await agent.createSession({
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      permissionHandler: async () => 'allow' as const,
    });
    const { registry } = agent.worker;
    const held = () =>
      registry.callbacksFor('default', session.id, HookEvent.UserPromptSubmit).length;
    expect(held()).toBe(1);
    expect(registry.sessionPermission(session.id)).toBeTypeOf('function');
    await session.send('hi');
    await session.close();
    expect(held()).toBe(0);
    expect(registry.sessionPermission(session.id)).toBeUndefined();
  });
});
