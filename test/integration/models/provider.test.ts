/**
 * The real provider path end to end: a session whose model is a model id with a baseUrl,
 * against an OpenAI-compatible HTTP server on loopback.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, ModelError, type Agent } from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../fixtures/openai-server.js';
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

async function agentFor(fake: FakeOpenAI, apiKey = 'sk-test') {
  const workspace = tempDir('provider');
  writeFileSync(join(workspace, 'README.md'), '# hello from the workspace\n');
  const audit: string[] = [];
  const created = await createAgent({
    model: 'gpt-4o-mini',
    apiKey,
    baseUrl: fake.baseUrl,
    workspaceRoots: [workspace],
    advanced: {
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            audit.push(String(input.toolName));
            return { action: 'continue' };
          },
        ],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('provider') },
    },
  });
  return { agent: created, audit };
}

describe('an OpenAI-compatible provider', () => {
  it('runs a tool call round, then answers with text; the tool result reaches the model', async () => {
    server = await startFakeOpenAI(
      [
        { toolCalls: [{ name: 'Read', arguments: { file_path: 'README.md' } }] },
        { text: 'The README says hello.' },
      ],
      { apiKey: 'sk-test' },
    );
    const made = await agentFor(server);
    agent = made.agent;
    const session = await agent.createSession();
    const response = await session.send('What does the README say?');
    expect(response.status).toBe('completed');
    expect(response.text()).toBe('The README says hello.');
    expect(made.audit).toEqual(['Read']);
    const second = JSON.stringify(server.chatBodies[1]);
    expect(second).toContain('hello from the workspace');
    expect(JSON.stringify(server.chatBodies[0])).toContain('"name":"Read"');
    await session.close();
  });

  it('retries a 429 with backoff and then succeeds', async () => {
    server = await startFakeOpenAI(
      [{ status: 429, error: 'slow down' }, { text: 'after the retry' }],
      { apiKey: 'sk-test' },
    );
    agent = (await agentFor(server)).agent;
    const session = await agent.createSession();
    const response = await session.send('hi');
    expect(response.text()).toBe('after the retry');
    expect(server.chatBodies).toHaveLength(2);
    await session.close();
  });

  it('fails send() with a clear ModelError on 401, without retrying; the session stays usable', async () => {
    server = await startFakeOpenAI([{ text: 'never' }], { apiKey: 'sk-right' });
    agent = (await agentFor(server, 'sk-wrong')).agent;
    const session = await agent.createSession();
    const error = await session.send('hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as Error).message).toMatch(/401/);
    expect(server.requests).toHaveLength(1);
    expect((await session.describe()).status).toBe('open');
    await session.close();
  });
});
