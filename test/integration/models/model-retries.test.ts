/**
 * README, Models: a model step's 429, 5xx, timeouts and connection errors are retried with
 * backoff, 5 attempts, 1 s doubling; then `send()` fails with a ModelError naming the
 * provider, model and status. Against a real HTTP server that counts the requests. A model
 * that ignores its budget is ended by the step itself and paced the same way.
 */
import { afterEach, expect, it } from 'vitest';
import { createAgent, ModelError, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../fixtures/openai-server.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { historyOf, startedAttempt } from '../../helpers/history.js';

let server: FakeOpenAI | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.shutdown();
  await server?.close();
});

it('a provider answering 503 is tried 5 times, 1 s doubling, then send() fails with a ModelError naming provider, model and status', async () => {
  const unavailable = { status: 503, error: 'overloaded' } as const;
  server = await startFakeOpenAI([...Array(5).fill(unavailable), { text: 'back again' }]);
  agent = await createAgent({
    model: 'gpt-4o-mini',
    apiKey: 'sk-test',
    baseUrl: server.baseUrl,
    advanced: { temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('retries') } },
  });
  const session = await agent.createSession();
  const started = Date.now();
  const error = await session.send('hi').catch((e: unknown) => e);
  const elapsed = Date.now() - started;
  expect(error).toBeInstanceOf(ModelError);
  const message = (error as Error).message;
  expect(message).toMatch(/openai/i);
  expect(message).toContain('gpt-4o-mini');
  expect(message).toContain('503');
  // Exactly 5 attempts, and the waits between them (1 + 2 + 4 + 8 s) all passed.
  expect(server.chatBodies).toHaveLength(5);
  expect(elapsed).toBeGreaterThanOrEqual(15_000 - 100);
  // The session stays usable: the next prompt gets the sixth answer.
  expect((await session.send('again')).text()).toBe('back again');
  expect(server.chatBodies).toHaveLength(6);
  await session.close();
}, 60_000);

it('a model that ignores its budget and its signal: the step ends itself before the backstop, and is retried as a provider failure (1 s later), not as a lost worker', async () => {
  let calls = 0;
  agent = await createAgent({
    // The first call never settles and never looks at its signal; the second answers.
    model: scriptedModel(() => (++calls === 1 ? new Promise<never>(() => undefined) : 'late')),
    advanced: {
      modelTimeoutMs: 1_000,
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('deadline') },
    },
  });
  const session = await agent.createSession();
  expect((await session.send('hi')).text()).toBe('late');
  expect(calls).toBe(2);
  const started = startedAttempt(await historyOf(session.workflowId), 2);
  expect(started).toBeDefined();
  // Attempt 1 failed with the step's own ModelError, retryable, paced 1 s: no timeout.
  const failure = started?.lastFailure;
  expect(failure?.timeoutFailureInfo).toBeFalsy();
  expect(failure?.applicationFailureInfo?.type).toBe('ModelError');
  expect(failure?.applicationFailureInfo?.nonRetryable).toBeFalsy();
  expect(Number(failure?.applicationFailureInfo?.nextRetryDelay?.seconds ?? 0)).toBe(1);
  expect(failure?.message).toContain('did not answer within');
  await session.close();
}, 60_000);
