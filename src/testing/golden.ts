/**
 * Golden sessions: record what a real session's hooks were given and what they decided, then
 * run the current hooks on the very same inputs (no model, no tools, no server) and report
 * every decision that changed, side by side. A hook policy change is then reviewed, or gated
 * in CI (`durable-agent golden <agent module> <folder>` exits 1 on a change, 2 on bad input).
 *
 * Each dispatch is checked on its own recorded input: when a change upstream would have
 * changed a later input (a rewritten prompt, a skipped tool), the later dispatch is still
 * judged on what the recorded session gave it.
 *
 * @module
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { AssertionError } from 'node:assert';
import { dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { decodeFirstPayload } from '../history/decode.js';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { ConfigError, messageOf } from '../common/errors.js';
import type { HookEvent } from '../common/hook-events.js';
import { isHookEvent } from '../common/hook-events.js';
import { VERSION_REFUSAL_TYPE } from '../common/identity.js';
import { mergeHookOutputs } from '../common/hook-rules.js';
import { runHookCallbacks } from '../definition/hook-runner.js';
import type { JsonObject, JsonValue } from '../common/json.js';
import {
  ActivityNames,
  type DispatchHookInput,
  type HookDispatchOutcome,
} from '../common/activity-io.js';
import type { HookCallback, HookMap } from '../common/types.js';
import type { SessionLineage } from '../common/workflow-io.js';
import { callbacksOfDefinition, type DefinitionHooks } from '../definition/registry.js';

/** Format tag of a recording file. */
export const GOLDEN_FORMAT = 'durable-agent-golden/1';

/** How one dispatch was decided, in terms a reviewer reads. */
export interface GoldenDecision {
  /** `continue`, `skip`, `abort`, or how the dispatch failed: `error`, `timeout`. */
  action: string;
  /** 0-based callback that decided (skip/abort) or failed. */
  decidedBy?: number;
  /** The deciding callback's reason, or the failure's message. */
  reason?: string;
  /** The merged `modifiedInput`, when any callback gave one. */
  modifiedInput?: JsonObject;
  /** The last `modifiedOutput` given (`null` included), when any callback gave one. */
  modifiedOutput?: JsonValue;
}

/** One recorded dispatch: the event's input as the callbacks got it, and the decision. */
export interface GoldenDispatch {
  /** 0-based position of the dispatch in the recording (every run, oldest first). */
  seq: number;
  /** The hook event dispatched. */
  event: HookEvent;
  /** The tool's name, for tool events. */
  toolName?: string;
  /** The event's fields beyond `event`, `sessionId` and `abortSignal`. */
  payload: JsonObject;
  /** The dispatch's time budget, ms; the check gives the current hooks the same. */
  budgetMs: number;
  /** What the recorded session's hooks decided. */
  decision: GoldenDecision;
  /**
   * The version whose definition decided (the session's: only a worker of that version runs
   * its dispatches). Absent in sessions from before versions.
   */
  version?: string;
  /**
   * A sub-agent's dispatch only: the sub-agent's session id (the recording's `sessionId` is
   * the top session's).
   */
  sessionId?: string;
  /**
   * A sub-agent's dispatch only: the session's lineage as recorded. `subagent` picks the
   * callbacks (its own hooks, or the agent's it inherits); `parentSessionId`, `agentPath` and
   * `depth` are given to them, as they were live.
   */
  lineage?: SessionLineage;
}

/** A recording file's content. */
export interface GoldenSession {
  /** The file format, {@link GOLDEN_FORMAT}. */
  format: typeof GOLDEN_FORMAT;
  /** The recorded session's id. */
  sessionId: string;
  /** When the recording was made, ISO 8601. */
  recordedAt: string;
  /**
   * Every hook dispatch of the session, in order; a sub-agent's (a `Task` call's child
   * session) where its session started, before its parent's dispatches that followed.
   */
  dispatches: GoldenDispatch[];
}

/** One decision that changed. */
export interface GoldenChange {
  /** The dispatch's `seq` in the recording. */
  seq: number;
  /** The hook event dispatched. */
  event: HookEvent;
  /** The tool's name, for tool events. */
  toolName?: string;
  /** A sub-agent's dispatch only: its path (`main/researcher`). */
  agentPath?: string;
  /** A sub-agent's dispatch only: its session id. */
  sessionId?: string;
  /** The recorded decision. */
  before: GoldenDecision;
  /** The current hooks' decision on the same input. */
  after: GoldenDecision;
}

