/**
 * Conversation pages for queries: a query answer must stay small. Workflow code.
 *
 * @module
 */
import type { ConversationMessage } from '../../src/common/conversation.js';
import { CONVERSATION_PAGE_BYTES, type ConversationPage } from '../../src/common/messages.js';
import type { Prompt } from '../../src/common/types.js';

/** The newest user message's content, as the prompt reached the model. */
export function lastPrompt(messages: ConversationMessage[]): Prompt | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user') return message.content;
  }
  return undefined;
}

/** One page of `messages` from index `from`, under {@link CONVERSATION_PAGE_BYTES}. */
export function pageOf(messages: ConversationMessage[], from: unknown): ConversationPage {
  const page: ConversationMessage[] = [];
  let bytes = 0;
  let index = Math.max(0, Math.floor(Number(from) || 0));
  for (; index < messages.length; index++) {
    const message = messages[index]!;
    const size = JSON.stringify(message).length;
    if (page.length > 0 && bytes + size > CONVERSATION_PAGE_BYTES) break;
    page.push(message);
    bytes += size;
  }
  return { messages: page, next: index < messages.length ? index : null };
}
