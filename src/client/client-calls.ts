/**
 * The calls one client has in flight: each runs under an abort signal of its own (aborted
 * when the client closes), and the sends of one session are issued in call order.
 *
 * @module
 */
import { setMaxListeners } from 'node:events';
import type { ConnectionLike, WorkflowClientInterceptor } from '@temporalio/client';

/**
 * How a started Update stood when the server answered its start: `running` (accepted, its
 * handler still running), `completed` (answered at once: done, failed, or refused by the
 * validator), or `unknown` (not seen).
 */
type UpdateStart = 'running' | 'completed' | 'unknown';

/** The send of one session that holds the turn (issued, not yet accepted or ended). */
interface TurnHolder {
  /** Whether a later send of the same session waits for this one's turn. */
  waitedOn: boolean;
  /** Called once when a later send starts waiting. */
  notify?: () => void;
}

/**
 * Book-keeping of one client's calls. `@temporalio/client` adds an abort listener to the
 * scope's signal for every RPC and never removes it, so a signal shared by all calls would
 * grow by one listener per RPC for the client's whole life. Each call here gets its own
 * `AbortController`, dropped when the call ends; closing the client aborts the ones still
 * in flight. Nothing ever listens on a long-lived signal.
 *
 * @internal
 */
export class ClientCalls {
  readonly #closing = new AbortController();
  /** In-flight calls: their controllers, and the key (workflow id) each belongs to. */
  readonly #inFlight = new Map<AbortController, { key: string | undefined; done: Promise<void> }>();
  /** Per workflow id: resolves once every send issued so far was accepted (or ended). */
  readonly #sendTails = new Map<string, Promise<void>>();
  /** Update ids whose start is watched, and how it stood. */
  readonly #starts = new Map<string, UpdateStart>();
  /** Per workflow id: the send holding the turn, and whether a later send waits for it. */
  readonly #holders = new Map<string, TurnHolder>();

  /** Aborted when the client closes. Nothing in this module listens on it. */
  get signal(): AbortSignal {
    return this.#closing.signal;
  }

  /** Whether the client was closed. */
  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /** Calls in flight now (all keys). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Sessions with sends still waiting for their turn or for acceptance. */
  get sessionsWithQueuedSends(): number {
    return this.#sendTails.size;
  }

  /**
   * Run `fn` with a signal of its own on `connection`: every RPC `fn` makes is cancelled when
   * the client closes. A client already closed cancels them at once.
   */
  async run<T>(
    connection: Pick<ConnectionLike, 'withAbortSignal'>,
    fn: () => Promise<T>,
    key?: string,
  ): Promise<T> {
    const controller = new AbortController();
    // One listener per RPC lands on this signal (long polls of a send waiting for hours make
    // many); they go with the signal when the call ends, so no limit applies to it.
    setMaxListeners(0, controller.signal);
    if (this.closed) controller.abort(this.#closing.signal.reason);
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.#inFlight.set(controller, { key, done });
    try {
      return await connection.withAbortSignal(controller.signal, fn);
    } finally {
      this.#inFlight.delete(controller);
      finish();
    }
  }

  /**
   * Wait for the next turn of `key`'s sends: resolves once every send this client issued
   * earlier for `key` was accepted by the workflow or ended, or at once when `signal`
   * aborts. Returns the function that hands the turn on; call it once this send was
   * accepted (or ended without being accepted). Calling it more than once is harmless.
   */
  async sendTurn(key: string, signal?: AbortSignal): Promise<() => void> {
    const previous = this.#sendTails.get(key) ?? Promise.resolve();
    // An earlier send has not handed its turn on: it learns that a later one waits for it.
    if (this.#sendTails.has(key)) this.#waitedOn(key);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.#sendTails.set(key, tail);
    void tail.then(() => {
      if (this.#sendTails.get(key) === tail) this.#sendTails.delete(key);
    });
    let turned = false;
    const turn = previous.then(() => (turned = true));
    if (signal && !signal.aborted) {
      let onAbort!: () => void;
      const aborted = new Promise<void>((resolve) => (onAbort = resolve));
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        await Promise.race([turn, aborted]);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    } else if (!signal) {
      await turn;
    }
    if (!turned) return release;
    // This send holds the turn now; sends queued behind it already wait for it.
    const holder: TurnHolder = { waitedOn: this.#sendTails.get(key) !== tail };
    this.#holders.set(key, holder);
    return () => {
      if (this.#holders.get(key) === holder) this.#holders.delete(key);
      release();
    };
  }

  /**
   * Call `fn` once a later send of `key` waits for the send holding the turn (the caller):
   * at once if one already does, else when one calls {@link sendTurn}. Until then the holder
   * need not learn when its Update was accepted (it may wait for its result in one request).
   * Returns the function that stops watching.
   */
  whenWaitedOn(key: string, fn: () => void): () => void {
    const holder = this.#holders.get(key);
    if (!holder) return () => undefined;
    if (holder.waitedOn) {
      fn();
      return () => undefined;
    }
    holder.notify = fn;
    return () => {
      if (holder.notify === fn) delete holder.notify;
    };
  }

  #waitedOn(key: string): void {
    const holder = this.#holders.get(key);
    if (!holder || holder.waitedOn) return;
    holder.waitedOn = true;
    const notify = holder.notify;
    delete holder.notify;
    notify?.();
  }

  /**
   * The client interceptor that tells {@link takeStart} whether a watched Update was still
   * running when its start was answered (accepted) or was answered at once (refused by the
   * validator, or done within the workflow task that took it).
   */
  interceptor(): WorkflowClientInterceptor {
    return {
      startUpdate: async (input, next) => {
        const output = await next(input);
        if (this.#starts.has(output.updateId)) {
          this.#starts.set(output.updateId, output.outcome ? 'completed' : 'running');
        }
        return output;
      },
    };
  }

  /** Watch the next start of Update `updateId` (read it with {@link takeStart}). */
  watchStart(updateId: string): void {
    this.#starts.set(updateId, 'unknown');
  }

  /** How the watched start of `updateId` stood; stops watching it. */
  takeStart(updateId: string): UpdateStart {
    const start = this.#starts.get(updateId) ?? 'unknown';
    this.#starts.delete(updateId);
    return start;
  }

  /**
   * Wait until no call of `key` is in flight, or `timeoutMs` passed (so calls that a close
   * of their session has just answered are not cut off by the client closing).
   */
  async quiet(key: string, timeoutMs: number): Promise<void> {
    const pending = [...this.#inFlight.values()].filter((c) => c.key === key).map((c) => c.done);
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(pending),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  /** Abort every call in flight, and every later one at once. */
  close(reason: unknown): void {
    if (this.closed) return;
    this.#closing.abort(reason);
    for (const controller of this.#inFlight.keys()) controller.abort(reason);
  }
}
