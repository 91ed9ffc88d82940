/**
 * The deploy gate: before a new agent definition is deployed, replay the hook inputs that
 * recent sessions of the running version recorded through the new definition's callbacks,
 * and list every decision that would flip, per session (`durable-agent gate`, exit 1 on a
 * flip).
 *
 * What it compares: every recorded `dispatchHook` of a session (its event, payload and
 * budget, as the worker gave them to the callbacks) is run through the new definition's
 * callbacks for that event, exactly as a worker runs them (the dispatch activity's loop,
 * `src/definition/hook-runner.ts`; outputs checked and merged by `src/common/hook-rules.ts`),
 * and the merged decision (`continue` / `skip` / `abort`, the deciding callback and its
 * reason, the merged `modifiedInput`, the last `modifiedOutput`; for a failure, `error` or
 * `timeout` and the failing callback) is compared with the recorded one, as
 * {@link checkGoldenSession} compares them.
 *
 * Permission checks: a session whose policy was a permission function recorded each check
 * (`checkPermission`: tool, input, kind, affected paths, and the answer); each is judged
 * again by the new definition's policy (its function, called for real, within
 * `hookTimeoutMs`; or its preset, on the recorded kind) and a different answer (behavior,
 * message, `updatedInput`, `interrupt`) is a flip. Presets decide in workflow code and record
 * no check: a session of a preset policy is not replayed, but a policy that changed (the
 * manifest's `preset:default` against the new `preset:plan`, say) is named in the report.
 * Session permission functions (`SessionOptions.permissionHandler`) are not compared.
 *
 * What it does not: tools and the model never run; each dispatch is
 * judged on its own recorded input (a flip upstream that would have changed a later input is
 * not followed). Session-level hooks (`SessionOptions.hooks`) live only in the process that
 * created the session: dispatches of events a session had some for are not compared (listed
 * as such). Nor are dispatches with no decision recorded (the activity failed, its worker was
 * lost), nor dispatches another version decided (a session upgraded mid-way).
 *
 * Callbacks are called for real, with the recorded input: a callback with side effects (an
 * audit log, a notification, a cleanup in SessionEnd) has them during a gate run. Keep such
 * events out with `events`, or make those callbacks idempotent.
 *
 * @module
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { optionalTsToDate } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import type { AgentOptions } from '../definition/options.js';
import { resolveAgentOptions } from '../definition/resolve.js';
import type { AgentClient } from '../client/client.js';
import { ConfigError, messageOf } from '../common/errors.js';
import { ALL_HOOK_EVENTS, isHookEvent, type HookEvent } from '../common/hook-events.js';
import {
  ActivityNames,
  SESSION_WORKFLOW,
  sessionIdOfWorkflowId,
  type CheckPermissionInput,
  type CheckPermissionOutput,
  type SessionWorkflowInput,
} from '../common/protocol.js';
import {
  normalizePermission,
  presetDecision,
  type PermissionHandler,
  type PermissionPreset,
  type PermissionResult,
} from '../common/permission.js';
import type { HookMap } from '../common/types.js';
import { isDeepStrictEqual } from 'node:util';
import { decodeFirstPayload, decodeHistoryPayloads } from '../history/decode.js';
import { fetchRunHistories } from '../history/files.js';
import {
  decideDispatch,
  formatGoldenChanges,
  goldenFromHistories,
  sameDecision,
  type GoldenChange,
  type GoldenDispatch,
  type GoldenSession,
} from './golden.js';

/** Default of {@link GateOptions.limit}: sessions checked at most. */
export const GATE_DEFAULT_LIMIT = 50;

/** Options of {@link gateDeploy}. */
export interface GateOptions {
  /**
   * The new definition: the options the deploy passes to `createAgent` (the module's default
   * export, for the CLI). Its `name` (default `'default'`) selects the sessions; its hooks
   * decide.
   */
  agent: AgentOptions;
  /**
   * Where the sessions are: a Temporal `Client` whose data converter reads them (with the
   * encryption codec for encrypted sessions), or an `AgentClient` (its `temporal` client,
   * with the agent's codecs).
   */
  client: Client | AgentClient;
  /**
   * The running version, whose sessions are replayed.
   * @default the version of the most recent session of the agent the server lists (open
   *   sessions first, then by close time)
   */
  version?: string;
  /** Only sessions started at or after this time. @default no bound */
  since?: Date;
  /** At most this many sessions (the most recent). @default {@link GATE_DEFAULT_LIMIT} */
  limit?: number;
  /** Only dispatches of these events are replayed (others are not compared). @default every event */
  events?: readonly HookEvent[];
}

