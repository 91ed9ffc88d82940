/**
 * What a replay's nondeterminism error says, for people: the core SDK's own message
 * without the wrapping, and the history event it concerns when the message (or, for a
 * renamed activity, the history) names it. Pure.
 *
 * @module
 */
import type { History } from '@temporalio/common/lib/proto-utils.js';

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
  const oneLine = message.replace(/\s+/g, ' ').trim();
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
      report.eventId = Number(String(matches[0]!.eventId));
      report.eventType = 'ActivityTaskScheduled';
    }
  }
  return report;
}
