/**
 * Model steps get their context without a round trip: before each step the workflow hands
 * this worker's conversation cache the context (through a sink, so nothing is recorded in
 * history) and stamps the step's input with the exact state it must see. The activity uses
 * its cached copy only when it matches the stamp; otherwise it queries, as before. The
 * workflow state stays the truth. Workflow code.
 *
 * @module
 */
import { proxySinks, workflowInfo } from '@temporalio/workflow';
import {
  appendToContext,
  contextForModel,
  tokensOfChars,
  type ContextWindow,
} from '../../src/common/context.js';
import {
  tailHash,
  type ContextStamp,
  type ConversationCacheSinks,
} from '../../src/common/context-stamp.js';
import type { ConversationMessage } from '../../src/common/conversation.js';
import { lastPrompt } from './conversation-pages.js';

const { conversationCache } = proxySinks<ConversationCacheSinks>();

/**
 * Tell this worker's cache that the run ended (closed, failed, continued as new), so the
 * copy of a closed session goes now rather than when a thousand newer sessions push it out.
 * Nothing is recorded: a replay or another worker is unaffected.
 */
export function forgetContext(): void {
  // A replay (a replayer registers no sinks, and a worker replaying has no copy of this run
  // to drop) calls nothing, as `sync` does not.
  if (workflowInfo().unsafe.isReplaying) return;
  conversationCache.forget();
}

/** The parts of the session state a stamp reads. */
interface StampedState {
  /** This run's transcript: its length is the context's version. */
  transcript: ConversationMessage[];
  context: ContextWindow;
}

/**
 * Stamps the context a model step reads. Called with a `pending` message (an inline
 * dispatch's prompt, `ModelStepInput.hook`), it stamps the context as it will be once that
 * message is added, without adding it; if the state then never takes it (the callbacks
 * rewrote or rejected the prompt, the step failed), `forget()` makes the next hand-over whole.
 */
export interface ContextStamper {
  (pending?: ConversationMessage): ContextStamp;
  /** The last stamp's pending message was not added: hand the next context over whole. */
  forget(): void;
}

/**
 * A function that stamps the context as it is now and, on a live (not replayed) workflow
 * task, hands it to this worker's cache: the messages added since the last hand-over when
 * nothing before them changed, else the whole context. What was handed over is kept in this
 * closure (workflow memory): a replayed or new workflow instance starts with a whole context.
 */
export function contextStamper(state: StampedState, maxTokens: number): ContextStamper {
  let sent: { version: number; length: number; compacted: number; clipped: boolean } | undefined;
  const stamper = (pending?: ConversationMessage): ContextStamp => {
    let context = state.context;
    let version = state.transcript.length;
    if (pending) {
      // What `addMessage` will make of it: the same estimate, the same compaction.
      context = { ...context, messages: [...context.messages], tokens: [...context.tokens] };
      appendToContext(context, pending, maxTokens, tokensOfChars(JSON.stringify(pending).length));
      version++;
    }
    const messages = contextForModel(context, maxTokens);
    const tokens = context.tokens.reduce((a, b) => a + b, 0);
    // Over budget, every message is cut to its share: the whole context changes.
    const clipped = tokens > maxTokens;
    const stamp: ContextStamp = {
      runId: workflowInfo().runId,
      version,
      length: messages.length,
      compacted: context.compacted,
      tail: tailHash(messages),
    };
    if (workflowInfo().unsafe.isReplaying) return stamp;
    const extends_ =
      sent !== undefined &&
      !sent.clipped &&
      !clipped &&
      sent.compacted === stamp.compacted &&
      sent.length <= messages.length;
    const prompt = pending?.role === 'user' ? pending.content : lastPrompt(state.transcript);
    conversationCache.sync({
      workflowId: workflowInfo().workflowId,
      stamp,
      ...(extends_ ? { base: { version: sent!.version, length: sent!.length } } : {}),
      messages: extends_ ? messages.slice(sent!.length) : messages,
      ...(prompt !== undefined ? { prompt } : {}),
      chars: tokens * 4,
    });
    sent = { version: stamp.version, length: stamp.length, compacted: stamp.compacted, clipped };
    return stamp;
  };
  return Object.assign(stamper, { forget: () => (sent = undefined) });
}
