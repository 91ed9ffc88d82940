/**
 * Whether a session's worker is there to answer (`pending`, `approve`, `deny` need it): the
 * pollers of its task queue, and the error for a worker that did not answer in time.
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import type { FoundSession } from '../history/files.js';
import { CliError } from './cli-error.js';
import type { CommandArgs } from './command-args.js';
import { isDeadline } from './deadline.js';
import { serverError, serverTimeout } from './failures.js';
import { describePollers, formatDuration, pollersOf, type QueuePollers } from './workers.js';

/**
 * The workflow pollers of `taskQueue`, looked at once the command's deadline has passed (for
 * its error message): a call of its own, bounded by 2 s; `undefined` when it fails.
 */
export async function lastLookAtPollers(
  client: Client,
  taskQueue: string,
): Promise<QueuePollers | undefined> {
  return client.connection
    .withDeadline(Date.now() + 2000, () => pollersOf(client, taskQueue, 'workflow'))
    .catch(() => undefined);
}

/** The workflow pollers of the session's task queue. */
export async function workflowPollers(
  client: Client,
  found: FoundSession,
  args: CommandArgs,
): Promise<QueuePollers> {
  try {
    return await pollersOf(client, found.description.taskQueue, 'workflow');
  } catch (error) {
    if (isDeadline(error, args)) {
      throw serverTimeout(args, `describing task queue '${found.description.taskQueue}'`, error);
    }
    throw serverError(error, args);
  }
}

/**
 * The error for a session whose worker did not answer within the deadline.
 * @param refused whether a decision was refused (nothing sent) for want of an answer.
 */
export async function noAnswer(
  client: Client,
  found: FoundSession,
  args: CommandArgs,
  error: unknown,
  refused = false,
): Promise<CliError> {
  const queue = found.description.taskQueue;
  const pollers = await lastLookAtPollers(client, queue);
  const seen = pollers ? ` (${describePollers(pollers)})` : '';
  const next = refused
    ? `nothing was sent; start the agent's worker and run ${args.command} again, or pass --wait ` +
      'to send it and wait for a worker (up to --timeout)'
    : "start the agent's worker, or pass a longer --timeout";
  return new CliError(
    `no answer from session '${found.sessionId}' within ${formatDuration(args.timeoutMs)}: ` +
      `no worker of its task queue '${queue}' answered${seen}; ${next}`,
    { cause: error },
  );
}
