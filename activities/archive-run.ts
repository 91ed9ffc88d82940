/**
 * The `archiveRun` activity: before a session's run continues as new, its transcript and
 * timeline go to the payload store, so they stay readable after Temporal's retention drops
 * the closed run. It reads them from the run by query; nothing large crosses history.
 *
 * @module
 */
import { Context } from '@temporalio/activity';
import type { ConversationMessage } from '../src/common/conversation.js';
import { Queries, type ConversationPage } from '../src/common/messages.js';
import {
  sessionWorkflowId,
  type RunArchive,
  type RunArchiveBody,
} from '../src/common/workflow-io.js';
import type { ArchiveRunInput } from '../src/common/activity-io.js';
import type { PayloadStore } from '../src/payloads/store.js';

/** Build `archiveRun`. */
export function createArchiveActivities(deps: { payloadStore: PayloadStore }) {
  async function archiveRun(input: ArchiveRunInput): Promise<RunArchive> {
    const ctx = Context.current();
    const { workflowId, runId } = ctx.info.workflowExecution ?? {
      workflowId: sessionWorkflowId(input.sessionId),
      runId: undefined,
    };
    const handle = ctx.client.workflow.getHandle(workflowId, runId);
    const messages: ConversationMessage[] = [];
    let from: number | null = 0;
    while (from !== null && messages.length < input.messages) {
      const page: ConversationPage = await handle.query(Queries.transcriptPage, from);
      messages.push(...page.messages);
      from = page.next;
      ctx.heartbeat();
    }
    const timeline = await handle.query(Queries.timeline);
    const body: RunArchiveBody = {
      runId: runId ?? '',
      messages: messages.slice(0, input.messages),
      timeline: timeline.slice(0, input.timelineEntries),
    };
    const ref = await deps.payloadStore.put(Buffer.from(JSON.stringify(body)));
    return {
      runId: body.runId,
      ref,
      messages: body.messages.length,
      timelineEntries: body.timeline.length,
    };
  }
  return { archiveRun };
}
