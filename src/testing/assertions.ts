/**
 * Assertions on a session's real Temporal history, for any test runner (vitest, jest,
 * `node:test`): plain async functions that resolve when the assertion holds and reject with
 * a `node:assert` `AssertionError` (with `actual` and `expected`, so runners show a diff)
 * whose message lists what the history recorded.
 *
 * Every function takes the {@link HookTestEnv} and a session it created; another session is
 * rejected with a clear `Error`.
 *
 * @module
 */
import { AssertionError } from 'node:assert';
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from '../common/json.js';
import { decodeFirstPayload } from '../history/decode.js';
import type { HistoryDecision, HistoryDispatch } from '../history/timeline-types.js';
import type { HookEvent } from '../common/hook-events.js';
import { ActivityNames } from '../common/activity-io.js';
import type { HookTestEnv, SessionRef } from './hook-test-env.js';

/**
 * Assert that `event` was dispatched exactly `times` times in the session.
 * Events without callbacks are never dispatched.
 * @throws {AssertionError} with the session's dispatches when the count differs.
 */
export async function assertDispatched(
  env: HookTestEnv,
  session: SessionRef,
  event: HookEvent,
  times: number,
): Promise<void> {
  const { id, dispatches } = await dispatchesOf(env, session);
  const actual = dispatches.filter((d) => d.event === event).length;
  if (actual !== times) {
    fail(
      `Expected ${event} to be dispatched ${plural(times)} in session ${id}, ` +
        `but it was dispatched ${plural(actual)}.\n${listDispatches(dispatches)}`,
      actual,
      times,
      'strictEqual',
    );
  }
}

/** Options of {@link assertDispatchOrder}. */
export interface DispatchOrderOptions {
  /**
   * Compare only the dispatches of these events (the others are left out of the actual
   * sequence first). @default every dispatch
   */
  only?: readonly HookEvent[];
}

/**
 * Assert the exact sequence of dispatched events (optionally only some events), e.g.
 * `['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'TaskCompleted', 'SessionEnd']`.
 * @throws {AssertionError} with both sequences side by side and the first difference marked.
 */
export async function assertDispatchOrder(
  env: HookTestEnv,
  session: SessionRef,
  events: readonly HookEvent[],
  options: DispatchOrderOptions = {},
): Promise<void> {
  const { id, dispatches } = await dispatchesOf(env, session);
  const only = options.only;
  const actual = dispatches
    .map((d) => d.event)
    .filter((event) => !only || (only as readonly string[]).includes(event));
  const expected = [...events] as string[];
  const firstDiff = firstDifference(actual, expected);
  if (firstDiff === -1) return;
  const rows: string[] = [];
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    const marker = i === firstDiff ? '>' : ' ';
    rows.push(
      `${marker} ${String(i).padStart(2)}  ${(expected[i] ?? '(none)').padEnd(20)}  ${actual[i] ?? '(none)'}`,
    );
  }
  const filtered = only ? ` (only ${only.join(', ')})` : '';
  fail(
    `Dispatch order of session ${id}${filtered} differs at position ${firstDiff}:\n` +
      `     ${'expected'.padEnd(20)}  actual\n${rows.join('\n')}`,
    actual,
    expected,
    'deepStrictEqual',
  );
}

/** What {@link assertDecision} expects of one dispatch. */
export interface ExpectedDecision {
  /** The dispatch's event. */
  event: HookEvent;
  /** Only dispatches for this tool (tool events). */
  toolName?: string;
  /** The merged decision: `continue`, `skip`, `abort`, or how it failed (`error`, `timeout`, ...). */
  action: HistoryDecision;
  /** 0-based index of the callback that decided (skip/abort) or failed. */
  decidedBy?: number;
  /** The reason, exactly, or a pattern it must match. */
  reason?: string | RegExp;
  /** Which of the matching dispatches, 0-based. @default 0 */
  nth?: number;
}

/**
 * Assert how one dispatch was decided: its merged action, and optionally which callback
 * decided and why.
 * @throws {AssertionError} when there is no such dispatch or it was decided otherwise.
 */