/** What {@link checkGoldenSession} found. */
export interface GoldenReport {
  /** The recorded session's id. */
  sessionId: string;
  /** Dispatches checked. */
  checked: number;
  /** The decisions that changed, in recording order (empty when none did). */
  changes: GoldenChange[];
}

/**
 * Build a recording from a session's histories (every run, oldest first; `env.histories()`):
 * each `dispatchHook` activity's input and its decision. With `subagents` (the histories of
 * the sub-agent sessions it started, by workflow id: {@link fetchSubagentHistories}), each
 * sub-agent's dispatches too, where its session started.
 */
export function goldenFromHistories(
  sessionId: string,
  histories: readonly History[],
  subagents: ReadonlyMap<string, readonly History[]> = new Map(),
): GoldenSession {
  const dispatches: GoldenDispatch[] = [];
  collectDispatches(histories, subagents, dispatches);
  return { format: GOLDEN_FORMAT, sessionId, recordedAt: new Date().toISOString(), dispatches };
}

/** Append the dispatches of `histories` (and of the sub-agents they started) to `dispatches`. */
function collectDispatches(
  histories: readonly History[],
  subagents: ReadonlyMap<string, readonly History[]>,
  dispatches: GoldenDispatch[],
): void {
  for (const history of histories) {
    const scheduled = new Map<string, DispatchHookInput>();
    for (const event of history.events ?? []) {
      const child = event.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
      if (child?.workflowId) {
        const childHistories = subagents.get(child.workflowId);
        if (childHistories) collectDispatches(childHistories, subagents, dispatches);
        continue;
      }
      const attrs = event.activityTaskScheduledEventAttributes;
      if (attrs?.activityType?.name === ActivityNames.dispatchHook) {
        const input = decodeFirstPayload<DispatchHookInput>(attrs.input);
        if (input) scheduled.set(String(event.eventId), input);
        continue;
      }
      const completed = event.activityTaskCompletedEventAttributes;
      const failed =
        event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
      const scheduledId = String(completed?.scheduledEventId ?? failed?.scheduledEventId ?? '');
      const input = scheduled.get(scheduledId);
      if (!input) continue;
      scheduled.delete(scheduledId);
      // Refused by a worker of another version: nothing ran, nothing was decided (the
      // attempt scheduled again, or none, tells what happened).
      if (failed?.failure?.applicationFailureInfo?.type === VERSION_REFUSAL_TYPE) continue;
      const outcome = completed
        ? decodeFirstPayload<HookDispatchOutcome>(completed.result)
        : undefined;
      dispatches.push({
        seq: dispatches.length,
        event: input.event,
        ...(typeof input.payload.toolName === 'string' ? { toolName: input.payload.toolName } : {}),
        payload: input.payload,
        budgetMs: input.budgetMs,
        ...(typeof input.version === 'string' ? { version: input.version } : {}),
        ...(input.lineage ? { sessionId: input.sessionId, lineage: input.lineage } : {}),
        decision: outcome
          ? decisionOf(outcome)
          : { action: 'error', reason: 'the dispatch activity failed' },
      });
    }
  }
}

/**
 * The histories of every sub-agent session that `histories` started (their `Task` calls'
 * child workflows, and theirs in turn), by workflow id, for {@link goldenFromHistories}.
 * @param fetchRuns reads one workflow's histories, every run oldest first, payloads decoded.
 * @throws what `fetchRuns` throws.
 */
export async function fetchSubagentHistories(
  histories: readonly History[],
  fetchRuns: (workflowId: string) => Promise<History[]>,
): Promise<Map<string, History[]>> {
  const found = new Map<string, History[]>();
  const visit = async (runs: readonly History[]): Promise<void> => {
    for (const history of runs) {
      for (const event of history.events ?? []) {
        const id =
          event.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
        if (!id || found.has(id)) continue;
        const child = await fetchRuns(id);
        found.set(id, child);
        await visit(child);
      }
    }
  };
  await visit(histories);
  return found;
}

/** Options of {@link checkGoldenSession}. */
export interface CheckGoldenOptions {
  /**
   * The sub-agents of the definition checked, by name (`advanced.subagents.agents`): a
   * sub-agent's dispatch is run through its own hooks, or the agent's when it inherits them.
   * A sub-agent's dispatch whose sub-agent is not here decides `error`.
   * @default none
   */
  subagents?: DefinitionHooks['subagents'];
}

