/**
 * A budget clock the hook test env moves forward: it runs at the speed of the process's
 * clock, and `advance(ms)` jumps it, firing every timer that comes due on the way.
 *
 * @module
 */
import type { BudgetClock } from '../../activities/budget-clock.js';

interface PendingTimer {
  dueAt: number;
  key: object | undefined;
  fire: () => void;
  real: NodeJS.Timeout;
}

/** A {@link BudgetClock} that real time moves, and {@link VirtualClock.advance} too. */
export class VirtualClock implements BudgetClock {
  #skippedMs = 0;
  readonly #timers = new Set<PendingTimer>();

  /** Real time plus everything skipped so far, ms. */
  now(): number {
    return performance.now() + this.#skippedMs;
  }

  /** Total time skipped by {@link advance}, ms. */
  get skippedMs(): number {
    return this.#skippedMs;
  }

  after(ms: number, fn: () => void, key?: object): () => void {
    const timer: PendingTimer = {
      dueAt: this.now() + ms,
      key,
      fire: () => {
        if (!this.#timers.delete(timer)) return;
        clearTimeout(timer.real);
        fn();
      },
      real: setTimeout(() => timer.fire(), ms),
    };
    this.#timers.add(timer);
    return () => {
      this.#timers.delete(timer);
      clearTimeout(timer.real);
    };
  }

  /**
   * Jump `ms` forward: timers due by then fire now, earliest first.
   * @throws {RangeError} for a negative or non-finite `ms`.
   */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new RangeError(`VirtualClock.advance: ms must be a finite number >= 0, got ${ms}`);
    }
    this.#skippedMs += ms;
    const now = this.now();
    const due = [...this.#timers].filter((t) => t.dueAt <= now).sort((a, b) => a.dueAt - b.dueAt);
    for (const timer of due) timer.fire();
    // The others come due sooner in real time now.
    for (const timer of this.#timers) {
      clearTimeout(timer.real);
      timer.real = setTimeout(() => timer.fire(), Math.max(0, timer.dueAt - now));
    }
  }

  /**
   * Fire now the timers set with `key` (a dispatch's budget, in `exceedBudgetAt`), leaving
   * every other timer and the clock as they are.
   * @returns whether one fired.
   */
  fireNow(key: object): boolean {
    const owned = [...this.#timers].filter((t) => t.key === key);
    for (const timer of owned) timer.fire();
    return owned.length > 0;
  }
}
