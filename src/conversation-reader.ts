/**
 * Read a session's conversation from its workflow, page by page (a query answer must stay
 * under Temporal's 2 MiB payload limit, a long conversation does not).
 *
 * @module
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { ConversationMessage } from './common/conversation.js';
import { Queries, type ConversationPage } from './common/protocol.js';

/**
 * Every message of a paged conversation query, in order: by default the model's context
 * (`conversationPage`); `transcriptPage` gives every message of the run.
 */
export async function readConversation(
  handle: WorkflowHandle,
  query: string = Queries.conversationPage,
): Promise<ConversationMessage[]> {
  const messages: ConversationMessage[] = [];
  let from: number | null = 0;
  while (from !== null) {
    const page: ConversationPage = await handle.query<ConversationPage, [number]>(query, from);
    messages.push(...page.messages);
    from = page.next;
  }
  return messages;
}