/**
 * Write a recording as pretty JSON, creating the file's folder when missing.
 * @throws what `node:fs` throws when the file cannot be written.
 */
export function writeGoldenSession(file: string, golden: GoldenSession): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(golden, null, 2)}\n`);
}

/**
 * Read and check a recording file.
 * @throws {ConfigError} naming the file and what is wrong with it (not JSON, another format,
 *   a dispatch without an event or payload).
 */
export function readGoldenSession(file: string): GoldenSession {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(
      `Golden recording ${file} is not readable JSON: ${(error as Error).message}`,
    );
  }
  const golden = parsed as Partial<GoldenSession>;
  if (golden?.format !== GOLDEN_FORMAT) {
    throw new ConfigError(
      `Golden recording ${file} has format ${JSON.stringify(golden?.format)}; expected '${GOLDEN_FORMAT}'`,
    );
  }
  if (!Array.isArray(golden.dispatches)) {
    throw new ConfigError(`Golden recording ${file} has no dispatches array`);
  }
  golden.dispatches.forEach((d, i) => {
    const where = `Golden recording ${file}, dispatch ${i}`;
    if (!isHookEvent(d?.event))
      throw new ConfigError(`${where}: unknown event ${JSON.stringify(d?.event)}`);
    if (typeof d.payload !== 'object' || d.payload === null)
      throw new ConfigError(`${where}: payload must be an object`);
    if (typeof d.decision?.action !== 'string')
      throw new ConfigError(`${where}: decision.action is missing`);
    if (typeof d.budgetMs !== 'number' || d.budgetMs <= 0)
      throw new ConfigError(`${where}: budgetMs must be a positive number`);
  });
  return golden as GoldenSession;
}

/**
 * Run `hooks` (the current callbacks) on every recorded dispatch and compare decisions.
 * Callbacks run in order on a fresh copy of the recorded input, within the recorded budget,
 * with their outputs validated and merged by the same rules as a live session. Events the
 * current hooks have no callbacks for decide `continue` (nothing would be dispatched).
 */
export async function checkGoldenSession(
  golden: GoldenSession,
  hooks: HookMap,
  options: CheckGoldenOptions = {},
): Promise<GoldenReport> {
  const changes: GoldenChange[] = [];
  for (const dispatch of golden.dispatches) {
    let after: GoldenDecision;
    try {
      const definition = { hooks, ...(options.subagents ? { subagents: options.subagents } : {}) };
      const callbacks = callbacksOfDefinition(definition, dispatch.event, dispatch.lineage);
      after = await decideDispatch(dispatch, callbacks, golden.sessionId);
    } catch (error) {
      after = { action: 'error', reason: messageOf(error) };
    }
    if (!sameDecision(dispatch.decision, after)) {
      changes.push({ ...whereOf(dispatch), before: dispatch.decision, after });
    }
  }
  return { sessionId: golden.sessionId, checked: golden.dispatches.length, changes };
}

/**
 * {@link checkGoldenSession}, as an assertion for any test runner.
 * @throws {AssertionError} listing every changed decision side by side.
 */
export async function assertGoldenSession(
  golden: GoldenSession,
  hooks: HookMap,
  options: CheckGoldenOptions = {},
): Promise<void> {
  const report = await checkGoldenSession(golden, hooks, options);
  if (report.changes.length === 0) return;
  const error = new AssertionError({
    message: `${report.changes.length} of ${report.checked} hook decisions changed in golden session ${report.sessionId}:\n${formatGoldenChanges(report.changes)}`,
    actual: report.changes.map((c) => c.after),
    expected: report.changes.map((c) => c.before),
    operator: 'deepStrictEqual',
  });
  throw error;
}

/**
 * The changes as a table: dispatch (with a sub-agent's path after its number), event, tool,
 * before, after.
 */
export function formatGoldenChanges(changes: readonly GoldenChange[]): string {
  const show = (d: GoldenDecision) => {
    // People count callbacks from 1, as `inspect` and the worker's log lines do.
    const by = d.decidedBy !== undefined ? ` by callback #${d.decidedBy + 1}` : '';
    const reason = d.reason !== undefined ? `: ${d.reason}` : '';
    const input = d.modifiedInput !== undefined ? ` input=${JSON.stringify(d.modifiedInput)}` : '';
    const output =
      d.modifiedOutput !== undefined ? ` output=${JSON.stringify(d.modifiedOutput)}` : '';
    return `${d.action}${by}${reason}${input}${output}`;
  };
  const rows = changes.map((c) => [
    `#${c.seq}${c.agentPath !== undefined ? ` ${c.agentPath}` : ''}`,
    c.event,
    c.toolName ?? '-',
    show(c.before),
    show(c.after),
  ]);
  const header = ['dispatch', 'event', 'tool', 'before', 'after'];
  const widths = header.map((h, i) =>
    Math.min(60, Math.max(h.length, ...rows.map((r) => r[i]!.length))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * The decision `callbacks` make on a recorded dispatch's input: run as the dispatch activity
 * runs them ({@link runHookCallbacks}), within the recorded budget, merged by the contract's
 * rules. No callbacks: `continue` (nothing would be dispatched).
 * @internal shared with the deploy gate.
 */
export async function decideDispatch(
  dispatch: Pick<GoldenDispatch, 'event' | 'payload' | 'budgetMs' | 'sessionId' | 'lineage'>,
  callbacks: readonly HookCallback[],
  sessionId: string,
): Promise<GoldenDecision> {
  if (callbacks.length === 0) return { action: 'continue' };
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), dispatch.budgetMs);
  });
  const run = runHookCallbacks(
    callbacks,
    {
      payload: dispatch.payload,
      event: dispatch.event,
      sessionId: dispatch.sessionId ?? sessionId,
      ...(dispatch.lineage ? { lineage: dispatch.lineage } : {}),
    },
    controller.signal,
  );
  try {
    const result = await Promise.race([run.outputs, deadline]);
    if (result === 'timeout') {
      controller.abort(new Error(`budget of ${dispatch.budgetMs} ms passed`));
      return {
        action: 'timeout',
        reason: `Hook ${dispatch.event} exceeded ${dispatch.budgetMs}ms`,
      };
    }
    const outputs = result;
    return decisionOf(
      { status: 'completed', outputs, callbackCount: callbacks.length, durationMs: 0 },
      mergeHookOutputs(outputs),
    );
  } catch (error) {
    return {
      action: 'error',
      decidedBy: run.index,
      reason: messageOf(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Where a dispatch is, as changes and the gate name it: its `seq`, event and tool, and a
 * sub-agent's path and session.
 * @internal shared with the deploy gate.
 */
export function whereOf(
  dispatch: GoldenDispatch,
): Pick<GoldenChange, 'seq' | 'event' | 'toolName' | 'agentPath' | 'sessionId'> {
  return {
    seq: dispatch.seq,
    event: dispatch.event,
    ...(dispatch.toolName !== undefined ? { toolName: dispatch.toolName } : {}),
    ...(dispatch.lineage
      ? { agentPath: dispatch.lineage.agentPath, sessionId: dispatch.sessionId ?? '' }
      : {}),
  };
}

function decisionOf(
  outcome: HookDispatchOutcome,
  merged = outcome.status === 'completed' ? mergeHookOutputs(outcome.outputs) : undefined,
): GoldenDecision {
  if (outcome.status === 'error') {
    return { action: 'error', decidedBy: outcome.callbackIndex, reason: outcome.error.message };
  }
  if (outcome.status === 'timeout') return { action: 'timeout' };
  const m = merged!;
  return {
    action: m.action,
    ...(m.decidedBy !== undefined ? { decidedBy: m.decidedBy } : {}),
    ...(m.reason !== undefined ? { reason: m.reason } : {}),
    ...(m.modifiedInput !== undefined ? { modifiedInput: m.modifiedInput as JsonObject } : {}),
    ...(m.hasModifiedOutput ? { modifiedOutput: (m.modifiedOutput ?? null) as JsonValue } : {}),
  };
}

/**
 * Whether two decisions are the same: timeouts by action only (the recorded reason names the
 * live budget), errors by action and failing callback (messages carry stacks and ids).
 * @internal shared with the deploy gate.
 */
export function sameDecision(before: GoldenDecision, after: GoldenDecision): boolean {
  if (before.action === 'timeout' || after.action === 'timeout')
    return before.action === after.action;
  if (before.action === 'error' || after.action === 'error') {
    return before.action === after.action && before.decidedBy === after.decidedBy;
  }
  return isDeepStrictEqual(before, after);
}
