/**
 * What identifies one state of a session's model context exactly, so a worker-side copy of
 * it (`activities/conversation-cache.ts`) is used only when it is that state. Workflow-safe:
 * the session workflow stamps every model step with it.
 *
 * @module
 */
import type { Sinks } from '@temporalio/workflow';
import type { ConversationMessage } from './conversation.js';
import type { Prompt } from './types.js';

/**
 * One state of a run's model context. Within a run the context is a deterministic function
 * of the messages added so far (the carry fixes the start), so `runId` and `version` name it;
 * `length`, `compacted` and `tail` are checked too, so a copy that disagrees in any of them
 * is never used.
 */
export interface ContextStamp {
  /** The workflow run whose state this is. */
  runId: string;
  /** Messages added to this run's transcript so far. Every added message is a new version. */
  version: number;
  /** Messages in the context as the model is sent it. */
  length: number;
  /** Messages compacted out of the context so far (the note in front counts them). */
  compacted: number;
  /** FNV-1a (32-bit) hash of the JSON of the context's last message; 0 when it is empty. */
  tail: number;
}

/**
 * What the workflow hands the worker's cache before a model step: the whole context
 * (`base` absent), or the messages added since the state `base` names, when nothing before
 * them changed (no compaction, no cuts in between).
 */
export interface ContextSync {
  /** The session's workflow id. */
  workflowId: string;
  stamp: ContextStamp;
  /** The state these messages extend; absent when `messages` is the whole context. */
  base?: { version: number; length: number };
  messages: ConversationMessage[];
  /** The newest prompt as sent (no note, no cuts): what step 0 of a prompt gets. */
  prompt?: Prompt;
  /** Estimated size of the whole context, JSON characters (the cache's memory bound). */
  chars: number;
}

/** FNV-1a, 32 bits, over the UTF-16 code units of `text`. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The `tail` of a context: the hash of its last message's JSON, 0 when empty. */
export function tailHash(messages: readonly ConversationMessage[]): number {
  const last = messages.at(-1);
  return last === undefined ? 0 : fnv1a(JSON.stringify(last));
}

/**
 * The sink a session's run calls and the worker registers (`activities/conversation-cache.ts`):
 * the worker's copy of each run's context.
 */
export interface ConversationCacheSinks extends Sinks {
  conversationCache: {
    /** Hand the worker's cache the context a model step is about to read. */
    sync(update: ContextSync): void;
    /** This run ended: the worker drops its copy (the sink reads the run from its info). */
    forget(): void;
  };
}
