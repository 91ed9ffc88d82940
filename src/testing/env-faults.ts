/**
 * The faults a hook test env arms at a named event: a worker killed mid-dispatch, an abort
 * landing mid-dispatch, a callback overrunning its budget. Each acts on callback 0 of the
 * event's `occurrence`-th dispatch, through the env's {@link FaultInjector}.
 *
 * @module
 */
import type { HookEvent } from '../common/hook-events.js';
import type { Session } from '../client/session.js';
import type { FaultHandle, FaultInjector, FaultTarget } from './faults.js';
import type { VirtualClock } from './virtual-clock.js';
import type { RestartableWorker } from './worker-kill.js';

/** The callback starts, then the worker dies (and a new one takes over); its output is dropped. */
export function armWorkerKill(
  faults: FaultInjector,
  workers: RestartableWorker,
  event: HookEvent,
  target: FaultTarget,
): FaultHandle {
  return faults.arm(event, target, async (input, original) => {
    const output = Promise.resolve(original(input));
    output.catch(() => undefined);
    await workers.kill();
    return output;
  });
}

/** `session.abort(reason)` when the dispatch reaches the callback, which is held until it lands. */
export function armAbort(
  faults: FaultInjector,
  sessions: ReadonlyMap<string, Session>,
  event: HookEvent,
  target: FaultTarget & { reason?: unknown },
): FaultHandle {
  const reason = target.reason ?? new Error(`Aborted by the test at ${event}`);
  return faults.arm(event, target, async (input, original) => {
    const aborting =
      sessions
        .get(input.sessionId)
        ?.abort(reason)
        .catch(() => false) ?? Promise.resolve(false);
    const output = await original(input);
    // Hold the output until the abort reached this dispatch, so it lands mid-dispatch
    // every time (not after a fast callback already finished). An abort that stopped
    // nothing (no prompt running) is not waited for.
    const signal = input.abortSignal;
    if (signal && !signal.aborted) {
      await new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => resolve(), { once: true });
        void aborting.then((stopped) => (stopped ? undefined : resolve()));
      });
    }
    return output;
  });
}

/** The callback's output is held until its budget has passed, plus `overrunMs` (default 200). */
export function armBudgetOverrun(
  faults: FaultInjector,
  clock: VirtualClock | undefined,
  event: HookEvent,
  target: FaultTarget & { overrunMs?: number },
): FaultHandle {
  const overrunMs = target.overrunMs ?? 200;
  return faults.arm(event, target, async (input, original) => {
    const output = await original(input);
    const signal = input.abortSignal;
    if (signal && !signal.aborted) {
      const aborted = new Promise((resolve) =>
        signal.addEventListener('abort', resolve, { once: true }),
      );
      // On the time-skipping server this dispatch's budget passes at once (only its own:
      // other sessions' budgets and the server's clock stay as they are).
      clock?.fireNow(signal);
      await aborted;
    }
    await new Promise((resolve) => setTimeout(resolve, overrunMs));
    return output;
  });
}
