/**
 * Count the Updates a run accepts (sends, approvals, aborts, close, handoff, ready), so it
 * continues as new well before Temporal's limits: the server refuses the 2,001st Update of a
 * run, and an Update's latency grows with the number already in the run (about 22 ms at the
 * start, 46 ms after 1,800; temporalio/temporal#6512). Workflow code.
 *
 * @module
 */
import { setHandler } from '@temporalio/workflow';

/**
 * Updates after which a run continues as new at its next quiet moment. Each send is one
 * Update; at this count the per-Update slowdown is a few per cent of a send.
 */
export const MAX_UPDATES_PER_RUN = 200;

/**
 * `setHandler`, counting every Update whose handler runs (an Update its validator refused
 * is not in history and does not count) with `onUpdate`.
 */
function countingSetHandler(onUpdate: () => void): typeof setHandler {
  return ((definition: Parameters<typeof setHandler>[0], handler: unknown, options?: unknown) => {
    if (definition.type === 'update' && typeof handler === 'function') {
      const counted = (...args: unknown[]) => {
        onUpdate();
        return (handler as (...a: unknown[]) => unknown)(...args);
      };
      return (setHandler as (...a: unknown[]) => void)(definition, counted, options);
    }
    return (setHandler as (...a: unknown[]) => void)(definition, handler, options);
  }) as typeof setHandler;
}

/**
 * The `setHandler` of the session's handlers: every Update counted on the run's
 * `updatesThisRun` (what `rolloverDue` compares with {@link MAX_UPDATES_PER_RUN}).
 */
export function sessionSetHandler(state: { updatesThisRun?: number }): typeof setHandler {
  return countingSetHandler(() => (state.updatesThisRun = (state.updatesThisRun ?? 0) + 1));
}
