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
 * Sub-agents (`advanced.subagents`): the sessions a session's `Task` calls started are read
 * with it, and their dispatches re-run through the new definition's callbacks for them (the
 * sub-agent's own hooks, or the agent's it inherits, by the recorded `lineage`; one the new
 * definition lacks is not compared) and reported in the top session's report with their
 * path (`main/researcher`). They are not listed as sessions of their own. Their permission
 * checks are judged by the sub-agent's own policy, else the agent's.
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
import type { AgentOptions, ResolvedAgentOptions } from '../definition/options.js';
import { resolveAgentOptions } from '../definition/resolve.js';
import type { AgentClient } from '../client/client.js';
import { ConfigError, messageOf } from '../common/errors.js';
import { ALL_HOOK_EVENTS, isHookEvent, type HookEvent } from '../common/hook-events.js';
import {
  SESSION_WORKFLOW,
  sessionIdOfWorkflowId,
  type SessionWorkflowInput,
} from '../common/workflow-io.js';
import { decodeFirstPayload, decodeHistoryPayloads } from '../history/decode.js';
import { fetchRunHistories } from '../history/files.js';
import { timelineFromHistory } from '../history/timeline.js';
import { fetchSubagentHistories, goldenFromHistories } from './golden.js';

import {
  compareRecording,
  comparePermissionChecks,
  permissionChecksOf,
  sessionHookEventsOf,
} from './gate-compare.js';
import { distinctReasons, type GateReport, type GateSessionReport } from './gate-report.js';

export type * from './gate-report.js';
export { formatGateReport } from './gate-report.js';
export {
  compareRecording,
  comparePermissionChecks,
  permissionChecksOf,
  sessionHookEventsOf,
  type CompareRecordingOptions,
  type SubagentPolicies,
} from './gate-compare.js';

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

/**
 * The deploy gate: list recent sessions of the running version of the agent, fetch every
 * run's history, replay each recorded hook dispatch through the new definition and report
 * every decision that flips (see the module's notes for what is and is not compared).
 *
 * Sessions are found by the server's visibility list (workflow type `sessionWorkflow`,
 * `StartTime` for `since`) and filtered by their memo (`agentName`, `version`), so no custom
 * search attribute is needed; a memo the client cannot decode (a session sealed with another
 * key ring) is skipped and listed in `unreadable`. Sub-agent sessions (a memo with
 * `parentSessionId`) are not listed: they are read with their top session.
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
  const limit = checkedLimit(options);
  const client = 'temporal' in options.client ? options.client.temporal : options.client;

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
    sessions.push(await gateSession(client, row, resolved, version, options.events, dispatched));
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

/**
 * {@link GateOptions.limit} or its default.
 * @throws {ConfigError} when `limit` is not a positive integer or `events` names an unknown
 *   event.
 */
function checkedLimit(options: GateOptions): number {
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
  return limit;
}

/**
 * One session's report: its recorded dispatches and permission checks judged again by the
 * new definition. Adds the events it dispatched to `dispatched`.
 * @throws {ConfigError} when its history cannot be read.
 */
async function gateSession(
  client: Client,
  row: ListedSession,
  resolved: ResolvedAgentOptions,
  version: string,
  events: readonly HookEvent[] | undefined,
  dispatched: Set<HookEvent>,
): Promise<GateSessionReport> {
  const converter = client.options.loadedDataConverter.payloadConverter;
  const histories = await readSessionHistories(client, row.workflowId, row.sessionId);
  const started = histories[0]?.events?.[0]?.workflowExecutionStartedEventAttributes;
  const input = decodeFirstPayload<Partial<SessionWorkflowInput>>(started?.input, converter);
  const subagents = await fetchSubagentHistories(histories, (workflowId) =>
    readSessionHistories(client, workflowId, row.sessionId),
  );
  const recording = goldenFromHistories(row.sessionId, histories, subagents);
  for (const d of recording.dispatches) dispatched.add(d.event);
  // Session hooks are the top session's, in its sub-agents too.
  const compared = await compareRecording(recording, resolved.hooks, {
    version,
    sessionHookEvents: sessionHookEventsOf(input),
    ...(events ? { events } : {}),
    ...(resolved.subagents ? { subagents: resolved.subagents.agents } : {}),
  });
  const permissions = await comparePermissionChecks(
    permissionChecksOf([...histories, ...[...subagents.values()].flat()]),
    resolved.permission,
    {
      version,
      timeoutMs: resolved.hookTimeoutMs,
      ...(resolved.subagents ? { subagents: resolved.subagents.agents } : {}),
    },
  );
  const before = input?.manifest?.permission;
  const mcpTools = timelineFromHistory(histories[0]!, { payloadConverter: converter }).mcpTools;
  return {
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
    ...(mcpTools ? { mcpTools } : {}),
  };
}

/**
 * Every run's history of a workflow of the session (its own, or a sub-agent's), payloads
 * decoded.
 * @throws {ConfigError} naming the session, when a key or a stored payload is missing.
 */
async function readSessionHistories(
  client: Client,
  workflowId: string,
  sessionId: string,
): Promise<History[]> {
  const codecs = client.options.loadedDataConverter.payloadCodecs;
  try {
    const runs = await fetchRunHistories(client, workflowId);
    return await Promise.all(runs.map((run) => decodeHistoryPayloads(run, codecs)));
  } catch (error) {
    if (!(error instanceof ConfigError) && !isPayloadError(error)) throw error;
    throw new ConfigError(
      `gate: cannot read the history of session '${sessionId}'` +
        `${workflowId === `session-${sessionId}` ? '' : ` (workflow ${workflowId})`}: ${messageOf(error)}`,
      { cause: error },
    );
  }
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
      const fields = execution.memo?.fields ?? {};
      // A sub-agent's session: checked with its top session's.
      if (fields.parentSessionId) continue;
      try {
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
