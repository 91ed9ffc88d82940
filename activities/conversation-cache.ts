/**
 * The worker-side copy of each session's model context, so a model step reads it without a
 * round trip. The session workflow hands it over through a sink before every model step
 * (`workflows/session/context-sync.ts`) and stamps the step with the exact state it must see; a copy
 * is used only when it matches that stamp in every field, else the step queries the
 * workflow (a new worker, an evicted session, a step that runs on another worker than the
 * workflow task that scheduled it) and keeps the answer for the next step. The workflow
 * state stays the truth: losing this cache (a kill -9) costs one query, nothing else.
 *
 * @module
 */
import type { InjectedSinks } from '@temporalio/worker';
import type { ConversationMessage } from '../src/common/conversation.js';
import { tailHash, type ContextStamp, type ContextSync } from '../src/common/context-stamp.js';
import type { Prompt } from '../src/common/types.js';
import type { ConversationCacheSinks } from '../src/common/context-stamp.js';

/** Bounds of a {@link ConversationCache}. */
export interface ConversationCacheOptions {
  /** Sessions kept; the least recently used leaves first. @default 1000 */
  maxSessions?: number;
  /** Estimated JSON characters kept in all (about 2 bytes each in memory). @default 64_000_000 */
  maxChars?: number;
}

/** Counters of one cache, for tests and benchmarks. */
export interface ConversationCacheStats {
  /** Model steps that used the cached copy. */
  hits: number;
  /** Model steps that queried the workflow (no copy, or one that did not match the stamp). */
  misses: number;
  /** Hand-overs that did not extend the cached copy and dropped it. */
  dropped: number;
}

/** A model step's context: the messages and the newest prompt as sent. */
export interface CachedContext {
  /** The conversation as the model step sends it, oldest first. */
  messages: readonly ConversationMessage[];
  /** The newest prompt as it reaches the model (after UserPromptSubmit), when there is one. */
  prompt?: Prompt;
}

interface Entry extends CachedContext {
  stamp: ContextStamp;
  messages: ConversationMessage[];
  chars: number;
}

/** Every cache of this process, summed: what a worker process reports in tests. */
export const processCacheStats: ConversationCacheStats = { hits: 0, misses: 0, dropped: 0 };

/** One worker's copies of its sessions' contexts, by workflow id. */
export class ConversationCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxSessions: number;
  readonly #maxChars: number;
  #chars = 0;
  /** This cache's counters. */
  readonly stats: ConversationCacheStats = { hits: 0, misses: 0, dropped: 0 };

  constructor(options: ConversationCacheOptions = {}) {
    this.#maxSessions = options.maxSessions ?? 1000;
    this.#maxChars = options.maxChars ?? 64_000_000;
  }

  /** Sessions held now. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Take a hand-over from the workflow: a whole context replaces the copy; a delta extends
   * it only if the copy is exactly the state the delta starts from, else the copy is dropped
   * (the next step then queries).
   */
  sync(update: ContextSync): void {
    const { workflowId, stamp, base } = update;
    const held = this.#entries.get(workflowId);
    let messages: ConversationMessage[];
    if (base === undefined) {
      messages = update.messages.map(frozen);
    } else if (
      held !== undefined &&
      held.stamp.runId === stamp.runId &&
      held.stamp.version === base.version &&
      held.messages.length === base.length
    ) {
      messages = held.messages;
      for (const message of update.messages) messages.push(frozen(message));
    } else {
      if (held) this.#remove(workflowId, held);
      this.stats.dropped++;
      processCacheStats.dropped++;
      return;
    }
    this.#put(workflowId, {
      stamp,
      messages,
      ...(update.prompt !== undefined ? { prompt: update.prompt } : {}),
      chars: update.chars,
    });
  }

  /**
   * The context for a step stamped `stamp`, if the copy is exactly that state (run, version,
   * length, compaction and the hash of the last message all equal); counts a hit or a miss.
   */
  lookup(workflowId: string, stamp: ContextStamp | undefined): CachedContext | undefined {
    const held = this.#entries.get(workflowId);
    if (stamp !== undefined && held !== undefined && sameState(held, stamp)) {
      // Most recently used last.
      this.#entries.delete(workflowId);
      this.#entries.set(workflowId, held);
      this.stats.hits++;
      processCacheStats.hits++;
      // A copy of the list: a model that appends to its request cannot change the cache.
      return {
        messages: [...held.messages],
        ...(held.prompt !== undefined ? { prompt: held.prompt } : {}),
      };
    }
    this.stats.misses++;
    processCacheStats.misses++;
    return undefined;
  }

  /**
   * Keep what a query answered for a step stamped `stamp`, if it is that state (its length
   * and last message agree), so the next step's delta extends it.
   */
  store(workflowId: string, stamp: ContextStamp | undefined, context: CachedContext): void {
    if (stamp === undefined) return;
    const messages = context.messages.map(frozen);
    const entry: Entry = {
      stamp,
      messages,
      ...(context.prompt !== undefined ? { prompt: context.prompt } : {}),
      chars: messages.reduce((n, m) => n + JSON.stringify(m).length, 0),
    };
    if (sameState(entry, stamp)) this.#put(workflowId, entry);
  }

  /**
   * Forget a session (its run ended, or it moved). Given `runId`, only a copy of that run
   * goes: the next run of a session that continued as new may already have handed over its own.
   */
  delete(workflowId: string, runId?: string): void {
    const held = this.#entries.get(workflowId);
    if (held && (runId === undefined || held.stamp.runId === runId)) this.#remove(workflowId, held);
  }

  /** The sinks to pass to `Worker.create`: the workflow's hand-overs land here. */
  sinks(): InjectedSinks<ConversationCacheSinks> {
    return {
      conversationCache: {
        // Never during replay: a replayed hand-over would be an old state (the stamp would
        // refuse it anyway); the workflow does not call it while replaying either.
        sync: { fn: (_info, update) => this.sync(update), callDuringReplay: false },
        // The run ended (`forgetContext()`): a closed session's copy must not stay until
        // newer sessions push it out (up to `maxSessions` closed sessions held).
        forget: {
          fn: (info) => this.delete(info.workflowId, info.runId),
          callDuringReplay: false,
        },
      },
    };
  }

  #put(workflowId: string, entry: Entry): void {
    const held = this.#entries.get(workflowId);
    if (held) this.#remove(workflowId, held);
    if (entry.chars > this.#maxChars) return;
    this.#entries.set(workflowId, entry);
    this.#chars += entry.chars;
    for (const [id, oldest] of this.#entries) {
      if (this.#entries.size <= this.#maxSessions && this.#chars <= this.#maxChars) break;
      this.#remove(id, oldest);
    }
  }

  #remove(workflowId: string, entry: Entry): void {
    this.#entries.delete(workflowId);
    this.#chars -= entry.chars;
  }
}

function sameState(entry: Entry, stamp: ContextStamp): boolean {
  const held = entry.stamp;
  return (
    held.runId === stamp.runId &&
    held.version === stamp.version &&
    held.length === stamp.length &&
    held.compacted === stamp.compacted &&
    held.tail === stamp.tail &&
    entry.messages.length === stamp.length &&
    tailHash(entry.messages) === stamp.tail
  );
}

/** Deeply frozen: a model that edits a message it was given throws instead of changing the copy. */
function frozen<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) frozen(child);
  }
  return value;
}
