/**
 * Read a session's conversation from its workflow, page by page (a query answer must stay
 * under Temporal's 2 MiB payload limit, a long conversation does not).
 *
 * @module
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { ConversationMessage } from './common/conversation.js';
import { Queries, type ConversationPage } from './common/protocol.js';

/** Every message of the session, in order. */
export async function readConversation(handle: WorkflowHandle): Promise<ConversationMessage[]> {
  const messages: ConversationMessage[] = [];
  let from: number | null = 0;
  while (from !== null) {
    const page: ConversationPage = await handle.query<ConversationPage, [number]>(
      Queries.conversationPage,
      from,
    );
    messages.push(...page.messages);
    from = page.next;
  }
  return messages;
}
