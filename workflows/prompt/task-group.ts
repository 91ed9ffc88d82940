/**
 * A parallel group: the consecutive `Task` calls of one model step, which run side by side.
 * Their pipelines interleave, but each call checks the sub-agent limits in call order: a call
 * takes its turn once every earlier call of the group has taken its own (passed the check, or
 * ended before reaching it), and the calls let through before it count against
 * `maxConcurrent` until the group ends. Which calls are refused depends on the calls and what
 * the hooks and permission decided, never on which hook answered first. Workflow code.
 *
 * @module
 */
import { condition } from '@temporalio/workflow';
import type { ToolCall } from '../../src/common/conversation.js';

/** The `Task` calls of a group and their turns at the limit check. */
export interface TaskGroup {
  /** The group's calls, in call order. */
  readonly calls: readonly ToolCall[];
  /** The calls that had their turn. */
  readonly passed: Set<ToolCall>;
  /** Sub-agents counted against `maxConcurrent`: running when the group began, plus the group's calls let through. */
  counted: number;
}

/** A group of `calls`, begun with `running` sub-agents of the session running. */
export function taskGroupOf(calls: readonly ToolCall[], running: number): TaskGroup {
  return { calls, passed: new Set(), counted: running };
}

/**
 * Wait until every call of the group before `call` had its turn.
 * @returns how many sub-agents count against `maxConcurrent` for `call`.
 */
export async function awaitTurn(group: TaskGroup, call: ToolCall): Promise<number> {
  const earlier = group.calls.slice(0, group.calls.indexOf(call));
  if (!earlier.every((c) => group.passed.has(c))) {
    await condition(() => earlier.every((c) => group.passed.has(c)));
  }
  return group.counted;
}

/** `call` had its turn; `counted`: it was let through (it holds a place until the group ends). */
export function passTurn(group: TaskGroup, call: ToolCall, counted: boolean): void {
  if (group.passed.has(call)) return;
  group.passed.add(call);
  if (counted) group.counted++;
}
