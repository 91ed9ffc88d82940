/**
 * `durable-agent inspect`: a session's hook timeline, rebuilt from its Temporal history
 * (fetched, or a history file), with the timeline of each sub-agent its `Task` calls started
 * under the call (fetched from the server; a history file shows the call's line only).
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { storedPayloadEventIds } from '../../history/decode.js';
import { walkSubagentTree } from '../../history/subagent-tree.js';
import { timelineFromHistory } from '../../history/timeline.js';
import type { HistoryTimeline } from '../../history/timeline-types.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { isDeadline } from '../deadline.js';
import { serverError, serverTimeout } from '../failures.js';
import { decodedHistory } from '../history-codecs.js';
import { isHistoryFile, loadHistoryFile } from '../history-files.js';
import { renderTimeline } from '../render.js';
import { fetchSessionHistory } from '../session-lookup.js';

/** Deepest sub-agent level shown (`advanced.subagents.maxDepth` is at most 4). */
const MAX_SUBAGENT_DEPTH = 4;

/** A timeline, with those of the sub-agents its `Task` calls started. */
type InspectedTimeline = HistoryTimeline & {
  /** Each sub-agent's timeline, by the `Task` call's tool use id (`--json` only). */
  subagents?: Record<string, InspectedTimeline>;
};

/** `inspect`: the hook timeline of a session or history file. @returns the exit code. */
export async function inspect(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0]!;
  let inspected: InspectedTimeline;
  if (isHistoryFile(target)) {
    inspected = await timelineOf(loadHistoryFile(target), args, target);
  } else {
    inspected = await withClient(args, async (client) => {
      const { history } = await fetchSessionHistory(client, target, args);
      const timeline: InspectedTimeline = await timelineOf(history, args, target);
      await addSubagents(client, args, timeline, MAX_SUBAGENT_DEPTH);
      return timeline;
    });
  }
  io.out(args.json ? JSON.stringify(inspected, null, 2) : renderInspected(inspected));
  return 0;
}

/** The timeline of `recorded`, its payloads decoded. */
async function timelineOf(
  recorded: History,
  args: CommandArgs,
  target: string,
): Promise<HistoryTimeline> {
  const history = await decodedHistory(recorded, args, target);
  try {
    return timelineFromHistory(history, { storedPayloadEventIds: storedPayloadEventIds(recorded) });
  } catch (error) {
    throw new CliError(`${target}: ${oneLine(error)}`, { cause: error });
  }
}

/** Fetch the timeline of each sub-agent of `timeline`, and theirs, `depthLeft` levels down. */
async function addSubagents(
  client: Client,
  args: CommandArgs,
  timeline: InspectedTimeline,
  depthLeft: number,
): Promise<void> {
  await walkSubagentTree<InspectedTimeline>(timeline, depthLeft, {
    read: async (child) => {
      let history: History;
      try {
        history = await client.workflow.getHandle(child.workflowId).fetchHistory();
      } catch (error) {
        if (isDeadline(error, args)) {
          throw serverTimeout(args, `reading the history of sub-agent ${child.agentPath}`, error);
        }
        throw serverError(error, args);
      }
      return timelineOf(history, args, child.sessionId);
    },
    visit: (parent, call, _child, childTimeline) => {
      (parent.subagents ??= {})[call.toolUseId] = childTimeline;
    },
  });
}

/** The text view: the session's, then each sub-agent's indented under its parent. */
function renderInspected(timeline: InspectedTimeline, indent = ''): string {
  const out = [indentLines(renderTimeline(timeline), indent)];
  for (const call of timeline.toolCalls) {
    const child = call.child;
    const childTimeline = timeline.subagents?.[call.toolUseId];
    if (!child || !childTimeline) continue;
    out.push('');
    out.push(`${indent}  sub-agent ${child.agentPath} (Task call ${call.toolUseId}):`);
    out.push(renderInspected(childTimeline, `${indent}    `));
  }
  return out.join('\n');
}

function indentLines(text: string, indent: string): string {
  if (!indent) return text;
  return text
    .split('\n')
    .map((line) => (line ? indent + line : line))
    .join('\n');
}
