/**
 * The walk of a session's sub-agent tree through histories: from a timeline's `Task` calls
 * down to the timelines of the sub-agents they started, and theirs, depth-limited. The CLI's
 * `inspect` and the session page share it, each reading a child's history its own way and
 * keeping its own shape of the result.
 *
 * @module
 */
import type { HistoryTimeline } from './timeline-types.js';
import type { HistoryChildSession, HistoryToolCall } from './tool-calls.js';

/** How {@link walkSubagentTree} reads and hands over each sub-agent's timeline. */
interface SubagentTreeWalk<T extends HistoryTimeline> {
  /** The timeline of one sub-agent, read from its history; what it throws ends the walk. */
  read: (child: HistoryChildSession) => Promise<T>;
  /**
   * Called with each sub-agent's timeline once read, before the walk goes down into it:
   * `parent` is the timeline whose `call` started it.
   */
  visit: (parent: T, call: HistoryToolCall, child: HistoryChildSession, timeline: T) => void;
  /**
   * Read the sub-agents of one timeline side by side, else one after the other, in the order
   * of their calls.
   * @default false
   */
  concurrent?: boolean;
}

/**
 * Walk the sub-agents `timeline`'s `Task` calls started, and theirs, down to `depthLeft`
 * levels (0: none). A call's sub-agent is skipped when it was not started, or its start
 * names no workflow to read.
 * @throws what `read` throws.
 */
export async function walkSubagentTree<T extends HistoryTimeline>(
  timeline: T,
  depthLeft: number,
  walk: SubagentTreeWalk<T>,
): Promise<void> {
  if (depthLeft <= 0) return;
  const down = async (call: HistoryToolCall, child: HistoryChildSession): Promise<void> => {
    const read = await walk.read(child);
    walk.visit(timeline, call, child, read);
    await walkSubagentTree(read, depthLeft - 1, walk);
  };
  const started = timeline.toolCalls.flatMap((call) =>
    call.child?.workflowId && call.child.status !== 'not_started'
      ? [{ call, child: call.child }]
      : [],
  );
  if (walk.concurrent) {
    await Promise.all(started.map(({ call, child }) => down(call, child)));
    return;
  }
  for (const { call, child } of started) await down(call, child);
}
