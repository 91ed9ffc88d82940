/**
 * The model step activity: one call to the agent's model.
 *
 * @module
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { AgentSdkError, serializeError } from '../src/common/errors.js';
import type { ConversationMessage } from '../src/common/conversation.js';
import { Queries, type ModelStepInput, type ModelStepOutput } from '../src/common/protocol.js';
import type { AgentRegistry } from '../src/registry.js';

/** Build `modelStep`. */
export function createModelActivities(deps: { registry: AgentRegistry }) {
  async function modelStep(input: ModelStepInput): Promise<ModelStepOutput> {
    const ctx = Context.current();
    const { model, tools } = deps.registry.agent(input.agentName);
    const heartbeat = setInterval(() => ctx.heartbeat(), 5000);
    try {
      const messages = await conversationOf(ctx);
      return await model.step({ ...input, messages, tools, signal: ctx.cancellationSignal });
    } catch (error) {
      // Our own errors (a script that ran out, a 401) are not worth retrying; anything
      // else (a 429, a reset connection) goes through the activity's retry policy.
      const retryable = (error as { retryable?: boolean }).retryable;
      if (error instanceof AgentSdkError && retryable !== true) {
        throw ApplicationFailure.create({
          type: error.name,
          message: error.message,
          nonRetryable: true,
          details: [serializeError(error)],
        });
      }
      throw error;
    } finally {
      clearInterval(heartbeat);
    }
  }
  return { modelStep };
}

/**
 * The conversation, read from the session workflow by query: queries are not recorded in
 * history, so each message is in history once, however many steps read it.
 */
async function conversationOf(ctx: Context): Promise<ConversationMessage[]> {
  const workflowId = ctx.info.workflowExecution?.workflowId;
  if (!workflowId) return [];
  return ctx.client.workflow
    .getHandle(workflowId)
    .query<ConversationMessage[]>(Queries.conversation);
}
