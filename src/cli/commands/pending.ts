/**
 * `durable-agent pending`: the permission requests of a session that wait for a person, read
 * through the session's worker.
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import type { PendingPermission } from '../../common/permission.js';
import { Queries } from '../../common/messages.js';
import { isNoPollerError } from '../../temporal/query.js';
import { CliError } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { isDeadline } from '../deadline.js';
import { sessionError } from '../failures.js';
import { formatTable, formatTime, truncate } from '../render.js';
import { sessionOf } from '../session-lookup.js';
import { noAnswer, workflowPollers } from '../session-worker.js';
import { describePollers } from '../workers.js';

/** `pending`: the session's requests waiting for a person. @returns the exit code. */
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
      requests = await client.workflow
        .getHandle(found.workflowId)
        .query(Queries.pendingPermissions);
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
  io.out(
    formatTable(
      ['REQUEST', 'TOOL', 'KIND', 'INPUT', 'ASKED', 'DEADLINE'],
      requests.map((r) => [
        r.requestId,
        r.toolName,
        r.toolKind,
        truncate(JSON.stringify(r.input), 60),
        formatTime(r.askedAt),
        formatTime(r.deadline),
      ]),
    ),
  );
  return 0;
}
