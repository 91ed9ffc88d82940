/** Regression: the provider path against the fake OpenAI server. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, ModelError, type Agent } from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../fixtures/openai-server.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

let server: FakeOpenAI | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.shutdown();
  await server?.close();
  agent = undefined;
  server = undefined;
});

async function setup(script: FakeReply[]) {
  server = await startFakeOpenAI(script, { apiKey: 'sk-test' });
  const ws = tempDir('edge-prov');
  writeFileSync(join(ws, 'README.md'), 'hi\n');
  agent = await createAgent({
    model: 'gpt-4o-mini',
    apiKey: 'sk-test',
    baseUrl: server.baseUrl,
    workspaceRoots: [ws],
    advanced: {
      permission: 'bypass-permissions',
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-prov') },
    },
  });
  return agent.createSession();
}

describe('provider', () => {
  it('an unknown tool name from the model gets an error result; the other call runs', async () => {
    const session = await setup([
      {
        toolCalls: [
          { name: 'Nope', arguments: { a: 1 } },
          { name: 'Read', arguments: { file_path: 'README.md' } },
        ],
      },
      { text: 'after' },
    ]);
    const r = await session.send('go');
    await session.close();
    expect(r.text()).toBe('after');
    expect(r.toolCalls.map((c) => [c.toolName, c.status])).toEqual([
      ['Nope', 'error'],
      ['Read', 'success'],
    ]);
    // The model is told about the unknown tool on the next request.
    expect(server!.chatBodies[1]?.messages).toContainEqual(
      expect.objectContaining({
        role: 'tool',
        tool_call_id: 'call_1',
        content: "Unknown tool 'Nope'",
      }),
    );
  }, 60_000);

  it('tool arguments that are not a JSON object: the step is sampled again and no tool runs', async () => {
    const session = await setup([
      { toolCalls: [{ name: 'Read', arguments: 'README.md' as unknown as object }] },
      { text: 'after' },
    ]);
    const r = await session.send('go');
    await session.close();
    expect(server!.chatBodies).toHaveLength(2);
    expect(r.text()).toBe('after');
    expect(r.toolCalls).toEqual([]);
  }, 60_000);

  it('a 400 fails the send with a ModelError without a retry', async () => {
    const session = await setup([{ status: 400, error: 'bad request here' }]);
    const error = await session.send('go').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).toMatch(/400 Bad Request: bad request here/);
    expect(server!.chatBodies).toHaveLength(1);
    await session.close();
  }, 60_000);

  it('a 404 (unknown model) fails the send with a ModelError without a retry', async () => {
    const session = await setup([{ status: 404, error: 'The model does not exist' }]);
    const error = await session.send('go').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).toMatch(/404 Not Found: The model does not exist/);
    expect(server!.chatBodies).toHaveLength(1);
    await session.close();
  }, 60_000);
});
