/**
 * What the demo prints about a session, read from its Temporal history: which dispatches
 * really changed what they were given (`continue (output modified)`), and where a raw value
 * the hooks kept from the model still sits in the history.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { HookEvent } from '../../src/common/hook-events.js';
import { modelTextOf } from '../../src/common/hook-rules.js';
import { isPlainObject } from '../../src/common/json.js';
import type { TimelineEntry } from '../../src/common/workflow-io.js';
import type { GoldenSession } from '../../src/testing/golden.js';

/** What a `continue` dispatch changed, as the demo shows it after the outcome. */
export type DispatchChange = 'prompt modified' | 'input modified' | 'output modified';

/**
 * The changes each dispatch of `golden` made, by {@link dispatchKey}. A callback that
 * returns `modifiedOutput` (or `modifiedInput`) equal to what it was given changed nothing,
 * and is not listed: the seed's redaction recipe returns the output of every Read, redacted
 * or not.
 */
export function changesOf(golden: GoldenSession): Map<string, DispatchChange> {
  const changes = new Map<string, DispatchChange>();
  const seen = new Map<HookEvent, number>();
  for (const dispatch of golden.dispatches) {
    const nth = seen.get(dispatch.event) ?? 0;
    seen.set(dispatch.event, nth + 1);
    const { decision, payload } = dispatch;
    if (decision.action !== 'continue') continue;
    const key = keyOf(dispatch.event, payload.toolUseId, nth);
    let change: DispatchChange | undefined;
    switch (dispatch.event) {
      case HookEvent.UserPromptSubmit: {
        const text = decision.modifiedInput?.userPrompt;
        if (typeof text === 'string' && text !== payload.userPrompt) change = 'prompt modified';
        break;
      }
      case HookEvent.PreToolUse:
      case HookEvent.PermissionRequest: {
        const before = isPlainObject(payload.toolInput) ? payload.toolInput : {};
        const after = { ...before, ...decision.modifiedInput };
        if (decision.modifiedInput && !isDeepStrictEqual(after, before)) change = 'input modified';
        break;
      }
      case HookEvent.PostToolUse:
      case HookEvent.PostToolUseFailure:
        if (
          decision.modifiedOutput !== undefined &&
          modelTextOf(decision.modifiedOutput) !== payload.toolOutput
        ) {
          change = 'output modified';
        }
        break;
      default:
        break;
    }
    if (change) changes.set(key, change);
  }
  return changes;
}

/**
 * The key of the timeline entry at `index` in {@link changesOf}'s map: a tool event by its
 * call's `toolUseId`, any other event by how many dispatches of it the history holds before
 * it (a dispatch refused while fail-closed schedules nothing, so it is not counted).
 */
export function dispatchKey(timeline: readonly TimelineEntry[], index: number): string {
  const entry = timeline[index]!;
  const nth = timeline
    .slice(0, index)
    .filter((e) => e.event === entry.event && e.outcome !== 'refused').length;
  return keyOf(entry.event, entry.toolUseId, nth);
}

function keyOf(event: HookEvent, toolUseId: unknown, nth: number): string {
  return typeof toolUseId === 'string' ? `${event}:${toolUseId}` : `${event}#${nth}`;
}

/** One line of the demo's hook log. */
export function describeEntry(entry: TimelineEntry, change?: DispatchChange): string {
  let decision =
    entry.decidedBy !== undefined
      ? `${entry.outcome} (callback #${entry.decidedBy + 1})`
      : entry.outcome;
  if (change) decision += ` (${change})`;
  const reason = entry.reason ? `  ${entry.reason.slice(0, 70)}` : '';
  return `  hook ${entry.event.padEnd(18)} ${(entry.toolName ?? '').padEnd(6)} ${decision.padEnd(26)} ${entry.durationMs.toFixed(1).padStart(6)} ms${reason}`;
}

/**
 * Where `text` occurs in the payloads of a history's activities: `'<activity> result'` or
 * `'<activity> input'`, each once, in order of first occurrence. Payloads are searched as
 * stored (JSON, not offloaded), which is how the demo's small values are kept.
 */
export function activityPayloadsHolding(history: History, text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  const typeByScheduledId = new Map<string, string>();
  const found: string[] = [];
  const note = (
    where: string,
    payloads: Array<{ data?: Uint8Array | null }> | null | undefined,
  ) => {
    const holds = (payloads ?? []).some((p) => p.data && Buffer.from(p.data).includes(needle));
    if (holds && !found.includes(where)) found.push(where);
  };
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name ?? 'activity';
      typeByScheduledId.set(String(event.eventId), type);
      note(`${type} input`, scheduled.input?.payloads);
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const type = typeByScheduledId.get(String(completed.scheduledEventId)) ?? 'activity';
      note(`${type} result`, completed.result?.payloads);
    }
  }
  return found;
}
