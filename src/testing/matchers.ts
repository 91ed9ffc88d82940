/**
 * The history assertions as custom matchers for `expect.extend` (vitest; jest's
 * `expect.extend` takes the same object). Async: `await` them.
 *
 * ```ts
 * import { expect } from 'vitest';
 * import { hookMatchers, type HookMatchers } from 'durable-agent-sdk/testing';
 * expect.extend(hookMatchers);
 * declare module 'vitest' {
 *   interface Assertion<T> extends HookMatchers<T> {}
 * }
 * await expect(session).toHaveDecided(env, { event: 'PreToolUse', toolName: 'Bash', action: 'abort' });
 * ```
 *
 * @module
 */
import { AssertionError } from 'node:assert';
import type { HookEvent } from '../common/hook-events.js';
import type { JsonObject } from '../common/json.js';
import {
  assertDecision,
  assertDispatched,
  assertDispatchOrder,
  assertModelPrompt,
  assertSessionStartEndOnce,
  assertToolInput,
  assertToolNeverRan,
  type DispatchOrderOptions,
  type ExpectedDecision,
  type NthOptions,
} from './assertions.js';
import type { HookTestEnv, SessionRef } from './hook-test-env.js';

/** What `expect(session)` gains; every matcher returns a promise. */
export interface HookMatchers<R = unknown> {
  /** The session dispatched `event` exactly `times` times ({@link assertDispatched}). */
  toHaveDispatched(env: HookTestEnv, event: HookEvent, times: number): Promise<R>;
  /** The session dispatched exactly these events, in order ({@link assertDispatchOrder}). */
  toHaveDispatchOrder(
    env: HookTestEnv,
    events: readonly HookEvent[],
    options?: DispatchOrderOptions,
  ): Promise<R>;
  /** One dispatch was decided as `expected` says ({@link assertDecision}). */
  toHaveDecided(env: HookTestEnv, expected: ExpectedDecision): Promise<R>;
  /** The tool never started ({@link assertToolNeverRan}). */
  toNeverHaveRunTool(env: HookTestEnv, toolName: string): Promise<R>;
  /** SessionStart and SessionEnd ran once each ({@link assertSessionStartEndOnce}). */
  toHaveRunSessionStartAndEndOnce(env: HookTestEnv): Promise<R>;
  /** The `nth` call of the tool ran with `input` ({@link assertToolInput}). */
  toHaveGivenToolInput(
    env: HookTestEnv,
    toolName: string,
    input: JsonObject,
    options?: NthOptions,
  ): Promise<R>;
  /** The `nth` prompt reached the model as `prompt` ({@link assertModelPrompt}). */
  toHaveSentModelPrompt(
    env: HookTestEnv,
    prompt: string | RegExp,
    options?: NthOptions,
  ): Promise<R>;
}

interface MatcherResult {
  pass: boolean;
  message: () => string;
  actual?: unknown;
  expected?: unknown;
}

function matcher<Args extends unknown[]>(
  assertion: (env: HookTestEnv, session: SessionRef, ...args: Args) => Promise<void>,
  negated: string,
) {
  return async function (
    this: { isNot?: boolean } | undefined,
    received: SessionRef,
    env: HookTestEnv,
    ...args: Args
  ): Promise<MatcherResult> {
    try {
      await assertion(env, received, ...args);
      return { pass: true, message: () => `Expected the session ${negated}` };
    } catch (error) {
      if (!(error instanceof AssertionError)) throw error;
      return {
        pass: false,
        message: () => error.message,
        actual: error.actual,
        expected: error.expected,
      };
    }
  };
}

/** Matchers for `expect.extend`, one per history assertion of this module. */
export const hookMatchers = {
  toHaveDispatched: matcher(assertDispatched, 'not to have dispatched the event that often'),
  toHaveDispatchOrder: matcher(assertDispatchOrder, 'not to have dispatched in that order'),
  toHaveDecided: matcher(assertDecision, 'not to have decided the dispatch so'),
  toNeverHaveRunTool: matcher(assertToolNeverRan, 'to have run the tool'),
  toHaveRunSessionStartAndEndOnce: matcher(
    assertSessionStartEndOnce,
    'not to have run SessionStart and SessionEnd once each',
  ),
  toHaveGivenToolInput: matcher(assertToolInput, 'not to have given the tool that input'),
  toHaveSentModelPrompt: matcher(assertModelPrompt, 'not to have sent the model that prompt'),
};
