/**
 * `SessionOptions.permissionHandler` (the seed's low-level runtime hook, contract §1): the
 * session's own permission function takes the place of `advanced.permission`, with the same
 * contract; it runs only in the process that created the session, and bad values are refused.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgent,
  createAgentClient,
  type Agent,
  type PermissionRequest,
  type SessionOptions,
} from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('session-permission');
writeFileSync(join(workspace, 'notes.txt'), 'hello\n');
const taskQueue = uniqueTaskQueue('session-permission');
const model = scriptedModel((request) =>
  request.messages.at(-1)?.role === 'tool' ? 'done' : toolCall('Read', { file_path: 'notes.txt' }),
);
const agentAsked: string[] = [];
let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model,
    workspaceRoots: [workspace],
    advanced: {
      // The agent's own policy allows everything: a session handler that denies must win.
      permission: async (request) => (agentAsked.push(request.toolName), 'allow' as const),
      temporal: { address: temporalAddress(), taskQueue },
    },
  });
});
afterAll(() => agent.shutdown());

describe('SessionOptions.permissionHandler', () => {
  it("decides the session's tool calls in place of advanced.permission", async () => {
    const seen: Array<Omit<PermissionRequest, 'signal'>> = [];
    const session = await agent.createSession({
      permissionHandler: async ({ signal, ...request }) => {
        expect(signal).toBeInstanceOf(AbortSignal);
        seen.push(request);
        return { behavior: 'deny', message: 'not in this session' };
      },
    });
    const response = await session.send('read it');
    expect(response.toolCalls.map((c) => c.status)).toEqual(['denied']);
    expect(seen).toEqual([
      {
        toolName: 'Read',
        input: { file_path: 'notes.txt' },
        kind: 'readonly',
        affectedPaths: [join(workspace, 'notes.txt')],
      },
    ]);
    expect(agentAsked).toEqual([]);
    // Another session of the same agent still gets the agent's policy.
    const other = await agent.createSession();
    expect((await other.send('read it')).toolCalls.map((c) => c.status)).toEqual(['success']);
    expect(agentAsked).toEqual(['Read']);
    await Promise.all([session.close(), other.close()]);
  });

  it('is refused with a ConfigError when it is not a function', async () => {
    const options = { permissionHandler: 'allow' } as unknown as SessionOptions;
    await expect(agent.createSession(options)).rejects.toThrow(ConfigError);
    await expect(agent.createSession(options)).rejects.toThrow(
      /permissionHandler must be a function/,
    );
  });

  it('is refused by a client-only agent, which has no worker to run it', async () => {
    const client = await createAgentClient({
      model,
      advanced: { temporal: { address: temporalAddress(), taskQueue } },
    });
    try {
      await expect(
        client.createSession({ permissionHandler: async () => 'allow' as const }),
      ).rejects.toThrow(/permissionHandler needs a worker in this process/);
    } finally {
      await client.close();
    }
  });
});
