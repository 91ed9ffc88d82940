/**
 * `durable-agent replay`: a session's history (fetched, or a history file) replayed against the
 * current workflow code: deterministic or not, and where.
 *
 * @module
 */
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { messageOf } from '../../common/errors.js';
import { sessionWorkflowId } from '../../common/workflow-io.js';
import { hasWorkflowTask, sessionIdOfHistory } from '../../history/decode.js';
import { describeNondeterminism } from '../../history/nondeterminism.js';
import { resolveLogLevel } from '../../temporal/logging.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { withClient } from '../client.js';
import { decodedHistory, payloadDataConverter } from '../history-codecs.js';
import { isHistoryFile, loadHistoryFile } from '../history-files.js';
import { fetchSessionHistory } from '../session-lookup.js';

/**
 * `replay`: the history against the current workflow code.
 * @returns 0 when deterministic, 1 when not.
 */
export async function replay(args: CommandArgs, io: CliOutput): Promise<number> {
  const target = args.args[0]!;
  let history: History;
  let workflowId: string;
  if (isHistoryFile(target)) {
    history = await decodedHistory(loadHistoryFile(target), args, target);
    const sessionId = sessionIdOfHistory(history);
    workflowId = sessionId !== undefined ? sessionWorkflowId(sessionId) : target;
  } else {
    ({ history, workflowId } = await withClient(args, (client) =>
      fetchSessionHistory(client, target, args),
    ));
    // Decoded here, not by the replayer: a payload that does not open is a clear error
    // naming its key id, not a workflow task failure.
    history = await decodedHistory(history, args, target);
  }
  if (!hasWorkflowTask(history)) {
    // Temporal's replayer would wait forever on it.
    io.out('deterministic: yes (no workflow task has run yet: nothing to replay)');
    return 0;
  }
  // Loaded here: the worker's native runtime costs startup time other commands need not pay.
  const [{ Worker }, { workflowBundle }] = await Promise.all([
    import('@temporalio/worker'),
    import('../../worker/workflow-code.js'),
  ]);
  await installReplayRuntime();
  try {
    await Worker.runReplayHistory(
      { workflowBundle: await workflowBundle(), dataConverter: await payloadDataConverter(args) },
      history,
      workflowId,
    );
  } catch (error) {
    const name = (error as { name?: unknown } | undefined)?.name;
    if (name === 'DeterminismViolationError') {
      const report = describeNondeterminism(messageOf(error), history);
      io.out('deterministic: NO');
      io.out(
        report.eventId !== undefined
          ? `  where: history event ${report.eventId}${report.eventType ? ` (${report.eventType})` : ''}`
          : '  where: not named by the error',
      );
      io.out(`  why: ${report.message}`);
      return 1;
    }
    throw new CliError(`replay of ${target} failed: ${oneLine(error)}`, { cause: error });
  }
  io.out('deterministic: yes');
  return 0;
}

/**
 * Replay runs a worker: Temporal's own lines at ERROR, one line each, unless
 * `DURABLE_AGENT_LOG_LEVEL` asks for more.
 * @throws {ConfigError} when `DURABLE_AGENT_LOG_LEVEL` is not a level.
 */
async function installReplayRuntime(): Promise<void> {
  // Loaded here, as the worker is: its native runtime costs startup time other commands need not pay.
  const { installQuietRuntime } = await import('../../worker/runtime.js');
  installQuietRuntime(resolveLogLevel(undefined, process.env, 'ERROR'));
}