/** A recorded dispatch that was not replayed, and why. */
export interface GateUncompared {
  /** The dispatch's position in the session (as `inspect` counts, across runs). */
  seq: number;
  event: HookEvent;
  toolName?: string;
  why: string;
}

/** A permission answer as the gate compares it: the policy's result, or how it failed. */
export type GatePermissionAnswer = PermissionResult | { behavior: 'error'; message: string };

/** A permission check recorded by a session (a permission function's `checkPermission`). */
export interface GatePermissionCheck {
  toolUseId: string;
  toolName: string;
  /** What the policy was given. */
  request: Pick<CheckPermissionInput, 'toolName' | 'input' | 'kind' | 'affectedPaths'>;
  /** The answer recorded. */
  answer: GatePermissionAnswer;
  /** The check was the session's own permission function (`permissionHandler`): not compared. */
  sessionHandler?: true;
  /** The session's version when the check ran. */
  version?: string;
}

/** A permission answer that flips. */
export interface GatePermissionFlip {
  toolUseId: string;
  toolName: string;
  before: GatePermissionAnswer;
  after: GatePermissionAnswer;
}

/** One session, checked. */
export interface GateSessionReport {
  sessionId: string;
  workflowId: string;
  /** The version the session started with. */
  version?: string;
  /** Workflow status as the server lists it (`RUNNING`, `COMPLETED`, ...). */
  status: string;
  startTime: Date;
  /** Dispatches replayed and compared. */
  checked: number;
  /** Every decision that flips, in order: before (recorded) and after (the new definition). */
  flips: GoldenChange[];
  /** Recorded dispatches not compared, with why. */
  uncompared: GateUncompared[];
  /** Recorded permission checks judged again. */
  permissionsChecked: number;
  /** Every permission answer that flips, in order. */
  permissionFlips: GatePermissionFlip[];
  /**
   * The session's permission policy (its manifest's `preset:<name>` or `function:<hash>`)
   * when the new definition's differs; presets record no check to replay.
   */
  policyChange?: { before: string; after: string };
}

/** What {@link gateDeploy} found. */
export interface GateReport {
  agentName: string;
  /** The running version whose sessions were replayed. */
  version: string;
  /** The new definition's version (its `version`, else its fingerprint) and fingerprint. */
  newVersion: string;
  newFingerprint: string;
  /** The sessions checked, most recent first (as the server lists them). */
  sessions: GateSessionReport[];
  /** Dispatches compared, in all. */
  checked: number;
  /** Permission checks judged again, in all. */
  permissionsChecked: number;
  /** Flips, in all: hook decisions and permission answers (0: the gate passes). */
  flipped: number;
  /** Dispatches not compared, in all. */
  uncompared: number;
  /**
   * Events the new definition has callbacks for that no checked session dispatched: their
   * decisions have no recorded input to be judged on.
   */
  unrecordedEvents: HookEvent[];
  /** Sessions of the namespace whose memo could not be read (another key ring?): not checked. */
  unreadable: Array<{ workflowId: string; why: string }>;
}

/** How a session's recording is compared: see {@link compareRecording}. */
export interface CompareRecordingOptions {
  /** The running version: dispatches another version decided are not compared. */
  version?: string;
  /** Events the session had session-level callbacks for: not compared. */
  sessionHookEvents?: ReadonlySet<HookEvent>;
  /** Only these events are replayed. @default every event */
  events?: readonly HookEvent[];
}

/**
 * Replay one session's recorded dispatches through `hooks` (the new definition's callbacks)
 * and compare decisions. Pure apart from what the callbacks do (they are called for real).
 *
 * @returns the flips (before: recorded, after: `hooks`), how many were compared, and the
 *   dispatches not compared with why.
 */
export async function compareRecording(
  recording: Pick<GoldenSession, 'sessionId' | 'dispatches'>,
  hooks: HookMap,
  options: CompareRecordingOptions = {},
): Promise<{ checked: number; flips: GoldenChange[]; uncompared: GateUncompared[] }> {
  const flips: GoldenChange[] = [];
  const uncompared: GateUncompared[] = [];
  let checked = 0;
  for (const dispatch of recording.dispatches) {
    const why = whyNotCompared(dispatch, options);
    if (why !== undefined) {
      uncompared.push({ ...where(dispatch), why });
      continue;
    }
    checked++;
    const after = await decideDispatch(dispatch, hooks[dispatch.event] ?? [], recording.sessionId);
    if (!sameDecision(dispatch.decision, after)) {
      flips.push({ ...where(dispatch), before: dispatch.decision, after });
    }
  }
  return { checked, flips, uncompared };
}

