/**
 * What the session page reads: the sessions listed (with their timelines while they run),
 * one session's timeline, and the permission requests waiting for a person (its sub-agents'
 * included).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { AgentSdkError, SessionNotFoundError, messageOf } from '../common/errors.js';
import type { PendingPermission } from '../common/permission.js';
import { ROOT_AGENT_PATH, TASK_TOOL } from '../common/subagents.js';
import { toolLabel } from '../common/summaries.js';
import { listSessionSummaries } from '../client/list-sessions.js';
import { PENDING_TREE_DEPTH, pendingTree } from '../client/pending-tree.js';
import { sessionListStatus } from '../client/session-status.js';
import { isCallTimeout, isNoPollerError } from '../temporal/query.js';
import { decodeHistoryPayloads, storedPayloadEventIds } from '../history/decode.js';
import { findSessionWorkflow, type FoundSession } from '../history/files.js';
import { walkSubagentTree } from '../history/subagent-tree.js';
import { timelineFromHistory } from '../history/timeline.js';
import type { HistoryTimeline } from '../history/timeline-types.js';
import type { UiContext } from './context.js';
import { HttpError, mapLimited, send, unreadable } from './http.js';
import { requestContext } from './request-context.js';
import {
  inboxPage,
  sessionLink,
  sessionListPage,
  type InboxEntry,
  type SessionRow,
  type SessionUiStatus,
} from './pages.js';

/** Histories read at once for the list. */
const READ_CONCURRENCY = 4;

/** Run `body` with every server call bounded by `ui.timeoutMs`. */
export function bounded<T>(ui: UiContext, body: () => Promise<T>): Promise<T> {
  return ui.client.connection.withDeadline(Date.now() + ui.timeoutMs, body);
}

export async function readTimeline(
  ui: UiContext,
  workflowId: string,
  sessionId: string,
): Promise<HistoryTimeline> {
  const recorded = await bounded(ui, () => ui.client.workflow.getHandle(workflowId).fetchHistory());
  let history;
  try {
    history = await decodeHistoryPayloads(recorded, ui.codecs);
  } catch (error) {
    if (error instanceof AgentSdkError) throw unreadable(sessionId, error);
    throw error;
  }
  return timelineFromHistory(history, { storedPayloadEventIds: storedPayloadEventIds(recorded) });
}

/**
 * The timelines of the sub-agents `timeline`'s `Task` calls started, and of theirs down to
 * `depthLeft` levels, by their session ids (each read from its history, as the page's own).
 */
export async function readSubagentTimelines(
  ui: UiContext,
  timeline: HistoryTimeline,
  depthLeft: number,
): Promise<Map<string, HistoryTimeline>> {
  const into = new Map<string, HistoryTimeline>();
  await walkSubagentTree(timeline, depthLeft, {
    read: (child) => readTimeline(ui, child.workflowId, child.sessionId),
    visit: (_parent, _call, child, read) => {
      into.set(child.sessionId, read);
    },
    concurrent: true,
  });
  return into;
}

/**
 * The requests waiting for a person in a session and in the sub-agents it runs, as their
 * workers list them (each with the `sessionId` and `agentPath` of the session that asks).
 * @throws {HttpError} 503 when no worker answers.
 */
export async function pendingOf(
  ui: UiContext,
  found: { sessionId: string; workflowId: string; description?: FoundSession['description'] },
  answering = false,
): Promise<PendingPermission[]> {
  const path = found.description?.memo?.agentPath;
  const root = {
    sessionId: found.sessionId,
    agentPath: typeof path === 'string' ? path : ROOT_AGENT_PATH,
  };
  try {
    return await bounded(ui, () =>
      pendingTree(ui.client, found.workflowId, PENDING_TREE_DEPTH, { root }),
    );
  } catch (error) {
    const why = isNoPollerError(error)
      ? "no worker polls the session's task queue"
      : isCallTimeout(error)
        ? `no worker answered within ${Math.round(ui.timeoutMs / 1000)} s`
        : messageOf(error);
    throw new HttpError(
      503,
      'No worker answers',
      `session '${found.sessionId}': ${why}; its requests are read and answered through the ` +
        `agent's worker: start it and try again${answering ? ' (nothing was sent)' : ''}`,
      `${sessionLink(found.sessionId, 'back to the session')} · <a href="/inbox">Inbox</a>`,
    );
  }
}

/** The inbox entries of one session: its worker's list, else the history's waiting calls. */
export async function entriesOf(
  ui: UiContext,
  row: { sessionId: string; workflowId: string },
  timeline: HistoryTimeline,
): Promise<InboxEntry[]> {
  try {
    const pending = await pendingOf(ui, row);
    return pending.map((request) => ({
      sessionId: row.sessionId,
      request,
      // A sub-agent's call is not in this session's history: only the agent is known here.
      ...(request.sessionId === undefined || request.sessionId === row.sessionId
        ? requestContext(timeline, request.toolUseId, request.input)
        : timeline.agentName !== undefined
          ? { agentName: timeline.agentName }
          : {}),
    }));
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return timeline.toolCalls
      .filter((c) => c.permission?.ask?.outcome === 'waiting')
      .map((call) => ({
        sessionId: row.sessionId,
        call,
        unavailable: error.message,
        ...requestContext(timeline, call.toolUseId, undefined),
      }));
  }
}

