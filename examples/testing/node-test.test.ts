/**
 * The hook test harness under the Node test runner:
 *
 *   node --import tsx --test examples/testing/node-test.test.ts
 *
 * (the env starts its own time-skipping test server). Run by the suite in
 * test/integration/cli/examples.test.ts.
 */
import { after, before, test } from 'node:test';
import { HookEvent, type HookCallback } from '../../src/index.js';
import {
  assertDecision,
  assertToolNeverRan,
  createHookTestEnv,
  scriptedModel,
  toolCall,
  type HookTestEnv,
} from '../../src/testing/index.js';

const blockRmRf: HookCallback = async (input) =>
  /rm\s+-rf/.test(String(input.toolInput?.command ?? ''))
    ? { action: 'abort', reason: 'dangerous command blocked' }
    : { action: 'continue' };

let env: HookTestEnv;
before(async () => {
  env = await createHookTestEnv({
    agent: {
      model: scriptedModel([toolCall('Bash', { command: 'rm -rf /' }), 'stopped']),
      advanced: {
        permission: 'bypass-permissions',
        hooks: { [HookEvent.PreToolUse]: [blockRmRf] },
      },
    },
  });
});
after(() => env.teardown());

test('PreToolUse blocks rm -rf and Bash never runs', async () => {
  const session = await env.createSession();
  await session.send('clean up');
  await assertDecision(env, session, {
    event: HookEvent.PreToolUse,
    toolName: 'Bash',
    action: 'abort',
    reason: /dangerous/,
  });
  await assertToolNeverRan(env, session, 'Bash');
  await session.close();
});
