/**
 * Finding the session a command names (a session id or its workflow id `session-<id>`) and
 * fetching its history, with the CLI's errors.
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { SessionNotFoundError } from '../common/errors.js';
import { ROOT_AGENT_PATH } from '../common/subagents.js';
import { findSessionWorkflow, type FoundSession } from '../history/files.js';
import type { CommandArgs } from './command-args.js';
import { isDeadline } from './deadline.js';
import { noSession, serverError, serverTimeout } from './failures.js';

/** The history of a session's newest run, by session id or workflow id. */
export async function fetchSessionHistory(
  client: Client,
  target: string,
  args: CommandArgs,
): Promise<{ history: History; workflowId: string }> {
  const found = await sessionOf(client, args, target);
  try {
    return {
      history: await client.workflow.getHandle(found.workflowId).fetchHistory(),
      workflowId: found.workflowId,
    };
  } catch (error) {
    if (isDeadline(error, args)) {
      throw serverTimeout(args, `reading the history of session '${found.sessionId}'`, error);
    }
    throw serverError(error, args);
  }
}

/**
 * Find the session named by the command's first argument: a session id, or its workflow id
 * `session-<id>` (what the Web UI shows).
 */
export async function sessionOf(
  client: Client,
  args: CommandArgs,
  target = args.args[0]!,
): Promise<FoundSession> {
  try {
    return await findSessionWorkflow(client, target);
  } catch (error) {
    if (error instanceof SessionNotFoundError) throw noSession(target, args);
    if (isDeadline(error, args)) {
      throw serverTimeout(args, `looking up session '${target}'`, error);
    }
    throw serverError(error, args);
  }
}

/** The path of the session `found` (`main/writer` for a sub-agent's), from its memo. */
export function agentPathOf(found: Pick<FoundSession, 'description'>): string {
  const path = found.description.memo?.agentPath;
  return typeof path === 'string' ? path : ROOT_AGENT_PATH;
}
