/**
 * The hooks of src/agent.ts on a real Temporal server (the time-skipping test server the env
 * starts), asserted from the session's history. `npm test`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HookEvent } from 'durable-agent-sdk';
import {
  assertDecision,
  assertToolNeverRan,
  createHookTestEnv,
  scriptedModel,
  toolCall,
  type HookTestEnv,
} from 'durable-agent-sdk/testing';
import agent from '../src/agent.js';

let env: HookTestEnv;
beforeAll(async () => {
  env = await createHookTestEnv({
    // The project's hooks, with a model that tries a dangerous command.
    agent: {
      ...agent,
      model: scriptedModel([toolCall('Bash', { command: 'rm -rf /tmp/x' }), 'done']),
    },
  });
}, 120_000);
// Replays every session against the workflow code; throws on nondeterminism.
afterAll(() => env.teardown(), 120_000);

it('blocks rm -rf before Bash runs', async () => {
  const session = await env.createSession();
  const response = await session.send('clean up /tmp/x');
  await session.close();

  // The call is stopped, the prompt goes on: the model reads the reason as the tool's error.
  expect(response.toolCalls.map((call) => [call.toolName, call.status])).toEqual([
    ['Bash', 'aborted'],
  ]);
  expect(response.text()).toBe('done');
  await assertDecision(env, session, {
    event: HookEvent.PreToolUse,
    toolName: 'Bash',
    action: 'abort',
    reason: 'blocked a dangerous command: rm -rf /tmp/x',
  });
  await assertToolNeverRan(env, session, 'Bash');
}, 60_000);
