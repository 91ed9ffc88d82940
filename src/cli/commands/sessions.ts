/**
 * `durable-agent sessions`: the sessions of the namespace, newest first, with their agent and
 * state; `--status` and `--agent` filter them.
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import { listSessionSummaries, type SessionSummary } from '../../client/list-sessions.js';
import { ConfigError } from '../../common/errors.js';
import { CliError } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { isDeadline } from '../deadline.js';
import { serverError, serverTimeout } from '../failures.js';
import { formatTable, formatTime } from '../render.js';

/** `sessions`: list the sessions, newest first. @returns the exit code. */
export async function sessions(args: CommandArgs, io: CliOutput): Promise<number> {
  return withClient(args, (client) => listSessions(client, args, io));
}

async function listSessions(client: Client, args: CommandArgs, io: CliOutput): Promise<number> {
  let rows: SessionSummary[];
  try {
    rows = await listSessionSummaries(client, args.limit ?? 50, {
      ...(args.status !== undefined ? { status: args.status } : {}),
      ...(args.agent !== undefined ? { agentName: args.agent } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, { cause: error });
    if (isDeadline(error, args)) throw serverTimeout(args, 'listing sessions', error);
    throw serverError(error, args);
  }
  if (args.json) {
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  if (rows.length === 0) {
    const filtered = [
      ...(args.status !== undefined ? [`status ${args.status}`] : []),
      ...(args.agent !== undefined ? [`agent '${args.agent}'`] : []),
    ];
    io.out(
      `no sessions${filtered.length > 0 ? ` of ${filtered.join(', ')}` : ''} in namespace '${args.namespace}'`,
    );
    return 0;
  }
  io.out(
    formatTable(
      ['SESSION', 'STATUS', 'STARTED', 'CLOSED', 'AGENT', 'STATE'],
      rows.map((r) => [
        r.sessionId,
        r.status,
        formatTime(r.startTime),
        formatTime(r.closeTime),
        r.agentName ?? '-',
        // Not agentStatus alone: a terminated or reset workflow keeps its last one.
        r.sessionStatus ?? '-',
      ]),
    ),
  );
  return 0;
}
