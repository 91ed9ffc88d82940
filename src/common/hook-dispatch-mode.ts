/**
 * How a hook dispatch runs: as a regular activity (the default) or, opted in per agent,
 * per session or per event, as a local activity. See {@link HookDispatchMode}.
 *
 * @module
 */
import { ConfigError } from './errors.js';
import { HookEvent } from './hook-events.js';

/**
 * How the callbacks of an event are dispatched.
 *
 * - `'activity'` (the default): one activity on the session's task queue (~18 ms on a tuned
 *   dev server). At most once: if its worker dies mid-dispatch nothing re-runs it; the
 *   workflow learns of the loss at the dispatch's heartbeat timeout and treats it as a
 *   callback that threw (`HOOK_WORKER_LOST`).
 * - `'local'`: a local activity, run by the worker running the session's workflow task, with
 *   no round trip through the server's task queues (a few ms). For short, idempotent hooks
 *   only, because:
 *   - **at-least-once, not at-most-once**: a local activity's result is recorded when the
 *     workflow task completes; if the worker dies mid-dispatch (or before that task
 *     completes), the next worker replays the session and runs the callbacks again. There
 *     is no `HOOK_WORKER_LOST` for it.
 *   - **`abort()` waits for it**: the dispatch holds the session's workflow task, so an
 *     `abort()` (or `close()`) that arrives meanwhile is handled only once the dispatch has
 *     ended: its callbacks returned, or its budget passed and their `abortSignal` fired
 *     (`HOOK_TIMEOUT`); such an `abort()` then resolves `false`. The budget is kept exactly,
 *     as for an activity. A dispatch longer than 80% of the workflow task timeout makes the
 *     worker extend the task.
 *   - it runs on whichever worker runs the workflow task (session hooks given to
 *     `createSession` live in the creating process, as always).
 * - `'inline'` for UserPromptSubmit: the callbacks run at the start of the send's first
 *   model step, inside that activity, and the model is called in the same activity when they
 *   leave the prompt as it is (no activity or workflow task of their own: well under a
 *   millisecond besides the callbacks). When they reject or rewrite the prompt, or the step
 *   runs on a worker whose conversation cache lacks the session (another worker than the
 *   session's last workflow task), the step ends after the callbacks and the workflow runs
 *   the first model step as usual (one more activity). Their outcome is recorded in the model
 *   step's result: the timeline, `inspect` and the live stream show the dispatch as any
 *   other. For short, idempotent hooks only, because:
 *   - **at-least-once**: a model step is retried (a provider's 503, a worker lost mid-step)
 *     and every attempt runs the callbacks again before calling the model.
 *   - **a lost worker is noticed late**: at the model step's heartbeat timeout
 *     (`advanced.temporal.modelHeartbeatTimeoutMs`, 30 s by default), after
 *     which the step (callbacks included) runs again on another worker; there is no
 *     `HOOK_WORKER_LOST` unless every attempt is lost.
 *   - the budget is kept exactly, as for an activity, and `abort()` reaches the callbacks'
 *     `abortSignal` as for an activity (heartbeats); a callback that outlives its abort holds
 *     the session fail-closed as usual.
 * - `'inline'` for PostToolUse: the callbacks run in the tool's own activity, right after a
 *   tool that succeeded, on its output (a failed tool's PostToolUseFailure is dispatched as
 *   usual). Their outcome comes back with the tool's result and is applied, recorded and
 *   streamed as any dispatch's. The tool runs at most once, and so do they, but:
 *   - **a lost worker is noticed at the tool's heartbeat timeout**
 *     (`advanced.temporal.toolHeartbeatTimeoutMs`, 10 s by default), and a worker lost while
 *     the callbacks run loses the tool's result with it: the call ends as a tool that failed
 *     to run (PostToolUseFailure is dispatched), with no row for the PostToolUse callbacks
 *     that may have run.
 *   - an `abort()` during the callbacks reaches their `abortSignal` and keeps the tool's
 *     result, as with the default dispatch; one after the tool but before them drops it, as
 *     an abort during the tool does.
 *   - while a callback of the session is still cleaning up (fail-closed), the call runs with
 *     the default dispatch, which refuses it.
 *
 * Given as one mode for every event, or per event (`{ UserPromptSubmit: 'local' }`; events
 * not named use `'activity'`). SessionStart and SessionEnd cannot be local: their
 * once-only guarantees rest on at-most-once dispatch. `'inline'` is given per event, for
 * UserPromptSubmit and PostToolUse.
 */
