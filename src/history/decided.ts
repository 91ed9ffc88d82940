/**
 * What became of a permission request that no longer waits, told from the session's
 * timeline: approved or denied by whom and when, expired at its deadline, or cancelled. The
 * CLI's `approve`/`deny` and the session page say it when a person answers a request that
 * was already decided. Pure.
 *
 * @module
 */
import type { PermissionAnswer } from '../common/permission.js';
import { toolLabel } from '../common/summaries.js';
import { diffValues } from './diff.js';
import type { HistoryTimeline } from './timeline-types.js';

/** Which request: its id, and the tool call it was asked for when known (the page knows it). */
interface RequestRef {
  requestId: string;
  /** The call's `toolUseId`: finds a request that expired (its id is not in the history). */
  toolUseId?: string;
}

/**
 * One sentence saying why `ref` is not pending in the session of `timeline`: `request R
 * (Write NOTES.md) was already approved by alice@ops at 2026-11-29T20:19:47Z`, `... expired
 * at its deadline ...: denied`, `... was cancelled ...`, or, when the history says nothing
 * of it, that no such request waits (decided, expired or never asked).
 */
export function describeDecidedRequest(timeline: HistoryTimeline, ref: RequestRef): string {
  const call = askedCall(timeline, ref);
  const session = timeline.sessionId ?? timeline.workflowId ?? 'the session';
  const ask = call?.permission?.ask;
  if (!call || !ask || ask.outcome === 'waiting') {
    return (
      `no permission request '${ref.requestId}' waits in session '${session}': it was ` +
      'decided, expired or never asked'
    );
  }
  const what = `request ${ref.requestId} (${toolLabel(call.toolName, call.input)})`;
  const at = ask.waitedMs !== undefined ? ` at ${isoTime(ask.askedAt + ask.waitedMs)}` : '';
  const by = ask.by !== undefined ? ` by ${ask.by}` : '';
  switch (ask.outcome) {
    case 'approved':
      return `${what} was already approved${by}${at}`;
    case 'denied':
      return `${what} was already denied${by}${at}${ask.message ? `: "${ask.message}"` : ''}`;
    case 'expired':
      return `${what} expired at its deadline ${isoTime(ask.deadline)} with no answer: denied`;
    case 'cancelled':
      return `${what} was cancelled${at} (the prompt was aborted or the session closed) before an answer`;
  }
}

/**
 * Whether a person already answered `ref` with `answer`, the same answer as the history
 * records: `allow` with the same `updatedInput` (deeply equal, key order ignored; none both
 * times), or `deny` with the same `message` and `interrupt` (absent and `false` are the
 * same). Such an answer given again is applied once (the session's Update is deduplicated),
 * so the CLI reports it as done rather than refused. `false` for a request expired,
 * cancelled, still waiting, unknown, or answered differently.
 */
export function answeredAlike(
  timeline: HistoryTimeline,
  ref: RequestRef,
  answer: PermissionAnswer,
): boolean {
  const ask = askedCall(timeline, ref)?.permission?.ask;
  if (!ask) return false;
  if (answer.behavior === 'allow') {
    return (
      ask.outcome === 'approved' && diffValues(ask.updatedInput, answer.updatedInput) === undefined
    );
  }
  return (
    ask.outcome === 'denied' &&
    ask.message === answer.message &&
    (ask.interrupt === true) === (answer.interrupt === true)
  );
}

/** The tool call whose permission stage asked `ref`. */
function askedCall(timeline: HistoryTimeline, ref: RequestRef) {
  return (
    timeline.toolCalls.find((c) => c.permission?.ask?.requestId === ref.requestId) ??
    (ref.toolUseId !== undefined
      ? timeline.toolCalls.find((c) => c.toolUseId === ref.toolUseId && c.permission?.ask)
      : undefined)
  );
}

/** ISO 8601 UTC to the second. */
function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
