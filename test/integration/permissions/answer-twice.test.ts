/** Answering a permission request twice, late, or with a bad updatedInput: what each answer gets. */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Agent } from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { Updates } from '../../../src/common/messages.js';

const agents: Agent[] = [];
afterAll(async () => {
  for (const a of agents) await a.shutdown();
});
const executed: string[] = [];
beforeEach(() => {
  executed.length = 0;
});
const Echo = defineTool({
  name: 'Echo',
  description: 'echo',
  kind: 'write',
  inputSchema: z.object({ word: z.string() }),
  execute: async ({ word }) => (executed.push(word), `echo ${word}`),
});
async function askingAgent(permissionTimeoutMs?: number): Promise<Agent> {
  const agent = await createAgent({
    model: scriptedModel([toolCall('Echo', { word: 'orig' }), 'done']),
    tools: [Echo],
    advanced: {
      permission: () => 'ask',
      ...(permissionTimeoutMs !== undefined ? { permissionTimeoutMs } : {}),
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-misc') },
    },
  });
  agents.push(agent);
  return agent;
}

describe('answering a permission request twice', () => {
  it('a second approve() with a different updatedInput rejects with PERMISSION_REQUEST_NOT_FOUND', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    await session.approve(r!.requestId, { updatedInput: { word: 'A' } });
    await expect(
      session.approve(r!.requestId, { updatedInput: { word: 'B' } }),
    ).rejects.toMatchObject({ code: 'PERMISSION_REQUEST_NOT_FOUND' });
    await expect(session.deny(r!.requestId)).rejects.toMatchObject({
      code: 'PERMISSION_REQUEST_NOT_FOUND',
    });
    const resp = await p;
    await session.close();
    // The first answer stands.
    expect(resp.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'A' }],
    ]);
    expect(executed).toEqual(['A']);
  });

  it('an answer after the request ended says who decided it and when', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    await session.approve(r!.requestId);
    await p;
    const late = session.deny(r!.requestId);
    await expect(late).rejects.toMatchObject({ code: 'PERMISSION_REQUEST_NOT_FOUND' });
    await expect(late).rejects.toThrow(
      new RegExp(
        `Permission request '${r!.requestId}' \\(Echo\\) in session '${session.id}' was already ` +
          `approved by \\S+ at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ`,
      ),
    );
    await session.close();
  });

  it('an answer after the deadline says the request expired and was denied', async () => {
    const session = await (await askingAgent(1_000)).createSession();
    const p = session.send('go');
    // The ask lives 1 s: read its id from the send's stream, not by polling (a loaded machine
    // can take longer than that to answer a poll).
    let requestId: string | undefined;
    for await (const event of p.stream()) {
      if (event.type === 'permission-asked' && event.askedOf === 'person') {
        requestId = event.permissionRequestId;
        break;
      }
    }
    const response = await p;
    expect(response.toolCalls.map((c) => c.status)).toEqual(['denied']);
    await expect(session.approve(requestId!)).rejects.toThrow(
      /\(Echo\) in session '[^']+' expired at its deadline \(\d{4}-[^)]+Z\) and was denied/,
    );
    await session.close();
  });

  it('an updatedInput that is not a plain object is refused, by the client and by the workflow; the request still waits', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    for (const bad of ['rm -rf /', [1, 2], 42, null]) {
      await expect(session.approve(r!.requestId, { updatedInput: bad as never })).rejects.toThrow(
        /updatedInput must be a plain object/,
      );
    }
    // Past the client's check (another client, an old one): the workflow's validator refuses it.
    const raw = await rawClient();
    try {
      await expect(
        raw.workflow.getHandle(session.workflowId).executeUpdate(Updates.decidePermission, {
          args: [
            {
              requestId: r!.requestId,
              answer: { behavior: 'allow', updatedInput: 'rm -rf /' },
            } as never,
          ],
        }),
      ).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/updatedInput must be a plain object/) },
      });
    } finally {
      await raw.connection.close();
    }
    expect((await session.pendingPermissions()).map((x) => x.requestId)).toEqual([r!.requestId]);
    await session.approve(r!.requestId, { updatedInput: { word: 'A' } });
    const resp = await p;
    await session.close();
    expect(resp.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'A' }],
    ]);
  });

  it('approve() twice with the same updatedInput resolves both times; the tool runs once', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    await session.approve(r!.requestId, { updatedInput: { word: 'A' } });
    await expect(
      session.approve(r!.requestId, { updatedInput: { word: 'A' } }),
    ).resolves.toBeUndefined();
    const resp = await p;
    await session.close();
    expect(resp.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'A' }],
    ]);
    expect(executed).toEqual(['A']);
  });
});
