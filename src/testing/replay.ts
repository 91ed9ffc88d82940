/**
 * Replay of recorded session histories against the current workflow code, with failures
 * told in hook terms (which dispatch, which tool). `HookTestEnv.teardown()` runs it on every
 * session it created.
 *
 * @module
 */
import type { DataConverter } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { messageOf } from '../common/errors.js';
import { hasWorkflowTask, normalizeHistory } from '../history/decode.js';
import type { SessionHistory } from '../history/files.js';
import { describeHistoryEvent, describeNondeterminism } from '../history/nondeterminism.js';
import { workflowBundle } from '../worker/workflow-code.js';
import { installQuietRuntime } from '../worker/runtime.js';

/**
 * Replay session histories against the current workflow code (one replay worker for all).
 * A run in which no workflow task has run yet (only its start recorded) is skipped: it has
 * nothing to check.
 * `HookTestEnv.teardown()` runs this on every session it created; it is exported to replay
 * histories kept elsewhere: files (`readHistoryFile`), another server (`fetchSessionHistory`).
 *
 * @throws {Error} listing each session whose replay failed: for nondeterminism, the history
 *   event id it stopped at and what that event recorded, in hook terms when it is a hook
 *   dispatch (`PreToolUse dispatch #2, tool Bash`) or a tool execution.
 */
export async function replaySessionHistories(
  histories: readonly SessionHistory[],
  options: { dataConverter?: DataConverter } = {},
): Promise<void> {
  // Proto objects, so the failure's description can decode the payloads it names. A run no
  // workflow task has run in yet (a run just continued as new) has nothing to check, and
  // Temporal's replayer waits forever on it: it is left out.
  const entries = histories
    .map((h) => ({ ...h, history: normalizeHistory(h.history) }))
    .filter((h) => hasWorkflowTask(h.history));
  if (entries.length === 0) return;
  // The replay worker logs through Temporal's runtime: the SDK's level and one-line format,
  // not the SDK default's INFO blocks (unless the application installed a runtime itself).
  installQuietRuntime();
  const failures: string[] = [];
  const results = Worker.runReplayHistories(
    {
      workflowBundle: await workflowBundle(),
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    },
    entries.map((h) => ({ workflowId: h.workflowId, history: h.history })),
  );
  // One result per history, in order (the runs of one session share a workflow id).
  let index = 0;
  for await (const result of results) {
    const entry = entries[index++];
    if (!result.error) continue;
    failures.push(describeReplayFailure(entry, result.workflowId, result.error));
  }
  if (failures.length > 0) {
    throw new Error(
      `${failures.length} session(s) did not replay against the current workflow code:\n` +
        failures.join('\n'),
    );
  }
}

function describeReplayFailure(
  entry: SessionHistory | undefined,
  workflowId: string,
  error: unknown,
): string {
  const who = entry
    ? `session ${entry.sessionId} (workflow ${workflowId})`
    : `workflow ${workflowId}`;
  const isNondeterminism = error instanceof Error && error.name === 'DeterminismViolationError';
  const report = describeNondeterminism(messageOf(error), entry?.history);
  const kind = isNondeterminism ? 'nondeterministic replay' : 'replay failed';
  const where =
    report.eventId !== undefined
      ? ` at history event ${report.eventId}${describeHistoryEvent(entry?.history, report.eventId)}`
      : '';
  return `- ${who}: ${kind}${where}: ${report.message}`;
}