export async function assertDecision(
  env: HookTestEnv,
  session: SessionRef,
  expected: ExpectedDecision,
): Promise<void> {
  const { id, dispatches } = await dispatchesOf(env, session);
  const nth = expected.nth ?? 0;
  const what = `${expected.event}${expected.toolName ? ` (tool ${expected.toolName})` : ''}`;
  const matching = dispatches.filter(
    (d) =>
      d.event === expected.event &&
      (expected.toolName === undefined || d.toolName === expected.toolName),
  );
  const dispatch = matching[nth];
  if (!dispatch) {
    fail(
      `Expected a ${ordinal(nth)} ${what} dispatch in session ${id}, but there ` +
        `${matching.length === 1 ? 'is 1' : `are ${matching.length}`}.\n${listDispatches(dispatches)}`,
      matching.length,
      nth + 1,
      '>=',
    );
  }
  const actualView: Record<string, unknown> = { action: dispatch.decision };
  const expectedView: Record<string, unknown> = { action: expected.action };
  const wrong: string[] = [];
  if (dispatch.decision !== expected.action) {
    wrong.push(`action: expected ${expected.action}, got ${dispatch.decision}`);
  }
  if (expected.decidedBy !== undefined) {
    actualView.decidedBy = dispatch.decidedBy;
    expectedView.decidedBy = expected.decidedBy;
    if (dispatch.decidedBy !== expected.decidedBy) {
      wrong.push(
        `decidedBy: expected ${expected.decidedBy} (callback #${expected.decidedBy + 1}), got ${dispatch.decidedBy === undefined ? 'none' : `${dispatch.decidedBy} (callback #${dispatch.decidedBy + 1})`}`,
      );
    }
  }
  if (expected.reason !== undefined) {
    actualView.reason = dispatch.reason;
    expectedView.reason = String(expected.reason);
    const ok =
      typeof expected.reason === 'string'
        ? dispatch.reason === expected.reason
        : dispatch.reason !== undefined && expected.reason.test(dispatch.reason);
    if (!ok) {
      wrong.push(
        `reason: expected ${typeof expected.reason === 'string' ? JSON.stringify(expected.reason) : `to match ${String(expected.reason)}`}, ` +
          `got ${dispatch.reason === undefined ? 'none' : JSON.stringify(dispatch.reason)}`,
      );
    }
  }
  if (wrong.length > 0) {
    fail(
      `The ${ordinal(nth)} ${what} dispatch of session ${id} (dispatch #${dispatch.seq}, ` +
        `history event ${dispatch.scheduledEventId}) was decided otherwise:\n` +
        `${wrong.map((w) => `  ${w}`).join('\n')}\n${listDispatches(dispatches)}`,
      actualView,
      expectedView,
      'deepStrictEqual',
    );
  }
}

/**
 * Assert that the session never scheduled an `executeTool` activity for `toolName`: the
 * tool never started, whatever the hooks or the permission check said.
 * @throws {AssertionError} naming each history event that scheduled it, with its input.
 */
export async function assertToolNeverRan(
  env: HookTestEnv,
  session: SessionRef,
  toolName: string,
): Promise<void> {
  const id = typeof session === 'string' ? session : session.id;
  const ran = (await toolRuns(env, session, toolName)).map(
    (run) => `  history event ${run.eventId}: input ${JSON.stringify(run.input)}`,
  );
  if (ran.length > 0) {
    fail(
      `Expected tool ${toolName} never to run in session ${id}, but executeTool was ` +
        `scheduled for it ${plural(ran.length)}:\n${ran.join('\n')}`,
      ran.length,
      0,
      'strictEqual',
    );
  }
}

/**
 * Assert that SessionStart and SessionEnd were each dispatched exactly once (so the session
 * was closed, and SessionEnd did not run twice). Both events need a callback.
 * @throws {AssertionError} with the counts and the session's dispatches.
 */
export async function assertSessionStartEndOnce(
  env: HookTestEnv,
  session: SessionRef,
): Promise<void> {
  const { id, dispatches } = await dispatchesOf(env, session);
  const actual = {
    SessionStart: dispatches.filter((d) => d.event === 'SessionStart').length,
    SessionEnd: dispatches.filter((d) => d.event === 'SessionEnd').length,
  };
  if (actual.SessionStart !== 1 || actual.SessionEnd !== 1) {
    const hint =
      actual.SessionEnd === 0
        ? ' (was the session closed, and does SessionEnd have a callback?)'
        : '';
    fail(
      `Expected SessionStart and SessionEnd once each in session ${id}, got SessionStart ` +
        `${plural(actual.SessionStart)} and SessionEnd ${plural(actual.SessionEnd)}${hint}.\n` +
        listDispatches(dispatches),
      actual,
      { SessionStart: 1, SessionEnd: 1 },
      'deepStrictEqual',
    );
  }
}

async function dispatchesOf(
  env: HookTestEnv,
  session: SessionRef,
): Promise<{ id: string; dispatches: HistoryDispatch[] }> {
  const timeline = await env.timeline(session);
  const id = typeof session === 'string' ? session : session.id;
  return { id, dispatches: timeline.dispatches };
}

function listDispatches(dispatches: readonly HistoryDispatch[]): string {
  if (dispatches.length === 0) return 'Dispatches recorded: none';
  const rows = dispatches.map((d) => {
    const tool = d.toolName ? ` ${d.toolName}` : '';
    // People count callbacks from 1, as `inspect` and the worker's log lines do.
    const by = d.decidedBy !== undefined ? ` by callback #${d.decidedBy + 1}` : '';
    const reason = d.reason !== undefined ? `: ${d.reason}` : '';
    return `  #${d.seq} ${d.event}${tool} -> ${d.decision}${by}${reason}`;
  });
  return `Dispatches recorded:\n${rows.join('\n')}`;
}

function firstDifference(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

function plural(n: number): string {
  return n === 1 ? '1 time' : `${n} times`;
}

function ordinal(n: number): string {
  const k = n + 1;
  const suffix =
    k % 10 === 1 && k % 100 !== 11
      ? 'st'
      : k % 10 === 2 && k % 100 !== 12
        ? 'nd'
        : k % 10 === 3 && k % 100 !== 13
          ? 'rd'
          : 'th';
  return `${k}${suffix}`;
}

function fail(message: string, actual: unknown, expected: unknown, operator: string): never {
  const error = new AssertionError({ message, actual, expected, operator });
  Error.captureStackTrace?.(error, fail);
  throw error;
}

/** Options of {@link assertToolInput} and {@link assertModelPrompt}. */
export interface NthOptions {
  /** Which call or prompt, 0-based. @default 0 */
  nth?: number;
}

/**
 * Assert the input that reached a tool: the `nth` `executeTool` of `toolName` in the
 * session's history (every run), after PreToolUse and the permission step changed it.
 * @throws {AssertionError} with the inputs recorded when there is no such call or it differs.
 */
export async function assertToolInput(
  env: HookTestEnv,
  session: SessionRef,
  toolName: string,
  expected: JsonObject,
  options: NthOptions = {},
): Promise<void> {
  const nth = options.nth ?? 0;
  const id = typeof session === 'string' ? session : session.id;
  const inputs = (await toolRuns(env, session, toolName)).map((run) => run.input);
  const actual = inputs[nth];
  if (actual === undefined) {
    fail(
      `Expected a ${ordinal(nth)} run of tool ${toolName} in session ${id}, but it ran ` +
        `${plural(inputs.length)}.${listInputs(inputs)}`,
      inputs.length,
      nth + 1,
      '>=',
    );
  }
  if (!isDeepStrictEqual(actual, expected)) {
    fail(
      `The ${ordinal(nth)} run of tool ${toolName} in session ${id} got another input.` +
        listInputs(inputs),
      actual,
      expected,
      'deepStrictEqual',
    );
  }
}

/**
 * Assert the `nth` prompt as it reached the model (after UserPromptSubmit), read from the
 * session's transcript: its text parts joined by a newline, equal to `expected` or
 * matching it.
 * @throws {AssertionError} with the prompts recorded when there is no such prompt or it differs.
 */
export async function assertModelPrompt(
  env: HookTestEnv,
  session: SessionRef,
  expected: string | RegExp,
  options: NthOptions = {},
): Promise<void> {
  const nth = options.nth ?? 0;
  const id = typeof session === 'string' ? session : session.id;
  const own = env.sessions.find((s) => s.id === id);
  if (!own) {
    // The env's own check throws the clear error for a session it did not create.
    await env.history(session);
  }
  const prompts = (await own!.conversation()).flatMap((m) =>
    m.role === 'user'
      ? [
          typeof m.content === 'string'
            ? m.content
            : m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n'),
        ]
      : [],
  );
  const actual = prompts[nth];
  const ok =
    actual !== undefined &&
    (typeof expected === 'string' ? actual === expected : expected.test(actual));
  if (!ok) {
    fail(
      `The ${ordinal(nth)} prompt that reached the model in session ${id} ` +
        `${actual === undefined ? `does not exist (${plural(prompts.length)} sent)` : 'differs'}.` +
        listInputs(prompts),
      actual,
      typeof expected === 'string' ? expected : String(expected),
      typeof expected === 'string' ? 'strictEqual' : 'match',
    );
  }
}

/** Every `executeTool` of `toolName` in the session's histories (all runs), in order. */
async function toolRuns(
  env: HookTestEnv,
  session: SessionRef,
  toolName: string,
): Promise<Array<{ eventId: string; input: unknown }>> {
  const runs: Array<{ eventId: string; input: unknown }> = [];
  for (const history of await env.histories(session)) {
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name !== ActivityNames.executeTool) continue;
      const input = decodeFirstPayload<{ toolName?: unknown; input?: unknown }>(scheduled.input);
      if (input?.toolName === toolName)
        runs.push({ eventId: String(event.eventId), input: input.input });
    }
  }
  return runs;
}

function listInputs(values: readonly unknown[]): string {
  if (values.length === 0) return '';
  return `\nRecorded:\n${values.map((v, i) => `  ${i}: ${JSON.stringify(v)}`).join('\n')}`;
}
