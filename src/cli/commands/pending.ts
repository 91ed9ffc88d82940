/**
 * `durable-agent pending`: the permission requests of a session and of the sub-agents it runs
 * that wait for a person, read through the session's worker.
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import type { PendingPermission } from '../../common/permission.js';
import { shortDigest } from '../../common/approval-digest.js';
import { ROOT_AGENT_PATH } from '../../common/subagents.js';
import { PENDING_TREE_DEPTH, pendingTree } from '../../client/pending-tree.js';
import { isNoPollerError } from '../../temporal/query.js';
import { CliError } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { isDeadline } from '../deadline.js';
import { sessionError } from '../failures.js';
import { formatTable, formatTime, truncate } from '../render.js';
import { agentPathOf, sessionOf } from '../session-lookup.js';
import { noAnswer, workflowPollers } from '../session-worker.js';
import { describePollers } from '../workers.js';

/**
 * `pending`: the requests waiting for a person in the session and its running sub-agents.
 * @returns the exit code.
 */
export async function pending(args: CommandArgs, io: CliOutput): Promise<number> {
  return withClient(args, (client) => listPending(client, args, io));
}

async function listPending(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  const found = await sessionOf(client, args);
  let requests: PendingPermission[] = [];
  if (found.description.status.name === 'RUNNING') {
    const pollers = await workflowPollers(client, found, args);
    // The list lives in the workflow: only a worker can answer for it.
    if (pollers.count === 0) {
      throw new CliError(
        `session '${found.sessionId}' has no worker: ${describePollers(pollers)}; ` +
          "its permission requests are read through the agent's worker: start it, then run pending again",
      );
    }
    try {
      requests = await pendingTree(client, found.workflowId, PENDING_TREE_DEPTH, {
        root: { sessionId: found.sessionId, agentPath: agentPathOf(found) },
      });
    } catch (error) {
      if (isDeadline(error, args) || isNoPollerError(error)) {
        throw await noAnswer(client, found, args, error);
      }
      throw sessionError(error, args, found.sessionId);
    }
  }
  if (args.json) {
    io.out(JSON.stringify(requests, null, 2));
    return 0;
  }
  if (requests.length === 0) {
    io.out(`no pending permission requests in session '${found.sessionId}'`);
    return 0;
  }
  io.out(pendingTable(requests, found.sessionId));
  return 0;
}

/**
 * The table of `requests` listed through session `sessionId`, each with its approval digest's
 * first 12 hex digits (`-` from a worker older than digests), and a `PATH` column (the
 * asking session's path, `main/writer`) when any of them is a sub-agent's. Pure.
 */
export function pendingTable(requests: readonly PendingPermission[], sessionId: string): string {
  const nested = requests.some((r) => r.sessionId !== undefined && r.sessionId !== sessionId);
  // Only for agents with `advanced.approvals`: other tables stay as they were.
  const staged = requests.some((r) => r.stage !== undefined);
  return formatTable(
    [
      'REQUEST',
      'DIGEST',
      ...(nested ? ['PATH'] : []),
      'TOOL',
      'KIND',
      'INPUT',
      'ASKED',
      ...(staged ? ['STAGE', 'NEXT STAGE'] : []),
      'DEADLINE',
    ],
    requests.map((r) => [
      r.requestId,
      r.digest !== undefined ? shortDigest(r.digest) : '-',
      ...(nested ? [r.agentPath ?? ROOT_AGENT_PATH] : []),
      r.toolName,
      r.toolKind,
      truncate(JSON.stringify(r.input), 60),
      formatTime(r.askedAt),
      ...(staged ? stageCells(r) : []),
      formatTime(r.deadline),
    ]),
  );
}

/** A request's STAGE (`escalated to ops`) and NEXT STAGE cells (`-` without stages). */
function stageCells(r: PendingPermission): [string, string] {
  if (r.stage === undefined) return ['-', '-'];
  const to = r.stage === 'escalated' && r.escalateTo !== undefined ? ` to ${r.escalateTo}` : '';
  const next =
    r.nextStageAt === undefined || r.nextStageAt >= r.deadline ? '-' : formatTime(r.nextStageAt);
  return [`${r.stage}${to}`, next];
}