export type HookDispatchMode =
  | 'activity'
  | 'local'
  | (Partial<
      Record<Exclude<HookEvent, 'UserPromptSubmit' | 'PostToolUse'>, 'activity' | 'local'>
    > & {
      UserPromptSubmit?: 'activity' | 'local' | 'inline';
      PostToolUse?: 'activity' | 'local' | 'inline';
    });

const ONCE_ONLY: readonly HookEvent[] = [HookEvent.SessionStart, HookEvent.SessionEnd];
const EVENTS = Object.values(HookEvent) as HookEvent[];
/** The events that can run inside the activity of the step they belong to. */
const INLINE_EVENTS: readonly HookEvent[] = [HookEvent.UserPromptSubmit, HookEvent.PostToolUse];

/**
 * What is wrong with `value` as a {@link HookDispatchMode} at `path`, or undefined when it is
 * one.
 */
export function hookDispatchProblem(value: unknown, path: string): string | undefined {
  if (value === undefined || value === 'activity' || value === 'local') return undefined;
  if (value === 'inline') {
    return `${path} cannot be 'inline' for every event: only UserPromptSubmit and PostToolUse run inline, given per event ({ PostToolUse: 'inline' })`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return `${path} must be 'activity', 'local' or an object of them by event, got ${typeof value === 'string' ? `'${value}'` : String(value)}`;
  }
  for (const [event, mode] of Object.entries(value)) {
    if (!EVENTS.includes(event as HookEvent)) {
      return `${path} names '${event}', which is not a hook event (${EVENTS.join(', ')})`;
    }
    const inlineable = INLINE_EVENTS.includes(event as HookEvent);
    if (mode === 'inline' && !inlineable) {
      return `${path}.${event} cannot be 'inline': only UserPromptSubmit (inside the send's first model step) and PostToolUse (inside the tool's execution) run inline`;
    }
    if (mode !== 'activity' && mode !== 'local' && mode !== 'inline') {
      const modes = inlineable ? "'activity', 'local' or 'inline'" : "'activity' or 'local'";
      return `${path}.${event} must be ${modes}, got ${typeof mode === 'string' ? `'${mode}'` : String(mode)}`;
    }
    if (mode === 'local' && ONCE_ONLY.includes(event as HookEvent)) {
      return `${path}.${event} cannot be 'local': ${event} runs once, which needs an at-most-once dispatch`;
    }
  }
  return undefined;
}

/**
 * The events dispatched as local activities: the session's mode where it names the event,
 * else the agent's. `'local'` for all events means every event but SessionStart and
 * SessionEnd.
 * @throws {ConfigError} for a mode that is not a {@link HookDispatchMode}.
 */
export function localDispatchEvents(
  agent: HookDispatchMode | undefined,
  session?: HookDispatchMode,
): HookEvent[] {
  for (const [mode, path] of [
    [agent, 'advanced.hookDispatch'],
    [session, 'hookDispatch'],
  ] as const) {
    const problem = hookDispatchProblem(mode, path);
    if (problem) throw new ConfigError(problem);
  }
  return EVENTS.filter((event) => modeOfEvent(agent, session, event) === 'local');
}

/**
 * The events whose callbacks run inline (`'inline'`: UserPromptSubmit, PostToolUse), by the same
 * precedence as {@link localDispatchEvents}.
 * @throws {ConfigError} for a mode that is not a {@link HookDispatchMode}.
 */
export function inlineDispatchEvents(
  agent: HookDispatchMode | undefined,
  session?: HookDispatchMode,
): HookEvent[] {
  localDispatchEvents(agent, session);
  return EVENTS.filter((event) => modeOfEvent(agent, session, event) === 'inline');
}

/** The mode of `event`: the session's where it names the event, else the agent's. */
function modeOfEvent(
  agent: HookDispatchMode | undefined,
  session: HookDispatchMode | undefined,
  event: HookEvent,
): 'activity' | 'local' | 'inline' | undefined {
  const modeOf = (mode: HookDispatchMode | undefined) =>
    typeof mode === 'string'
      ? ONCE_ONLY.includes(event)
        ? 'activity'
        : mode
      : (mode as Partial<Record<HookEvent, 'activity' | 'local' | 'inline'>> | undefined)?.[event];
  return modeOf(session) ?? modeOf(agent);
}
