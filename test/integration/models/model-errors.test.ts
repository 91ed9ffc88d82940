/**
 * What a caller of `send()` learns about a failed model call, through the real provider
 * path (an OpenAI-compatible HTTP server on loopback), the modelStep activity, the session
 * workflow and the client (issue 13, item 5); and the API key settled at `createAgent`
 * (item 22).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgent,
  createAgentClient,
  ModelError,
  ProviderError,
  type Agent,
  type AgentClient,
} from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../fixtures/openai-server.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tcpProbe } from '../../helpers/tcp-probe.js';
import { tempDir } from '../../helpers/temp-dirs.js';

let server: FakeOpenAI | undefined;
let agent: Agent | undefined;
let client: AgentClient | undefined;
afterEach(async () => {
  await agent?.shutdown();
  await client?.close();
  await server?.close();
  agent = undefined;
  client = undefined;
  server = undefined;
});

/** An agent on the fake server, whose requests must carry `sk-right`. */
async function agentOn(script: FakeReply[], apiKey = 'sk-right') {
  server = await startFakeOpenAI(script, { apiKey: 'sk-right' });
  agent = await createAgent({
    model: 'gpt-4o-mini',
    apiKey,
    baseUrl: server.baseUrl,
    workspaceRoots: [tempDir('model-errors')],
    advanced: {
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('model-errors') },
    },
  });
  return agent.createSession();
}

async function sendFailure(session: Awaited<ReturnType<typeof agentOn>>): Promise<unknown> {
  const error = await session.send('hi').then(
    () => undefined,
    (e: unknown) => e,
  );
  await session.close();
  return error;
}

describe("the caller's ModelError keeps the provider's details", () => {
  it('a 401 reaches send() as a ProviderError with statusCode 401, retryable false, provider and model', async () => {
    const session = await agentOn([{ text: 'never' }], 'sk-wrong');
    const error = await sendFailure(session);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({
      code: 'MODEL_ERROR',
      statusCode: 401,
      retryable: false,
      provider: 'openai-compatible',
      model: 'gpt-4o-mini',
    });
    expect((error as Error).message).toMatch(/401 Unauthorized: Incorrect API key/);
    expect(server!.requests).toHaveLength(1);
  });

  it('a 400 reaches send() with statusCode 400 and retryable false, after one request', async () => {
    const session = await agentOn([{ status: 400, error: 'bad request here' }]);
    const error = await sendFailure(session);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ statusCode: 400, retryable: false });
    expect(server!.chatBodies).toHaveLength(1);
  });

  it('a 503 on every attempt: the five attempts run, then send() gets statusCode 503 and retryable true', async () => {
    const unavailable: FakeReply = { status: 503, error: 'overloaded' };
    const session = await agentOn(Array.from({ length: 6 }, () => unavailable));
    const error = await sendFailure(session);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      statusCode: 503,
      retryable: true,
      provider: 'openai-compatible',
      model: 'gpt-4o-mini',
    });
    expect((error as Error).message).toMatch(/503 Service Unavailable: overloaded/);
    // The README's retry policy: 5 attempts (1 s, 2 s, 4 s, 8 s apart).
    expect(server!.chatBodies).toHaveLength(5);
  }, 60_000);
});

describe('the API key of a model id', () => {
  it('createAgent without a key rejects at once with a ConfigError naming apiKey and OPENAI_API_KEY', async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    // A reachable server, through a listener that counts connections: without the check,
    // createAgent would connect and resolve, and send() fail.
    const temporal = await tcpProbe(temporalAddress());
    try {
      const error = await createAgent({
        model: 'gpt-4o-mini',
        advanced: { temporal: { address: temporal.address, taskQueue: uniqueTaskQueue('k') } },
      }).then(
        (made) => {
          agent = made;
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('`apiKey`');
      expect((error as Error).message).toContain('OPENAI_API_KEY (it is not set)');
      expect((error as Error).message).not.toContain('providerModel');
      // At once: before any connection to the server.
      expect(temporal.connections()).toBe(0);
    } finally {
      await agent?.shutdown();
      agent = undefined;
      await temporal.close();
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it('createAgentClient with a model id and no key connects: the client never runs the model', async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      client = await createAgentClient({
        model: 'gpt-4o-mini',
        advanced: { temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('c') } },
      });
      expect(await client.listSessions({ limit: 1 })).toBeInstanceOf(Array);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});
