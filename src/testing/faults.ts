/**
 * Fault injection for the hook test env: an abort delivered at a named event, a callback
 * made to overrun its budget. Faults wrap the agent definition's callbacks in the env's
 * worker, so they act inside the real dispatch activity, on real workflow semantics.
 *
 * @module
 */
import { ConfigError } from '../common/errors.js';
import { isHookEvent, type HookEvent } from '../common/hook-events.js';
import type { HookCallback, HookInput, HookMap } from '../common/types.js';

/** Where a fault fires. */
export interface FaultTarget {
  /** Only dispatches of this tool (tool events). @default any */
  toolName?: string;
  /** Fire at the n-th matching dispatch, 1-based, counted from when the fault is armed. @default 1 */
  occurrence?: number;
}

/** An armed fault. */
export interface FaultHandle {
  /** Resolves when the fault fired. */
  readonly fired: Promise<void>;
  /** Whether it fired. */
  readonly hasFired: boolean;
}

interface ArmedFault {
  event: HookEvent;
  target: Required<Pick<FaultTarget, 'occurrence'>> & FaultTarget;
  seen: number;
  done: boolean;
  /** What to do instead of (or before) callback 0; resolves to its output. */
  act(input: HookInput, original: HookCallback): Promise<unknown>;
  fire(): void;
}

/** The faults of one env, and the wrapper that makes callbacks honour them. */
export class FaultInjector {
  readonly #faults: ArmedFault[] = [];
  /** Events the wrapped hooks have callbacks for (the only ones ever dispatched). */
  readonly #events = new Set<HookEvent>();

  /** Wrap the first callback of each event, where dispatches are counted and faults act. */
  wrap(hooks: HookMap | undefined): HookMap {
    const wrapped: HookMap = {};
    for (const [event, callbacks] of Object.entries(hooks ?? {}) as Array<
      [HookEvent, HookCallback[]]
    >) {
      if (callbacks.length > 0) this.#events.add(event);
      wrapped[event] = callbacks.map((callback, index) =>
        index === 0 ? this.#probe(event, callback) : callback,
      );
    }
    return wrapped;
  }

  /** Arm a fault on `event`. */
  arm(
    event: HookEvent,
    target: FaultTarget,
    act: (input: HookInput, original: HookCallback) => Promise<unknown>,
  ): FaultHandle {
    if (!isHookEvent(event)) throw new ConfigError(`Unknown hook event '${String(event)}'`);
    if (!this.#events.has(event)) {
      throw new ConfigError(
        `The agent definition has no ${event} callbacks, so ${event} is never dispatched and ` +
          `nothing can happen there (faults act on the agent's advanced.hooks, not on ` +
          `per-session hooks); give ${event} a callback`,
      );
    }
    const occurrence = target.occurrence ?? 1;
    if (!Number.isInteger(occurrence) || occurrence < 1) {
      throw new ConfigError(`occurrence must be a positive integer, got ${String(occurrence)}`);
    }
    let fire!: () => void;
    const fired = new Promise<void>((resolve) => (fire = resolve));
    const fault: ArmedFault = {
      event,
      target: { ...target, occurrence },
      seen: 0,
      done: false,
      act,
      fire,
    };
    this.#faults.push(fault);
    return {
      fired,
      get hasFired() {
        return fault.done;
      },
    };
  }

  #probe(event: HookEvent, callback: HookCallback): HookCallback {
    return async (input) => {
      const due: ArmedFault[] = [];
      for (const f of this.#faults) {
        if (f.done || f.event !== event) continue;
        if (f.target.toolName !== undefined && f.target.toolName !== input.toolName) continue;
        f.seen++;
        if (f.seen === f.target.occurrence) due.push(f);
      }
      // Every fault due at this dispatch acts, the first armed outermost: each one's
      // "original" is the next one's act, the last one's is the callback.
      let run: HookCallback = callback;
      for (const fault of due.reverse()) {
        const inner = run;
        run = (i) => fault.act(i, inner) as ReturnType<HookCallback>;
      }
      for (const fault of due.reverse()) {
        fault.done = true;
        fault.fire();
      }
      return run(input);
    };
  }
}
