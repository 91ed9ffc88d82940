/**
 * The hook test harness under jest, with the matchers (`expect.extend(hookMatchers)`):
 *
 *   NODE_OPTIONS=--experimental-vm-modules npx jest
 *
 * (jest.config.js: Babel strips the types, the files stay ES modules). The env runs on its
 * own time-skipping test server.
 * Run by the suite in test/integration/cli/examples.test.ts.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { HookEvent, type HookCallback } from '../../src/index.js';
import {
  createHookTestEnv,
  hookMatchers,
  scriptedModel,
  toolCall,
  type HookMatchers,
  type HookTestEnv,
} from '../../src/testing/index.js';

expect.extend(hookMatchers);
declare module 'expect' {
  // Merges with jest's own declaration, so it repeats its type parameters exactly.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars
  interface Matchers<R extends void | Promise<void>, T = unknown> extends HookMatchers<R> {}
}

const blockRmRf: HookCallback = async (input) =>
  /rm\s+-rf/.test(String(input.toolInput?.command ?? ''))
    ? { action: 'abort', reason: 'dangerous command blocked' }
    : { action: 'continue' };

let env: HookTestEnv;
beforeAll(async () => {
  env = await createHookTestEnv({
    agent: {
      model: scriptedModel([toolCall('Bash', { command: 'rm -rf /' }), 'stopped']),
      advanced: {
        permission: 'bypass-permissions',
        hooks: { [HookEvent.PreToolUse]: [blockRmRf] },
      },
    },
  });
}, 60_000);
afterAll(() => env.teardown(), 60_000);

test('PreToolUse blocks rm -rf and Bash never runs', async () => {
  const session = await env.createSession();
  await session.send('clean up');
  await expect(session).toHaveDecided(env, {
    event: HookEvent.PreToolUse,
    toolName: 'Bash',
    action: 'abort',
    reason: /dangerous/,
  });
  await expect(session).toNeverHaveRunTool(env, 'Bash');
  await expect(expect(session).toHaveDispatched(env, HookEvent.PreToolUse, 2)).rejects.toThrow(
    /Expected PreToolUse to be dispatched 2 times/,
  );
  await session.close();
}, 60_000);
