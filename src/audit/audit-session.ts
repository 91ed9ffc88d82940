/**
 * A session's audit entries from its runs' histories: a `session` entry, then each run's
 * entries (oldest run first, one per continue-as-new), made by {@link runEntries} from the
 * run's timeline. What `audit-export` writes and `audit-verify` makes again to compare.
 *
 * Sub-agents are referenced, not inlined: a `Task` call's `tool` entry names the sub-agent's
 * session and workflow id; export that session (or a query that lists it) for its entries.
 *
 * @module
 */
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { timelineFromHistory } from '../history/timeline.js';
import { runEntries, sessionEntry, type AuditEntryOptions } from './audit-entries.js';
import type { AuditEntryBody } from './audit-types.js';

/** One run of a session, its payloads decoded. */
export interface AuditRun {
  /** The run's history, payloads decoded (decrypted, offloaded ones read back). */
  history: History;
  /** Ids of events whose payload was a payload-store reference (`storedPayloadEventIds`). */
  storedPayloadEventIds?: ReadonlySet<number>;
}

/** A session's entries, and what its header says of it. */
export interface SessionAudit {
  sessionId: string;
  workflowId: string;
  /** Each run's `originalExecutionRunId`, oldest first. */
  runIds: string[];
  entries: AuditEntryBody[];
}

/**
 * The entries of a session whose runs are `runs`, oldest first.
 *
 * @param workflowId the session's workflow id, for histories that do not record it.
 * @throws {TypeError} when a run's history is not a workflow history.
 */
export function sessionAuditEntries(
  runs: readonly AuditRun[],
  workflowId: string,
  options: AuditEntryOptions = {},
): SessionAudit {
  const audit = emptySessionAudit(workflowId);
  for (const run of runs) addRunEntries(audit, run, options);
  return audit;
}

/** A session's audit before any run is read (see {@link addRunEntries}). */
export function emptySessionAudit(workflowId: string): SessionAudit {
  return { sessionId: '', workflowId, runIds: [], entries: [] };
}

/**
 * Add the entries of the session's next run to `audit` (runs oldest first): what
 * {@link sessionAuditEntries} does for each, so a caller can read one run at a time and let
 * the history go before reading the next.
 * @throws {TypeError} when the run's history is not a workflow history.
 */
export function addRunEntries(
  audit: SessionAudit,
  run: AuditRun,
  options: AuditEntryOptions = {},
): void {
  const timeline = timelineFromHistory(run.history, {
    ...(run.storedPayloadEventIds ? { storedPayloadEventIds: run.storedPayloadEventIds } : {}),
  });
  if (audit.entries.length === 0) audit.entries.push(sessionEntry(timeline, audit.workflowId));
  if (!audit.sessionId) audit.sessionId = timeline.sessionId ?? audit.workflowId;
  const started = run.history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (started?.originalExecutionRunId) audit.runIds.push(started.originalExecutionRunId);
  for (const entry of runEntries(timeline, run.history, options)) audit.entries.push(entry);
}
