/**
 * What a replay's nondeterminism error says, for people: the core SDK's own message
 * without the wrapping, the history event it concerns when the message (or, for a renamed
 * activity, the history) names it, and what that event recorded, in hook terms. Pure.
 *
 * @module
 */
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { isPlainObject } from '../common/json.js';
import { collapseWhitespace } from '../common/text.js';
import { decodeFirstPayload, numberOf } from './decode.js';

/** A nondeterminism error, made readable. */
interface NondeterminismReport {
  /** The core SDK's message, e.g. `[TMPRL1100] Nondeterminism error: ...`. */
  message: string;
  /** The history event the mismatch is at, when known. */
  eventId?: number;
  /** That event's type, when known (`ActivityTaskScheduled`, ...). */
  eventType?: string;
}

/**
 * Read a `DeterminismViolationError`'s message.
 *
 * @param message the error's message (Temporal wraps the core message in a long preamble).
 * @param history the replayed history, to place mismatches the message names by activity
 *   type only (`Activity type of scheduled event 'x' does not match ...`).
 */
export function describeNondeterminism(message: string, history?: History): NondeterminismReport {
  const oneLine = collapseWhitespace(message);
  const core =
    /message: "((?:[^"\\]|\\.)*)"/.exec(oneLine)?.[1]?.replace(/\\"/g, '"') ??
    /Details: (.*)$/.exec(oneLine)?.[1] ??
    oneLine;
  const report: NondeterminismReport = { message: core };

  const named = /HistoryEvent\(\s*id:\s*(\d+)\s*,\s*(?:EventType::)?(\w+)/i.exec(oneLine);
  if (named) {
    report.eventId = Number(named[1]);
    report.eventType = named[2]!;
    return report;
  }
  const byId = /\bevent[ _]?id[:= ]+(\d+)/i.exec(oneLine);
  if (byId) {
    report.eventId = Number(byId[1]);
    return report;
  }
  const activityType = /scheduled event '([^']+)' does not match activity type/i.exec(oneLine)?.[1];
  if (activityType && history?.events) {
    const matches = history.events.filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
    );
    if (matches.length === 1) {
      report.eventId = numberOf(matches[0]!.eventId);
      report.eventType = 'ActivityTaskScheduled';
    }
  }
  return report;
}

/**
 * What the history recorded at `eventId`, in hook terms when it can say, as a suffix for a
 * sentence: ` (recorded: the PreToolUse hook dispatch #2, tool Bash, as activity
 * 'dispatchHook')`, ` (recorded: the execution of tool Bash, as activity 'executeTool')`,
 * ` (recorded WorkflowTaskCompleted)`; `''` when the history has no such event.
 */
export function describeHistoryEvent(history: History | undefined, eventId: number): string {
  const events = history?.events ?? [];
  const index = events.findIndex((e) => numberOf(e.eventId) === eventId);
  const event = events[index];
  if (!event) return '';
  const scheduled = event.activityTaskScheduledEventAttributes;
  if (!scheduled) {
    const type = Object.keys(event).find(
      (k) => k.endsWith('EventAttributes') && event[k as keyof typeof event],
    );
    return type ? ` (recorded ${type.replace(/EventAttributes$/, '')})` : '';
  }
  const activity = scheduled.activityType?.name ?? 'unknown';
  const input = decodeFirstPayload(scheduled.input);
  if (isHookDispatchInput(input)) {
    const seq = events
      .slice(0, index)
      .filter((e) =>
        isHookDispatchInput(decodeFirstPayload(e.activityTaskScheduledEventAttributes?.input)),
      ).length;
    const payload = isPlainObject(input.payload) ? input.payload : {};
    const tool = typeof payload.toolName === 'string' ? `, tool ${payload.toolName}` : '';
    return ` (recorded: the ${input.event} hook dispatch #${seq}${tool}, as activity '${activity}')`;
  }
  if (isPlainObject(input) && typeof input.toolName === 'string') {
    return ` (recorded: the execution of tool ${input.toolName}, as activity '${activity}')`;
  }
  return ` (recorded: activity '${activity}' scheduled)`;
}

/** Whether an activity's input is a hook dispatch's (`DispatchHookInput`). */
function isHookDispatchInput(
  value: unknown,
): value is Record<string, unknown> & { event: string; dispatchId: unknown } {
  return isPlainObject(value) && typeof value.event === 'string' && 'dispatchId' in value;
}