async function rows(ui: UiContext): Promise<Array<SessionRow & { timeline?: HistoryTimeline }>> {
  const summaries = await bounded(ui, () =>
    listSessionSummaries(ui.client, ui.limit, {
      ...(ui.taskQueue !== undefined ? { taskQueue: ui.taskQueue } : {}),
    }),
  );
  return mapLimited(summaries, READ_CONCURRENCY, async (s) => {
    const row: SessionRow & { timeline?: HistoryTimeline } = {
      sessionId: s.sessionId,
      workflowId: s.workflowId,
      status: endStatusOf(s.status) ?? 'closed',
      temporalStatus: s.status,
      startTime: s.startTime,
      ...(s.closeTime ? { closeTime: s.closeTime } : {}),
      ...(s.agentName !== undefined ? { agentName: s.agentName } : {}),
    };
    if (s.status !== 'RUNNING') return row;
    try {
      const timeline = await readTimeline(ui, s.workflowId, s.sessionId);
      row.timeline = timeline;
      row.status = statusOf(timeline);
      row.prompts = timeline.prompts.length;
      if (timeline.agentName) row.agentName = timeline.agentName;
      const waiting = timeline.toolCalls.filter((c) => c.permission?.ask?.outcome === 'waiting');
      if (waiting.length) row.waiting = waiting.map((c) => toolLabel(c.toolName, c.input));
    } catch (error) {
      row.status = 'running';
      row.error = error instanceof HttpError ? error.message : messageOf(error);
    }
    return row;
  });
}

/** The list of sessions. */
export async function listPage(ui: UiContext, response: ServerResponse): Promise<void> {
  send(response, 200, sessionListPage(await rows(ui), ui.namespace));
}

/**
 * The inbox: every request waiting for a person, across the listed sessions. A sub-agent's
 * request shows once, under the topmost listed session that runs it (answered through it).
 */
export async function inbox(ui: UiContext, response: ServerResponse): Promise<void> {
  const waiting = (await rows(ui)).filter((r) => r.timeline && mayAsk(r.status, r.timeline));
  const entries = await mapLimited(waiting, READ_CONCURRENCY, (r) => entriesOf(ui, r, r.timeline!));
  const byRequest = new Map<string, InboxEntry>();
  for (const entry of entries.flat()) {
    const id = entry.request?.requestId ?? `${entry.sessionId} ${entry.call?.toolUseId}`;
    const seen = byRequest.get(id);
    if (!seen || entry.sessionId.length < seen.sessionId.length) byRequest.set(id, entry);
  }
  send(response, 200, inboxPage([...byRequest.values()], { fallback: ui.identity }));
}

/**
 * Whether a session of this status may have requests waiting: its own (`awaiting_approval`),
 * or a sub-agent's while one of its `Task` calls runs.
 */
export function mayAsk(status: SessionUiStatus, timeline: HistoryTimeline): boolean {
  if (status === 'awaiting_approval') return true;
  return (
    status === 'running' &&
    timeline.toolCalls.some(
      (c) => c.toolName === TASK_TOOL && (c.result === undefined || c.result.status === 'running'),
    )
  );
}

export async function find(ui: UiContext, target: string): Promise<FoundSession> {
  try {
    return await bounded(ui, () => findSessionWorkflow(ui.client, target));
  } catch (error) {
    if (error instanceof SessionNotFoundError) {
      throw new HttpError(
        404,
        'No such session',
        `no session '${target}' in namespace '${ui.namespace}'`,
      );
    }
    // Its memo did not open (an encrypted session, a key the ring lacks).
    if (error instanceof AgentSdkError) throw unreadable(target, error);
    throw error;
  }
}

/**
 * A session's status on the page: unless its workflow runs, `closed` (it completed) or how
 * Temporal ended it (`terminated`, ...); `awaiting_approval` while a tool call waits for a
 * person; `running` while a prompt or a dispatch is in progress; else `idle`.
 */
export function statusOf(timeline: HistoryTimeline): SessionUiStatus {
  const ended = endStatusOf(timeline.status);
  if (ended !== undefined) return ended;
  if (timeline.toolCalls.some((c) => c.permission?.ask?.outcome === 'waiting')) {
    return 'awaiting_approval';
  }
  const busy =
    timeline.prompts.some((p) => p.status === undefined) ||
    timeline.dispatches.some((d) => d.decision === 'running');
  return busy ? 'running' : 'idle';
}

/**
 * `closed` for a completed execution, how Temporal ended any other closed one (`terminated`,
 * `timed_out`, ...), `undefined` for a running one. Never the session's own search
 * attribute: a terminated or reset workflow keeps its last `DurableAgentStatus`.
 */
function endStatusOf(executionStatus: string): SessionUiStatus | undefined {
  if (executionStatus === 'RUNNING') return undefined;
  const status = sessionListStatus(executionStatus, undefined);
  // UNSPECIFIED, which a listed execution never has: counted as closed, as before.
  return status === undefined ? 'closed' : (status as SessionUiStatus);
}