function where(dispatch: GoldenDispatch): { seq: number; event: HookEvent; toolName?: string } {
  return {
    seq: dispatch.seq,
    event: dispatch.event,
    ...(dispatch.toolName !== undefined ? { toolName: dispatch.toolName } : {}),
  };
}

function whyNotCompared(
  dispatch: GoldenDispatch,
  options: CompareRecordingOptions,
): string | undefined {
  if (options.events && !options.events.includes(dispatch.event)) {
    return `event ${dispatch.event} is not among the events checked`;
  }
  if (
    options.version !== undefined &&
    dispatch.version !== undefined &&
    dispatch.version !== options.version
  ) {
    return `decided by version '${dispatch.version}', not '${options.version}'`;
  }
  if (options.sessionHookEvents?.has(dispatch.event)) {
    return `the session had session-level ${dispatch.event} callbacks (SessionOptions.hooks, in-process only): not in the definition`;
  }
  const { decision } = dispatch;
  if (decision.action === 'error' && decision.decidedBy === undefined) {
    return `no decision was recorded (${decision.reason ?? 'the dispatch failed'})`;
  }
  return undefined;
}

/**
 * The permission checks a session's histories record (`checkPermission` activities, which
 * run for a permission-function policy), each with the answer it got. Checks a worker of
 * another version refused, and checks that never reported, are left out.
 */
export function permissionChecksOf(histories: readonly History[]): GatePermissionCheck[] {
  const checks: GatePermissionCheck[] = [];
  for (const history of histories) {
    const scheduled = new Map<string, CheckPermissionInput>();
    for (const event of history.events ?? []) {
      const attrs = event.activityTaskScheduledEventAttributes;
      if (attrs?.activityType?.name === ActivityNames.checkPermission) {
        const input = decodeFirstPayload<CheckPermissionInput>(attrs.input);
        if (input) scheduled.set(String(event.eventId), input);
        continue;
      }
      const completed = event.activityTaskCompletedEventAttributes;
      if (!completed) continue;
      const input = scheduled.get(String(completed.scheduledEventId ?? ''));
      const output = decodeFirstPayload<CheckPermissionOutput>(completed.result);
      if (!input || !output) continue;
      checks.push({
        toolUseId: input.toolUseId,
        toolName: input.toolName,
        request: {
          toolName: input.toolName,
          input: input.input,
          kind: input.kind,
          affectedPaths: input.affectedPaths,
        },
        answer: output.ok
          ? output.result
          : { behavior: 'error', message: output.error?.message ?? 'the check failed' },
        ...(input.handler === 'session' ? { sessionHandler: true as const } : {}),
        ...(typeof input.version === 'string' ? { version: input.version } : {}),
      });
    }
  }
  return checks;
}

/**
 * Judge recorded permission checks again with `policy` (a preset: on the recorded kind; a
 * function: called for real with the recorded request, bounded by `timeoutMs`), and list the
 * answers that flip. Checks of a session permission function, or of another version, are
 * not judged. Failures compare by `behavior: 'error'` alone (their messages vary).
 */
export async function comparePermissionChecks(
  checks: readonly GatePermissionCheck[],
  policy: PermissionPreset | PermissionHandler,
  options: { version?: string; timeoutMs?: number } = {},
): Promise<{ checked: number; flips: GatePermissionFlip[] }> {
  const flips: GatePermissionFlip[] = [];
  let checked = 0;
  for (const check of checks) {
    if (check.sessionHandler) continue;
    if (
      options.version !== undefined &&
      check.version !== undefined &&
      check.version !== options.version
    ) {
      continue;
    }
    checked++;
    const after =
      typeof policy === 'function'
        ? await judge(policy, check.request, options.timeoutMs ?? 60_000)
        : presetDecision(policy, check.request.kind);
    const same =
      after.behavior === 'error' || check.answer.behavior === 'error'
        ? after.behavior === check.answer.behavior
        : isDeepStrictEqual(after, check.answer);
    if (!same) {
      flips.push({
        toolUseId: check.toolUseId,
        toolName: check.toolName,
        before: check.answer,
        after,
      });
    }
  }
  return { checked, flips };
}

