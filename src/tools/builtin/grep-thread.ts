/**
 * `Grep`'s side of its search thread (`grep-worker.ts`): start one, hand it a search, and
 * terminate it when the search must stop. A thread that finished a search is kept for the
 * next one (at most one idle, for {@link GREP_THREAD_IDLE_MS}), so a call does not pay for a
 * new thread each time; a stopped search's thread is never reused.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import type {
  GrepMatch,
  GrepSearchMessage,
  GrepSearchRequest,
  GrepThreadData,
  GrepThreadMessage,
  GrepThreadRequest,
} from './grep-worker.js';

/** How long a search thread is kept idle for the next search, ms. */
export const GREP_THREAD_IDLE_MS = 30_000;

/** The longest delay `setTimeout` takes, ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a search ended. */
export type SearchOutcome =
  | { kind: 'done'; matches: GrepMatch[]; capped: boolean; filesSearched: number }
  | {
      kind: 'stopped';
      /** Its time budget ran out, or the call was aborted. */
      why: 'timeout' | 'abort';
      /** The file it was searching, if it had started one. */
      file: string | undefined;
      /** Index of that file in the files given, -1 before the first. */
      fileIndex: number;
    }
  | { kind: 'failed'; name: string; message: string };

/** What bounds a search, from the tool's context. */
export interface SearchLimits {
  /** Aborting stops the search; a `TimeoutError` reason counts as running out of time. */
  signal: AbortSignal;
  /** The search stops this long after `started`, ms. */
  timeoutMs: number;
  /** When the tool call started, epoch ms. */
  started: number;
  /** Called with `{ filesSearched }` as the search goes. */
  heartbeat(details: { filesSearched: number }): void;
}

/** Whether this module runs from its TypeScript source (tsx, vitest) rather than built. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * A new search thread. Built, its script is `grep-worker.js` next to this file. From the
 * TypeScript sources, Node 20 does not carry tsx's loader into worker threads, so the thread
 * registers it before it imports `grep-worker.ts` (searches posted meanwhile wait in its
 * message queue).
 */
function startSearchThread(): Worker {
  const workerData: GrepThreadData = { kind: 'durable-agent-grep' };
  // The worker's own flags (--import of instrumentation, say) are not the search's business.
  const options = { workerData, execArgv: [] };
  const script = new URL(`./grep-worker.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);
  let thread: Worker;
  if (FROM_SOURCE) {
    const tsx = import.meta.resolve('tsx/esm/api');
    const boot =
      `import(${JSON.stringify(tsx)})` +
      `.then((tsx) => { tsx.register(); return import(${JSON.stringify(script.href)}); });`;
    thread = new Worker(boot, { ...options, eval: true });
  } else {
    thread = new Worker(script, options);
  }
  live++;
  // Each search listens for its own failures; an idle thread's must not crash the worker.
  thread.on('error', () => undefined);
  thread.once('exit', () => {
    live--;
    if (idle?.thread === thread) {
      clearTimeout(idle.timer);
      idle = undefined;
    }
  });
  return thread;
}

let idle: { thread: Worker; timer: NodeJS.Timeout } | undefined;
let lastId = 0;
let live = 0;

/**
 * Search threads of this process: `live` ones (started and not yet exited), of which `idle`
 * wait for the next search. A stopped search leaves none behind: `live - idle` is the
 * number of searches running.
 */
export function searchThreadCounts(): { live: number; idle: number } {
  return { live, idle: idle ? 1 : 0 };
}

function takeThread(): Worker {
  if (!idle) return startSearchThread();
  const { thread, timer } = idle;
  idle = undefined;
  clearTimeout(timer);
  thread.ref();
  return thread;
}

/**
 * Keep `thread` for the next search (it holds the process open no more), or end it when one
 * is kept already; resolves when it is kept or gone.
 */
async function keepThread(thread: Worker): Promise<void> {
  if (idle) {
    await thread.terminate();
    return;
  }
  thread.unref();
  const timer = setTimeout(() => {
    if (idle?.thread !== thread) return;
    idle = undefined;
    void thread.terminate();
  }, GREP_THREAD_IDLE_MS);
  timer.unref();
  idle = { thread, timer };
}

/**
 * Run `search` in a search thread. When `limits.signal` aborts, or `limits.timeoutMs` after
 * `limits.started`, the thread is terminated (which stops a regular expression mid-match)
 * and the outcome is `stopped`; it resolves once that thread is gone. Never rejects.
 *
 * @param search What to search; `current` is filled in here.
 */
export function searchInThread(
  search: Omit<GrepSearchRequest, 'current'>,
  limits: SearchLimits,
): Promise<SearchOutcome> {
  const current = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  current[0] = -1;
  const stopped = (why: 'timeout' | 'abort'): SearchOutcome => {
    const fileIndex = Atomics.load(current, 0);
    return { kind: 'stopped', why, file: search.files[fileIndex], fileIndex };
  };
  // The tool activity aborts the signal with a TimeoutError when the tool's budget runs out.
  const abortKind = (): 'timeout' | 'abort' =>
    (limits.signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError'
      ? 'timeout'
      : 'abort';
  if (limits.signal.aborted) return Promise.resolve(stopped(abortKind()));

  const thread = takeThread();
  const id = ++lastId;
  return new Promise<SearchOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: SearchOutcome, reusable: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.signal.removeEventListener('abort', onAbort);
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
      // terminate() stops JavaScript even mid-match; either way, the search is over when
      // its thread waits idle or is gone.
      const ended = reusable ? keepThread(thread) : thread.terminate();
      void ended.then(
        () => resolve(outcome),
        () => resolve(outcome),
      );
    };
    const onAbort = (): void => finish(stopped(abortKind()), false);
    const onMessage = (message: GrepThreadMessage): void => {
      if (message.id !== id) return;
      const { id: _id, ...outcome } = message;
      if (outcome.kind === 'progress') limits.heartbeat({ filesSearched: outcome.filesSearched });
      else
        finish(
          outcome as Exclude<GrepSearchMessage, { kind: 'progress' }>,
          outcome.kind === 'done',
        );
    };
    const onError = (error: Error): void =>
      finish({ kind: 'failed', name: error.name, message: error.message }, false);
    const onExit = (code: number): void =>
      finish(
        {
          kind: 'failed',
          name: 'GrepThreadExited',
          message: `the search thread exited (code ${code}) before it finished`,
        },
        false,
      );
    limits.signal.addEventListener('abort', onAbort, { once: true });
    const left = limits.timeoutMs - (Date.now() - limits.started);
    // Node fires longer timers at once, so a budget past its limit means no timer at all.
    const timer =
      left <= MAX_TIMER_MS
        ? setTimeout(() => finish(stopped('timeout'), false), Math.max(0, left))
        : undefined;
    thread.on('message', onMessage);
    thread.on('error', onError);
    thread.on('exit', onExit);
    thread.postMessage({ id, search: { ...search, current } } satisfies GrepThreadRequest);
  });
}
