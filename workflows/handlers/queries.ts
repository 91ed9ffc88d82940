/**
 * The session's queries: its conversation, pages of it, archives, pending permission
 * requests, sub-agents, timeline, description, the running prompt's abort and why a
 * sub-agent was cancelled. Read-only. Workflow code.
 *
 * @module
 */
import { setHandler } from '@temporalio/workflow';
import { contextForModel } from '../../src/common/context.js';
import { DEFAULTS } from '../../src/common/defaults.js';
import { Queries } from '../../src/common/messages.js';
import { lastPrompt, pageOf } from '../session/conversation-pages.js';
import { describeSession, type SessionState } from '../session/state.js';
import { subagentAbortRecord, type TaskCallState } from '../prompt/task-call.js';

/** Register every query of the session. */
export function setSessionQueries(state: SessionState): void {
  const maxContextTokens = state.input.maxContextTokens ?? DEFAULTS.maxContextTokens;
  setHandler(Queries.conversation, () => state.transcript);
  // What the model sees: the compacted context with its note and cuts.
  setHandler(Queries.conversationPage, (from) => {
    const page = pageOf(contextForModel(state.context, maxContextTokens), from);
    const prompt = Number(from) > 0 ? undefined : lastPrompt(state.transcript);
    return prompt === undefined ? page : { ...page, prompt };
  });
  setHandler(Queries.transcriptPage, (from) => pageOf(state.transcript, from));
  setHandler(Queries.archives, () => ({
    archives: state.archives,
    transcriptBase: state.transcriptBase,
    timelineBase: state.timelineBase,
  }));
  setHandler(Queries.pendingPermissions, () =>
    [...state.pendingPermissions.values()].map((e) => e.request),
  );
  setHandler(Queries.children, () => [
    ...((state as SessionState & Pick<TaskCallState, 'children'>).children?.values() ?? []),
  ]);
  setHandler(Queries.mcpTools, () => state.mcpTools ?? null);
  setHandler(Queries.timeline, () => state.timeline);
  setHandler(Queries.describe, () => describeSession(state));
  setHandler(Queries.abortReason, () => state.current?.abort ?? null);
  setHandler(Queries.subagentAbortReason, (childWorkflowId) =>
    subagentAbortRecord(state, childWorkflowId),
  );
}
