/**
 * An OpenTelemetry context manager on Node's `AsyncLocalStorage`: the active context follows
 * async calls, so a span started inside another (a Temporal `RunActivity` span, the agent's
 * `send` span) is its child. The same as `@opentelemetry/context-async-hooks`'
 * `AsyncLocalStorageContextManager`, which this package does not depend on; registered only
 * when the process has no context manager of its own (`tracing.ts`).
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, ContextManager } from '@opentelemetry/api';

/** A context manager whose active context is the `AsyncLocalStorage` store. */
export class AsyncLocalStorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  readonly #root: Context;

  /** @param root the context when none is active (`ROOT_CONTEXT` of the API in use). */
  constructor(root: Context) {
    this.#root = root;
  }

  active(): Context {
    return this.#storage.getStore() ?? this.#root;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const call = thisArg === undefined ? fn : fn.bind(thisArg);
    return this.#storage.run(context, call as (...a: A) => ReturnType<F>, ...args);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const manager = this;
    const bound = function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => fn.apply(this, args));
    };
    Object.defineProperty(bound, 'length', { value: fn.length, configurable: true });
    return bound as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}