/** One call of a permission function, as the `checkPermission` activity makes it. */
async function judge(
  policy: PermissionHandler,
  request: GatePermissionCheck['request'],
  timeoutMs: number,
): Promise<GatePermissionAnswer> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const value = await Promise.race([
      Promise.resolve(policy({ ...structuredClone(request), signal: controller.signal })),
      deadline,
    ]);
    if (value === 'timeout') {
      controller.abort(new Error(`permission check exceeded ${timeoutMs}ms`));
      return { behavior: 'error', message: `the permission function exceeded ${timeoutMs}ms` };
    }
    return (
      normalizePermission(value, request.toolName) ?? {
        behavior: 'error',
        message: `advanced.permission returned ${JSON.stringify(value) ?? String(value)} for ${request.toolName}`,
      }
    );
  } catch (error) {
    return { behavior: 'error', message: messageOf(error) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Events whose dispatches included session-level callbacks: the session's callback count per
 * event beyond the definition's (its manifest names one source per definition callback).
 * Sessions from before manifests were recorded: none known.
 */
export function sessionHookEventsOf(
  input: Partial<SessionWorkflowInput> | undefined,
): Set<HookEvent> {
  const events = new Set<HookEvent>();
  const manifestHooks = input?.manifest?.hooks;
  if (!input?.hookCounts || !manifestHooks) return events;
  for (const [event, count] of Object.entries(input.hookCounts)) {
    const own = manifestHooks[event as HookEvent]?.length ?? 0;
    if (isHookEvent(event) && typeof count === 'number' && count > own) events.add(event);
  }
  return events;
}

/**
 * The deploy gate: list recent sessions of the running version of the agent, fetch every
 * run's history, replay each recorded hook dispatch through the new definition and report
 * every decision that flips (see the module's notes for what is and is not compared).
 *
 * Sessions are found by the server's visibility list (workflow type `sessionWorkflow`,
 * `StartTime` for `since`) and filtered by their memo (`agentName`, `version`), so no custom
 * search attribute is needed; a memo the client cannot decode (a session sealed with another
 * key ring) is skipped and listed in `unreadable`.
 *
 * @returns the report; `report.flipped === 0` means no decision flips.
 * @throws {ConfigError} when `agent` is not valid agent options (naming the option), `limit`
 *   is not a positive integer, `events` names an unknown event, no session of the agent (at
 *   `version`) is found (naming the agent, the version and the namespace), or a session's
 *   history cannot be read (naming the session and why: a key id missing from the ring, a
 *   payload missing from the store).
 * @throws what `@temporalio/client` throws when the server cannot be reached.
 */
export async function gateDeploy(options: GateOptions): Promise<GateReport> {
  const resolved = resolveAgentOptions(options.agent);
  const limit = options.limit ?? GATE_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit <= 0) {
    throw new ConfigError(`gate: limit must be a positive integer, got ${String(limit)}`);
  }
  for (const event of options.events ?? []) {
    if (!isHookEvent(event)) {
      throw new ConfigError(
        `gate: unknown event ${JSON.stringify(event)} in events (one of ${ALL_HOOK_EVENTS.join(', ')})`,
      );
    }
  }
  const client = 'temporal' in options.client ? options.client.temporal : options.client;
  const codecs = client.options.loadedDataConverter.payloadCodecs;
  const converter = client.options.loadedDataConverter.payloadConverter;

  const found = await listAgentSessions(
    client,
    resolved.name,
    options.version,
    options.since,
    limit,
  );
  if (found.sessions.length === 0) {
    const version = options.version !== undefined ? ` version '${options.version}'` : '';
    const since = options.since ? ` started since ${options.since.toISOString()}` : '';
    const unreadable =
      found.unreadable.length > 0
        ? `; ${found.unreadable.length} session(s) could not be read (${distinctReasons(found.unreadable)})`
        : '';
    throw new ConfigError(
      `gate: no sessions of agent '${resolved.name}'${version}${since} in namespace ` +
        `'${client.options.namespace}': nothing to replay${unreadable}`,
    );
  }
  const version = found.version!;

  const sessions: GateSessionReport[] = [];
  const dispatched = new Set<HookEvent>();
  for (const row of found.sessions) {
    let histories: History[];
    try {
      const runs = await fetchRunHistories(client, row.workflowId);
      histories = await Promise.all(runs.map((run) => decodeHistoryPayloads(run, codecs)));
    } catch (error) {
      if (!(error instanceof ConfigError) && !isPayloadError(error)) throw error;
      throw new ConfigError(
        `gate: cannot read the history of session '${row.sessionId}': ${messageOf(error)}`,
        { cause: error },
      );
    }
    const started = histories[0]?.events?.[0]?.workflowExecutionStartedEventAttributes;
    const input = decodeFirstPayload<Partial<SessionWorkflowInput>>(started?.input, converter);
    const recording = goldenFromHistories(row.sessionId, histories);
    for (const d of recording.dispatches) dispatched.add(d.event);
    const compared = await compareRecording(recording, resolved.hooks, {
      version,
      sessionHookEvents: sessionHookEventsOf(input),
      ...(options.events ? { events: options.events } : {}),
    });
    const permissions = await comparePermissionChecks(
      permissionChecksOf(histories),
      resolved.permission,
      { version, timeoutMs: resolved.hookTimeoutMs },
    );
    const before = input?.manifest?.permission;
    sessions.push({
      sessionId: input?.sessionId ?? row.sessionId,
      workflowId: row.workflowId,
      ...(row.version !== undefined ? { version: row.version } : {}),
      status: row.status,
      startTime: row.startTime,
      ...compared,
      permissionsChecked: permissions.checked,
      permissionFlips: permissions.flips,
      ...(before !== undefined && before !== resolved.manifest.permission
        ? { policyChange: { before, after: resolved.manifest.permission } }
        : {}),
    });
  }
  const unrecordedEvents = (Object.keys(resolved.hooks) as HookEvent[]).filter(
    (event) =>
      (resolved.hooks[event]?.length ?? 0) > 0 &&
      !dispatched.has(event) &&
      (!options.events || options.events.includes(event)),
  );
  return {
    agentName: resolved.name,
    version,
    newVersion: resolved.version,
    newFingerprint: resolved.fingerprint,
    sessions,
    checked: sum(sessions.map((s) => s.checked)),
    permissionsChecked: sum(sessions.map((s) => s.permissionsChecked)),
    flipped: sum(sessions.map((s) => s.flips.length + s.permissionFlips.length)),
    uncompared: sum(sessions.map((s) => s.uncompared.length)),
    unrecordedEvents,
    unreadable: found.unreadable,
  };
}

/** Why sessions could not be read, each reason once (a key id per reason), the first ten. */
function distinctReasons(unreadable: GateReport['unreadable']): string {
  const reasons = [...new Set(unreadable.map((u) => u.why))];
  const more = reasons.length > 10 ? `; and ${reasons.length - 10} more` : '';
  return reasons.slice(0, 10).join('; ') + more;
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function isPayloadError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('PAYLOAD_');
}

interface ListedSession {
  sessionId: string;
  workflowId: string;
  version?: string;
  status: string;
  startTime: Date;
}

/**
 * The agent's sessions as the server lists them (most recent first), at `version` (else the
 * first listed session's), at most `limit`, one row per session (its newest run).
 */
async function listAgentSessions(
  client: Client,
  agentName: string,
  version: string | undefined,
  since: Date | undefined,
  limit: number,
): Promise<{ sessions: ListedSession[]; version?: string; unreadable: GateReport['unreadable'] }> {
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  const decodeField = async (payload: Payload | null | undefined): Promise<unknown> => {
    if (!payload) return undefined;
    let decoded = [payload];
    for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded);
    return payloadConverter.fromPayload(decoded[0]!);
  };
  const query =
    `WorkflowType = '${SESSION_WORKFLOW}'` +
    (since ? ` AND StartTime >= '${since.toISOString()}'` : '');
  const sessions: ListedSession[] = [];
  const unreadable: GateReport['unreadable'] = [];
  const seen = new Set<string>();
  let chosen = version;
  let nextPageToken: Uint8Array | undefined;
  do {
    // The raw listing, as `sessions` lists: one memo this client cannot decode must not end it.
    const page = await client.workflowService.listWorkflowExecutions({
      namespace: client.options.namespace,
      query,
      pageSize: 200,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const execution of page.executions ?? []) {
      const workflowId = execution.execution?.workflowId ?? '';
      if (seen.has(workflowId)) continue; // an earlier run of a session already listed
      let memo: { agentName?: unknown; version?: unknown };
      try {
        const fields = execution.memo?.fields ?? {};
        memo = {
          agentName: await decodeField(fields.agentName),
          version: await decodeField(fields.version),
        };
      } catch (error) {
        unreadable.push({ workflowId, why: messageOf(error) });
        continue;
      }
      if (memo.agentName !== agentName) continue;
      const rowVersion = typeof memo.version === 'string' ? memo.version : undefined;
      chosen ??= rowVersion;
      if (rowVersion === undefined || rowVersion !== chosen) continue;
      seen.add(workflowId);
      sessions.push({
        sessionId: sessionIdOfWorkflowId(workflowId) ?? workflowId,
        workflowId,
        version: rowVersion,
        status: statusName(execution.status),
        startTime: optionalTsToDate(execution.startTime) ?? new Date(0),
      });
      if (sessions.length >= limit) return { sessions, version: chosen, unreadable };
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { sessions, ...(chosen !== undefined ? { version: chosen } : {}), unreadable };
}

/** `RUNNING`, `COMPLETED`, ...: Temporal's status enum name without its prefix. */
function statusName(status: number | null | undefined): string {
  const name = proto.temporal.api.enums.v1.WorkflowExecutionStatus[status ?? 0] ?? 'UNSPECIFIED';
  return name.replace(/^WORKFLOW_EXECUTION_STATUS_/, '');
}

/**
 * The report as text: per session with flips or dispatches not compared, a line and the
 * flips' table (dispatch, event, tool, before, after), then one summary line.
 */
export function formatGateReport(report: GateReport): string {
  const lines: string[] = [];
  for (const session of report.sessions) {
    const checked =
      `${plural(session.checked, 'dispatch', 'dispatches')}` +
      (session.permissionsChecked > 0
        ? `, ${plural(session.permissionsChecked, 'permission check')}`
        : '');
    const head = `session ${session.sessionId} (${session.status}, ${checked} checked)`;
    const flips = session.flips.length + session.permissionFlips.length;
    if (flips === 0 && session.uncompared.length === 0 && !session.policyChange) {
      lines.push(`${head}: no flips`);
      continue;
    }
    lines.push(`${head}: ${plural(flips, 'flip')}`);
    if (session.flips.length > 0) {
      lines.push(
        ...formatGoldenChanges(session.flips)
          .split('\n')
          .map((l) => `  ${l}`),
      );
    }
    for (const p of session.permissionFlips) {
      lines.push(
        `  permission ${p.toolName} (${p.toolUseId}): ${showAnswer(p.before)} -> ${showAnswer(p.after)}`,
      );
    }
    if (session.policyChange) {
      lines.push(
        `  permission policy: ${session.policyChange.before} -> ${session.policyChange.after}` +
          (session.policyChange.before.startsWith('preset:')
            ? ' (a preset records no check: its answers are not replayed)'
            : ''),
      );
    }
    for (const u of session.uncompared) {
      lines.push(
        `  not compared: #${u.seq} ${u.event}${u.toolName ? ` ${u.toolName}` : ''}: ${u.why}`,
      );
    }
  }
  const flippedSessions = report.sessions.filter(
    (s) => s.flips.length + s.permissionFlips.length > 0,
  ).length;
  const permissions =
    report.permissionsChecked > 0
      ? `, ${plural(report.permissionsChecked, 'permission check')}`
      : '';
  lines.push(
    `gate: agent '${report.agentName}' version '${report.version}' -> '${report.newVersion}': ` +
      `${plural(report.sessions.length, 'session')}, ${plural(report.checked, 'dispatch', 'dispatches')}${permissions} checked, ` +
      (report.flipped === 0
        ? 'no decision flips'
        : `${plural(report.flipped, 'decision')} ${report.flipped === 1 ? 'flips' : 'flip'} in ${plural(flippedSessions, 'session')}`) +
      (report.uncompared > 0 ? `; ${report.uncompared} not compared` : ''),
  );
  if (report.unrecordedEvents.length > 0) {
    lines.push(
      `note: no recorded input for ${report.unrecordedEvents.join(', ')} (the new definition has callbacks ` +
        'for them, but no checked session dispatched them): those decisions are not checked',
    );
  }
  if (report.unreadable.length > 0) {
    lines.push(
      `note: ${plural(report.unreadable.length, 'session')} of the namespace could not be read and were not checked ` +
        `(${distinctReasons(report.unreadable)})`,
    );
  }
  return lines.join('\n');
}

function showAnswer(answer: GatePermissionAnswer): string {
  const message = 'message' in answer && answer.message !== undefined ? `: ${answer.message}` : '';
  const input =
    'updatedInput' in answer && answer.updatedInput !== undefined
      ? ` input=${JSON.stringify(answer.updatedInput)}`
      : '';
  const interrupt = 'interrupt' in answer && answer.interrupt ? ' (interrupt)' : '';
  return `${answer.behavior}${message}${input}${interrupt}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
