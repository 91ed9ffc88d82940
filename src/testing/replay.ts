/**
 * Replay of recorded session histories against the current workflow code, with failures
 * told in hook terms (which dispatch, which tool). `HookTestEnv.teardown()` runs it on every
 * session it created.
 *
 * @module
 */
import type { DataConverter } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { decodePayload } from '../history/timeline.js';
import { messageOf } from '../common/errors.js';
import { describeNondeterminism } from '../history/nondeterminism.js';
import { workflowBundle } from '../workflow-code.js';
import { normalizeHistory, type SessionHistory } from '../history/files.js';

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

/**
 * Whether a workflow task started in `history`: what a replay checks. A history of only
 * `WorkflowExecutionStarted` has none (and `Worker.runReplayHistories` never returns on it).
 * @internal shared with the CLI.
 */
export function hasWorkflowTask(history: History): boolean {
  return (history.events ?? []).some((e) => e.workflowTaskStartedEventAttributes);
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
      ? ` at history event ${report.eventId}${describeEvent(entry?.history, report.eventId)}`
      : '';
  return `- ${who}: ${kind}${where}: ${report.message}`;
}

/** What the history recorded at `eventId`, in hook terms when it can say. */
function describeEvent(history: History | undefined, eventId: number): string {
  const events = history?.events ?? [];
  const index = events.findIndex((e) => Number(String(e.eventId)) === eventId);
  const event = events[index];
  if (!event) return '';
  const scheduled = event.activityTaskScheduledEventAttributes;
  if (!scheduled) {
    const type = Object.keys(event).find(
      (k) => k.endsWith('EventAttributes') && event[k as keyof typeof event],
    );
    return type ? ` (recorded ${type.replace(/EventAttributes$/, '')})` : '';
  }
  const activity = scheduled.activityType?.name ?? 'unknown';
  const input = decodePayload(scheduled.input?.payloads?.[0]);
  if (isRecord(input) && typeof input.event === 'string' && 'dispatchId' in input) {
    const seq = events
      .slice(0, index)
      .filter((e) =>
        isHookDispatchInput(
          decodePayload(e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]),
        ),
      ).length;
    const payload = isRecord(input.payload) ? input.payload : {};
    const tool = typeof payload.toolName === 'string' ? `, tool ${payload.toolName}` : '';
    return ` (recorded: the ${input.event} hook dispatch #${seq}${tool}, as activity '${activity}')`;
  }
  if (isRecord(input) && typeof input.toolName === 'string') {
    return ` (recorded: the execution of tool ${input.toolName}, as activity '${activity}')`;
  }
  return ` (recorded: activity '${activity}' scheduled)`;
}

function isHookDispatchInput(value: unknown): boolean {
  return isRecord(value) && typeof value.event === 'string' && 'dispatchId' in value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
