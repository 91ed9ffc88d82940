/**
 * A worker "killed" inside the test process: from the moment of the kill its activities
 * never report back and stop heartbeating, as if its process had died, so the server
 * times the running attempt out (the heartbeat timeout) and the session goes on on another
 * worker, replaying from history. The callbacks' own code keeps running in the test
 * process (nothing can stop it there); what it returns is dropped.
 *
 * @module
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { AgentRegistry } from '../definition/registry.js';
import type { AgentWorker } from '../worker/worker.js';

/** The kill switch of one worker: an activity interceptor, and the switch. */
export class WorkerKillSwitch {
  #killed = false;
  #release!: () => void;
  /** Settles at teardown, so held activities end and the dead worker can stop. */
  readonly #released = new Promise<void>((resolve) => (this.#release = resolve));

  /** Whether the worker was killed. */
  get killed(): boolean {
    return this.#killed;
  }

  /** Kill it: every result and heartbeat from now on is dropped. */
  kill(): void {
    this.#killed = true;
  }

  /** Let held activities end (at teardown), with an error the server no longer waits for. */
  release(): void {
    this.#release();
  }

  /** The interceptor to install on the worker's activities. */
  readonly interceptor: ActivityInterceptorsFactory = (ctx) => {
    // `heartbeat` is an instance field of the activity's Context: replace it on this
    // instance so a dead worker sends no heartbeat, whatever code calls it.
    const heartbeat = ctx.heartbeat;
    Object.defineProperty(ctx, 'heartbeat', {
      value: (details?: unknown) => {
        if (!this.#killed) heartbeat(details);
      },
    });
    return {
      inbound: {
        execute: async (input, next) => {
          let outcome: { value: unknown } | { error: unknown };
          try {
            outcome = { value: await next(input) };
          } catch (error) {
            outcome = { error };
          }
          if (this.#killed) {
            await this.#released;
            throw new Error('This worker was killed by the test; its result was dropped');
          }
          if ('error' in outcome) throw outcome.error;
          return outcome.value;
        },
      },
    };
  };
}

/** A worker and its kill switch. */
interface KillableWorker {
  worker: AgentWorker;
  killSwitch: WorkerKillSwitch;
}

/**
 * The env's worker across kills: `kill()` kills the running one and starts the next on the
 * same task queue and registry, as a restarted process would.
 */
export class RestartableWorker {
  #current: KillableWorker;
  #next: Promise<KillableWorker> | undefined;
  readonly #dead: KillableWorker[] = [];
  readonly #start: (registry: AgentRegistry) => Promise<KillableWorker>;

  private constructor(
    first: KillableWorker,
    start: (registry: AgentRegistry) => Promise<KillableWorker>,
  ) {
    this.#current = first;
    this.#start = start;
  }

  /** Start the first worker. */
  static async start(
    start: (registry: AgentRegistry | undefined) => Promise<KillableWorker>,
  ): Promise<RestartableWorker> {
    return new RestartableWorker(await start(undefined), start);
  }

  /** The routing the workers came to (`advanced.temporal.versioning` resolved). */
  get versioning(): 'deployments' | 'off' {
    return this.#current.worker.versioning;
  }

  /** The callbacks' registry, the same for every worker. */
  get registry(): AgentRegistry {
    return this.#current.worker.registry;
  }

  /** How many workers were killed. */
  get kills(): number {
    return this.#dead.length;
  }

  /**
   * Kill the running worker and start the next. Resolves when the next one polls.
   * @throws what starting a worker throws (the server is gone, ...).
   */
  async kill(): Promise<void> {
    await this.#next;
    const dying = this.#current;
    dying.killSwitch.kill();
    this.#dead.push(dying);
    // Stop polling now; what it holds is dropped, and it ends at its force time.
    void dying.worker.shutdown().catch(() => undefined);
    this.#next = this.#start(this.registry);
    this.#current = await this.#next;
  }

  /** Stop the running worker, then let the dead ones go. */
  async shutdown(): Promise<void> {
    await this.#next?.catch(() => undefined);
    await this.#current.worker.shutdown();
    for (const dead of this.#dead) dead.killSwitch.release();
    await Promise.all(this.#dead.map((dead) => dead.worker.shutdown().catch(() => undefined)));
  }
}
