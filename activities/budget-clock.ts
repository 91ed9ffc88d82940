/**
 * The clock hook and tool budgets are measured on inside their activities. Production uses
 * the process's own clock; the hook test env on the time-skipping server passes a clock it
 * moves forward with `env.sleep()`, so a ten-minute budget passes at once.
 *
 * @module
 */

/** A clock for budgets: a time in ms and one-shot timers on it. */
export interface BudgetClock {
  /** Now on this clock, ms (only differences are meaningful). */
  now(): number;
  /**
   * Call `fn` once, `ms` from now on this clock. Returns a function that cancels it. `key`
   * names the timer's owner (a dispatch's abort signal), for clocks that can fire it early.
   */
  after(ms: number, fn: () => void, key?: object): () => void;
}

/** The process's clock: `performance.now()` and `setTimeout`. */
export const realClock: BudgetClock = {
  now: () => performance.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};
