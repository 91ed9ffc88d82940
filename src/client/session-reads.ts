/**
 * What a session handle reads: its newest run and the earlier runs it archived, the whole
 * transcript, every hook dispatch (its sub-agents' too), and its description, for the read
 * methods of {@link Session}.
 *
 * @module
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import { ConfigError } from '../common/errors.js';
import type { ConversationMessage } from '../common/conversation.js';
import { Queries, type SessionDescription } from '../common/messages.js';
import type {
  SessionWorkflowResult,
  RunArchive,
  RunArchiveBody,
  TimelineEntry,
} from '../common/workflow-io.js';
import type { PayloadStore } from '../payloads/store.js';
import { readConversation } from '../temporal/conversation-reader.js';
import { queryWithDeadline } from '../temporal/query.js';
import { PENDING_TREE_DEPTH } from './pending-tree.js';
import { mergeByStart, subagentTimelines } from './subagent-timeline.js';
import { sessionTermination, toSdkError, type UpdateTarget } from './update-calls.js';

/** A session as its handle reads it: the Update target, and the store of its archives. */
export interface SessionRef extends UpdateTarget {
  /** Where earlier runs and offloaded payloads are read; absent for a CLI handle. */
  readonly payloadStore: PayloadStore | undefined;
}

/** The whole transcript across runs; see {@link Session.conversation}. */
export async function sessionConversation(session: SessionRef): Promise<ConversationMessage[]> {
  const run = await currentRun(session);
  const archived = await readArchives(session, run.archives);
  const current = await readConversation(run.handle, Queries.transcriptPage);
  return [...archived.flatMap((r) => r.messages), ...current];
}

/** Every hook dispatch across runs, with its sub-agents'; see {@link Session.timeline}. */
export async function sessionTimeline(
  session: SessionRef,
  options: { subagents?: boolean },
): Promise<TimelineEntry[]> {
  const run = await currentRun(session);
  const archived = await readArchives(session, run.archives);
  // A sub-agent's result carries no timeline (it stays in its history): ask the closed run.
  const kept = run.result?.task ? undefined : run.result?.timeline;
  const current = kept ?? (await queryWithDeadline(run.handle, Queries.timeline));
  const own = [...archived.flatMap((r) => r.timeline), ...current];
  if (!options.subagents) return own;
  const query = <T>(handle: WorkflowHandle, definition: QueryDefinition<T, []>) =>
    queryWithDeadline(handle, definition);
  const workflows = session.handle.client;
  const below = await subagentTimelines(workflows, run.handle, PENDING_TREE_DEPTH, query);
  return mergeByStart(own, below);
}

/**
 * The session's newest run, pinned by run id so that everything read from it belongs to
 * one run even if it continues as new meanwhile (a closed run still answers queries), and
 * the list of earlier runs it names.
 */
async function currentRun(session: SessionRef): Promise<{
  handle: WorkflowHandle;
  archives: RunArchive[];
  result?: SessionWorkflowResult;
}> {
  const description = await describeExecution(session);
  const handle = session.handle.client.getHandle(session.handle.workflowId, description.runId);
  if (description.status.name === 'RUNNING') {
    const { archives } = await queryWithDeadline(handle, Queries.archives);
    return { handle, archives };
  }
  const result = (await handle.result().catch(() => undefined)) as
    SessionWorkflowResult | undefined;
  if (result) return { handle, archives: result.archives ?? [], result };
  // Cancelled or failed: no result, but the closed run still answers queries (by replay).
  const { archives } = await queryWithDeadline(handle, Queries.archives);
  return { handle, archives };
}

/** Earlier runs' transcripts and timelines, from the payload store. */
async function readArchives(
  session: SessionRef,
  archives: RunArchive[],
): Promise<RunArchiveBody[]> {
  if (archives.length === 0) return [];
  if (!session.payloadStore) {
    throw new ConfigError(
      'This session continued as new: reading its earlier runs needs the agent payload store',
    );
  }
  const store = session.payloadStore;
  return Promise.all(
    archives.map(
      async (archive) =>
        JSON.parse(Buffer.from(await store.get(archive.ref)).toString('utf8')) as RunArchiveBody,
    ),
  );
}

/** A payload's full value as UTF-8 text; see {@link Session.readPayload}. */
export async function readPayloadText(session: SessionRef, ref: string): Promise<string> {
  if (!session.payloadStore) throw new ConfigError('readPayload: this handle has no payload store');
  return Buffer.from(await session.payloadStore.get(ref)).toString('utf8');
}

/** The session's state; see {@link Session.describe}. */
export async function describeSession(session: UpdateTarget): Promise<SessionDescription> {
  const execution = await describeExecution(session);
  if (execution.status.name !== 'RUNNING') {
    const memo = (execution.memo ?? {}) as {
      sessionEndMarker?: SessionDescription['sessionEndMarker'];
    };
    const result = (await session.handle.result().catch(() => undefined)) as
      SessionWorkflowResult | undefined;
    const terminated =
      execution.status.name === 'TERMINATED' ? await sessionTermination(session.handle) : undefined;
    return {
      sessionId: session.sessionId,
      status: 'closed',
      taskQueue: execution.taskQueue,
      ...(memo.sessionEndMarker ? { sessionEndMarker: memo.sessionEndMarker } : {}),
      pendingCleanups: 0,
      promptsHandled: result?.promptsHandled ?? 0,
      busy: false,
      ...(terminated ? { terminated } : {}),
    };
  }
  return queryWithDeadline(session.handle, Queries.describe);
}

/** Temporal's description of the session's newest run, its errors as the SDK's. */
export async function describeExecution(session: UpdateTarget) {
  try {
    return await session.handle.describe();
  } catch (error) {
    throw toSdkError(error, session.sessionId);
  }
}
