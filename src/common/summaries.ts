/**
 * The one-line texts Temporal's own tools show for a session: the summary of each activity
 * and timer the workflow schedules (the Web UI's timeline, `temporal workflow show`) and the
 * workflow's current details (`temporal workflow metadata`, the Web UI's "Current Details").
 * Workflow-safe and pure: no Node APIs, no clock (times are passed in).
 *
 * @module
 */
import type { JsonObject } from './json.js';
import { collapseWhitespace, cutPrefix } from './text.js';

/** Most characters of a tool's target in a summary (`Write NOTES.md`). */
const MAX_TARGET = 60;

/** Input fields that name what a call acts on, in the order looked at. */
const TARGET_FIELDS = ['file_path', 'path', 'command', 'pattern', 'url', 'query'];

/**
 * A tool call as people name it: the tool and what it acts on (`Write NOTES.md`, `Bash npm
 * test`), the first of `file_path`, `path`, `command`, `pattern`, `url`, `query` that is a
 * string, on one line and cut to 60 characters; the tool alone when none is.
 */
export function toolLabel(toolName: string, input: JsonObject | undefined): string {
  for (const field of TARGET_FIELDS) {
    const value = input?.[field];
    if (typeof value === 'string' && value.trim() !== '') {
      const target = collapseWhitespace(value).trim();
      const cut = cutPrefix(target, MAX_TARGET);
      return `${toolName} ${cut.length < target.length ? `${cut}…` : cut}`;
    }
  }
  return toolName;
}

/** `PreToolUse Read, 2 callbacks`: a hook dispatch's summary. */
export function dispatchSummary(
  event: string,
  toolName: string | undefined,
  callbackCount: number,
): string {
  const tool = toolName ? ` ${toolName}` : '';
  return `${event}${tool}, ${callbackCount} callback${callbackCount === 1 ? '' : 's'}`;
}

/** `12:01 UTC`: a time of day, UTC, to the minute. */
function clockTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 16)} UTC`;
}

/** `24 h`, `90 min`, `45 s`: a rough duration for people. */
export function roughDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  const h = Math.round(min / 60);
  return h < 72 ? `${h} h` : `${Math.round(h / 24)} d`;
}

/**
 * `waiting for approval: Write NOTES.md, asked 12:01 UTC, deadline in 24 h`: the current
 * details while a call waits for a person.
 */
export function approvalDetails(
  label: string,
  askedAt: number,
  deadline: number,
  staged?: { stage?: string; escalateTo?: string; nextStageAt?: number },
): string {
  const stage =
    staged?.stage === 'reminded'
      ? ', reminded'
      : staged?.stage === 'escalated'
        ? `, escalated${staged.escalateTo !== undefined ? ` to ${staged.escalateTo}` : ''}`
        : '';
  return (
    `waiting for approval: ${label}, asked ${clockTime(askedAt)}${stage}, ` +
    `deadline in ${roughDuration(deadline - askedAt)}`
  );
}
