/**
 * Read a session's conversation from its workflow, page by page (a query answer must stay
 * under Temporal's 2 MiB payload limit, a long conversation does not).
 *
 * @module
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import type { ConversationMessage } from '../common/conversation.js';
import { Queries, type ConversationPage } from '../common/messages.js';
import type { Prompt } from '../common/types.js';
import { queryWithDeadline } from './query.js';

/** A paged conversation query: `Queries.conversationPage` or `Queries.transcriptPage`. */
type PageQuery = QueryDefinition<ConversationPage, [number]>;

/**
 * Every message of a paged conversation query, in order: by default the model's context
 * (`conversationPage`); `transcriptPage` gives every message of the run.
 */
export async function readConversation(
  handle: WorkflowHandle,
  query: PageQuery = Queries.conversationPage,
): Promise<ConversationMessage[]> {
  return (await readConversationPages(handle, query)).messages;
}

/** The messages of a paged conversation query, and the newest prompt its first page names. */
export async function readConversationPages(
  handle: WorkflowHandle,
  query: PageQuery = Queries.conversationPage,
): Promise<{ messages: ConversationMessage[]; prompt?: Prompt }> {
  const messages: ConversationMessage[] = [];
  let prompt: Prompt | undefined;
  let from: number | null = 0;
  while (from !== null) {
    const page: ConversationPage = await queryWithDeadline(handle, query, from);
    messages.push(...page.messages);
    if (from === 0) prompt = page.prompt;
    from = page.next;
  }
  return prompt === undefined ? { messages } : { messages, prompt };
}
