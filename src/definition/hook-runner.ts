/**
 * One event's callbacks run in order, as a dispatch runs them: the dispatch activity and the
 * golden and deploy-gate checks (`src/testing/golden.ts`, `src/testing/gate.ts`) share this
 * loop, so a recorded input is re-run exactly as a worker ran it.
 *
 * @module
 */
import { hookInputOf } from '../common/hook-input.js';
import { validateHookOutput } from '../common/hook-rules.js';
import type { DispatchHookInput } from '../common/activity-io.js';
import type { HookCallback, HookInput, HookOutput } from '../common/types.js';

/** A run of one event's callbacks, started by {@link runHookCallbacks}. */
interface HookCallbackRun {
  /**
   * Every callback's validated output, in order. Rejects with what a callback threw, with the
   * `HookError` (`HOOK_OUTPUT_INVALID`) of a malformed output, or with the signal's reason
   * when it aborted between two callbacks (later callbacks never run).
   */
  readonly outputs: Promise<HookOutput[]>;
  /**
   * 0-based position of the callback running now: the one that threw or returned a malformed
   * output once `outputs` rejected; `callbacks.length` once every callback returned.
   */
  readonly index: number;
  /** Each returned callback's own time, in `now`'s unit (ms), rounded to 0.1. */
  readonly durationsMs: readonly number[];
}

/**
 * Run `callbacks` one at a time (§4.4): each gets a fresh copy of the input (no callback sees
 * another's changes, even in-place edits) with `signal` as its `abortSignal`, and its output
 * is checked against the contract (§3). Budgets and cancellation are the caller's: abort
 * `signal` to stop before the next callback.
 *
 * @param input the event, its payload, the session and its lineage, as a dispatch records them.
 * @param now a clock in ms, for `durationsMs`. @default `performance.now`
 */
export function runHookCallbacks(
  callbacks: readonly HookCallback[],
  input: Pick<DispatchHookInput, 'payload' | 'event' | 'sessionId' | 'lineage'>,
  signal: AbortSignal,
  now: () => number = () => performance.now(),
): HookCallbackRun {
  const durationsMs: number[] = [];
  const run = { index: 0, durationsMs } as { index: number; durationsMs: number[] };
  const outputs = (async () => {
    const results: HookOutput[] = [];
    for (; run.index < callbacks.length; run.index++) {
      // Once the dispatch timed out or was aborted, it has failed: later callbacks never run.
      if (signal.aborted) throw signal.reason;
      const started = now();
      const raw = await callbacks[run.index]!({
        ...hookInputOf(input),
        abortSignal: signal,
      } as HookInput);
      durationsMs.push(Math.round((now() - started) * 10) / 10);
      results.push(validateHookOutput(input.event, run.index, raw));
    }
    return results;
  })();
  return Object.assign(run, { outputs });
}
