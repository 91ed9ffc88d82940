/**
 * The tool pipeline's permission stage: the agent's policy (its permission rules, then a
 * preset or its permission function) and, for `ask`, the durable wait for a person's answer. Workflow code.
 *
 * @module
 */
import { condition, isCancellation, setCurrentDetails, uuid4 } from '@temporalio/workflow';
import { DEFAULTS } from '../../src/common/defaults.js';
import type { JsonObject } from '../../src/common/json.js';
import {
  presetDecision,
  type PendingPermission,
  type PermissionAnswer,
  type PermissionResult,
} from '../../src/common/permission.js';
import { matchPermissionRule, ruleDecision } from '../../src/common/permission-rules.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { permissionDecidedEvent } from '../../src/common/permission-events.js';
import { approvalDetails, toolLabel } from '../../src/common/summaries.js';
import type { ToolKind, ToolResult } from '../../src/common/types.js';
import { checkPermissionActivity } from '../activity-options.js';
import { approvalDigest } from '../../src/common/approval-digest.js';
import { notifyStage, runApprovalStages } from './approval-stages.js';
import { askedCall, reaskedNote, rememberAsk, type BindingState } from './approval-binding.js';
import { identityFields, withRefusalRetries } from '../session/version-refusal.js';
import { failureMessage } from '../session/failures.js';
import {
  publishQueuedNow,
  queueStreamEvent,
  takeStreamEvents,
  type StreamOutboxState,
} from '../session/stream-outbox.js';

/** A pending `ask`, and the answer once a person gave one. */
export interface PendingPermissionEntry {
  request: PendingPermission;
  answer?: PermissionAnswer;
  /** Who answered (the client's identity), when its client said. */
  answeredBy?: string;
  /** Whether the answer named the request's approval digest (else it was accepted unbound). */
  bound?: boolean;
}

/** The session state the permission stage reads and writes. */
interface PermissionState extends StreamOutboxState, BindingState {
  /** The session's input; an upgrade replaces it with the new version's identity. */
  input: SessionWorkflowInput;
  readonly taskQueue: string;
  pendingPermissions: Map<string, PendingPermissionEntry>;
  /**
   * How the latest requests that no longer wait ended, by request id, oldest first, at most
   * {@link DECIDED_KEPT}: an answer that comes too late is told who decided (this run only).
   */
  decidedPermissions?: Map<string, DecidedPermission>;
  /** The last decision for the session's search attributes (`search-attributes.ts`). */
  lastDecision?: string;
}

/** How a permission request that no longer waits ended. */
interface DecidedPermission {
  /** The tool call, as a label (`Write NOTES.md`). */
  label: string;
  outcome: 'approved' | 'denied' | 'expired' | 'cancelled';
  /** Who answered (`approved`, `denied`), when their client said. */
  by?: string;
  /** When it ended, ms since the epoch (workflow time). */
  at: number;
}

/** How many ended requests a run keeps for {@link DecidedPermission}. */
const DECIDED_KEPT = 100;

/** Keep how the request `requestId` ended, dropping the oldest beyond {@link DECIDED_KEPT}. */
function rememberDecided(
  state: PermissionState,
  requestId: string,
  decided: DecidedPermission,
): void {
  state.decidedPermissions ??= new Map();
  state.decidedPermissions.set(requestId, decided);
  if (state.decidedPermissions.size > DECIDED_KEPT) {
    state.decidedPermissions.delete(state.decidedPermissions.keys().next().value!);
  }
}

/**
 * What the agent's permission setting decides: the first matching permission rule
 * (`advanced.permissionRules`: deny, then ask, then allow), else a preset or its permission
 * function. The decision goes to the send's stream (`permission-decided`) with the send's
 * next activity.
 */
export async function policyDecision(
  state: PermissionState,
  toolUseId: string,
  toolName: string,
  input: JsonObject,
  description: { kind: ToolKind; affectedPaths: string[] },
  requestId?: string,
): Promise<PermissionResult> {
  const inWorkflow = workflowDecision(state, toolUseId, toolName, description, requestId);
  if (inWorkflow) return inWorkflow;
  const decided = await functionDecision(state, toolUseId, toolName, input, description, requestId);
  queueStreamEvent(
    state,
    requestId,
    permissionDecidedEvent({ toolUseId, toolName }, decided, { decidedBy: 'function' }),
  );
  return decided;
}

/**
 * What {@link policyDecision} decides without an activity: the first matching permission
 * rule, else a preset (its decision queued for the send's stream, as there); undefined when a
 * permission function decides.
 */
export function workflowDecision(
  state: PermissionState,
  toolUseId: string,
  toolName: string,
  description: { kind: ToolKind },
  requestId?: string,
): PermissionResult | undefined {
  const permission = state.input.permission ?? { preset: 'default' as const };
  const call = { toolUseId, toolName };
  const rule = matchPermissionRule(state.input.permissionRules, toolName);
  if (rule) {
    const decided = ruleDecision(rule);
    queueStreamEvent(
      state,
      requestId,
      permissionDecidedEvent(call, decided, { decidedBy: 'rules', rule }),
    );
    return decided;
  }
  if (!('preset' in permission)) return undefined;
  const decided = presetDecision(permission.preset, description.kind);
  queueStreamEvent(
    state,
    requestId,
    permissionDecidedEvent(call, decided, { decidedBy: 'preset', preset: permission.preset }),
  );
  return decided;
}

/** What the permission function decides (a failed check denies, naming why). */
async function functionDecision(
  state: PermissionState,
  toolUseId: string,
  toolName: string,
  input: JsonObject,
  description: { kind: ToolKind; affectedPaths: string[] },
  requestId?: string,
): Promise<PermissionResult> {
  const permission = state.input.permission;
  const checkInput = {
    agentName: state.input.agentName,
    sessionId: state.input.sessionId,
    ...identityFields(state.input),
    toolUseId,
    toolName,
    input,
    kind: description.kind,
    affectedPaths: description.affectedPaths,
    ...(requestId !== undefined ? { requestId } : {}),
    ...(permission && 'handler' in permission && permission.handler === 'session'
      ? { handler: 'session' as const }
      : {}),
    ...takeStreamEvents(state, requestId),
  };
  // Refused everywhere (no worker of the session's version): the call is denied, naming why.
  const checked = await withRefusalRetries(
    state.input,
    { task: `the permission check of ${toolName}` },
    state.input.hookTimeoutMs,
    (eager) =>
      checkPermissionActivity(
        state.taskQueue,
        eager,
        `permission check: ${toolLabel(toolName, input)}`,
      )(checkInput),
  ).catch((error: unknown) => {
    if (isCancellation(error)) throw error;
    return { ok: false as const, error: { name: 'Error', message: failureMessage(error) } };
  });
  if (checked.ok) return checked.result;
  return {
    behavior: 'deny',
    message: `Permission check for ${toolName} failed: ${checked.error.message}`,
  };
}

/**
 * Wait durably for a person's answer (`decidePermission`); no answer by the deadline denies.
 * The send's stream gets `permission-asked` at once (a local activity: nothing else of the
 * send runs until the answer), and the answer's `permission-decided` with the next activity.
 */
export async function askPerson(
  state: PermissionState,
  ask: PersonAsk,
  requestId?: string,
): Promise<PermissionAnswer> {
  const timeoutMs = state.input.permissionTimeoutMs ?? DEFAULTS.permissionTimeoutMs;
  // State only (no command): the digest changes nothing a history records.
  const digest = rememberAsk(state, askedCall(state, ask));
  const entry = pendingEntry(ask, Date.now(), timeoutMs, askIdOf(state.input), digest);
  const askedAt = entry.request.askedAt;
  state.pendingPermissions.set(entry.request.requestId, entry);
  const label = toolLabel(ask.toolName, ask.input);
  setCurrentDetails(approvalDetails(label, askedAt, entry.request.deadline));
  const call = { toolUseId: ask.toolUseId, toolName: ask.toolName };
  const permissionRequestId = entry.request.requestId;
  let ended: DecidedPermission['outcome'] = 'cancelled';
  try {
    queueStreamEvent(state, requestId, {
      type: 'permission-asked',
      ...call,
      kind: ask.kind,
      affectedPaths: ask.paths,
      askedOf: 'person',
      permissionRequestId,
      ...messageOf(ask),
      deadline: entry.request.deadline,
      digest,
    });
    await publishQueuedNow(state, requestId);
    // The summary names the wait in Temporal's tools (and lets `inspect` tell it from others).
    const waiting = condition(() => entry.answer !== undefined, timeoutMs, {
      summary: `approval deadline: ${label}`,
    });
    // `advanced.approvals`: the reminder and escalation timers, after the deadline's (none
    // without it: such sessions record the commands they always did).
    void runApprovalStages(state, entry, label, requestId);
    const answered = await waiting;
    state.lastDecision = entry.answer?.behavior ?? 'deny';
    ended =
      !answered || !entry.answer
        ? 'expired'
        : entry.answer.behavior === 'allow'
          ? 'approved'
          : 'denied';
    if (!answered || !entry.answer) {
      void notifyStage(state, entry, 'deadline', label);
      const denied: PermissionAnswer = {
        behavior: 'deny',
        message: `No decision on ${ask.toolName} within ${timeoutMs} ms: denied`,
      };
      queueStreamEvent(
        state,
        requestId,
        permissionDecidedEvent(call, denied, {
          decidedBy: 'deadline',
          permissionRequestId,
          binding: { digest },
        }),
      );
      return denied;
    }
    queueStreamEvent(
      state,
      requestId,
      permissionDecidedEvent(call, entry.answer, {
        decidedBy: 'person',
        permissionRequestId,
        identity: entry.answeredBy,
        binding: answerBinding(state, ask, entry, digest),
      }),
    );
    return entry.answer;
  } finally {
    state.pendingPermissions.delete(entry.request.requestId);
    rememberDecided(state, permissionRequestId, {
      label,
      outcome: ended,
      ...(ended === 'approved' || ended === 'denied' ? byOf(entry) : {}),
      at: Date.now(),
    });
  }
}

/**
 * The digests of a person's answer: the call asked about, whether the answer named it, and
 * for an edited input the call as it runs.
 */
function answerBinding(
  state: PermissionState,
  ask: PersonAsk,
  entry: PendingPermissionEntry,
  digest: string,
): { digest: string; bound: boolean; updatedInputDigest?: string } {
  const edited = entry.answer?.behavior === 'allow' ? entry.answer.updatedInput : undefined;
  return {
    digest,
    bound: entry.bound === true,
    ...(edited
      ? { updatedInputDigest: approvalDigest(askedCall(state, { ...ask, input: edited })) }
      : {}),
  };
}

/** A tool call a person is asked about. */
interface PersonAsk {
  toolUseId: string;
  toolName: string;
  input: JsonObject;
  kind: ToolKind;
  paths: string[];
  message?: string | undefined;
}

/**
 * A new ask's request id: a uuid; in a sub-agent's session `<its session id>#<uuid>`, so that
 * a client of the top session can tell which session to send the answer to.
 */
function askIdOf(input: Pick<SessionWorkflowInput, 'lineage' | 'sessionId'>): string {
  const id = uuid4();
  return input.lineage ? `${input.sessionId}#${id}` : id;
}

/** The pending request `requestId` of `ask`, asked at `askedAt`, expiring `timeoutMs` later. */
function pendingEntry(
  ask: PersonAsk,
  askedAt: number,
  timeoutMs: number,
  requestId: string,
  digest: string,
): PendingPermissionEntry {
  return {
    request: {
      requestId,
      toolUseId: ask.toolUseId,
      toolName: ask.toolName,
      toolKind: ask.kind,
      input: ask.input,
      affectedPaths: ask.paths,
      askedAt,
      deadline: askedAt + timeoutMs,
      ...messageOf(ask),
      digest,
    },
  };
}

function messageOf(ask: PersonAsk): { message?: string } {
  return ask.message !== undefined ? { message: ask.message } : {};
}

function byOf(entry: PendingPermissionEntry): { by?: string } {
  return entry.answeredBy !== undefined ? { by: entry.answeredBy } : {};
}

/**
 * Why no answer to `requestId` is taken now, one sentence: it is being applied, it ended
 * (approved or denied by whom, expired, cancelled, and when), or no such request is known;
 * when the call the answer's `digest` names waits again under another request, which, and
 * what changed.
 */
export function notPendingMessage(
  state: PermissionState,
  requestId: unknown,
  sessionId: string,
  digest?: unknown,
): string {
  const reasked = reaskedNote(
    state,
    [...state.pendingPermissions.values()].filter((e) => !e.answer).map((e) => e.request),
    digest,
  );
  return notPendingReason(state, requestId, sessionId) + reasked;
}

function notPendingReason(state: PermissionState, requestId: unknown, sessionId: string): string {
  const id = String(requestId);
  const answered = state.pendingPermissions.get(id);
  if (answered?.answer) {
    const verb = answered.answer.behavior === 'allow' ? 'approved' : 'denied';
    const by = answered.answeredBy !== undefined ? ` by ${answered.answeredBy}` : '';
    return `Permission request '${id}' (${toolLabel(answered.request.toolName, answered.request.input)}) in session '${sessionId}' was already ${verb}${by}; the answer is being applied`;
  }
  const decided = state.decidedPermissions?.get(id);
  if (!decided) return `No pending permission request '${id}' in session '${sessionId}'`;
  const at = new Date(decided.at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const how =
    decided.outcome === 'expired'
      ? `expired at its deadline (${at}) and was denied`
      : decided.outcome === 'cancelled'
        ? `was cancelled at ${at} (its prompt ended first)`
        : `was already ${decided.outcome}${decided.by !== undefined ? ` by ${decided.by}` : ''} at ${at}`;
  return `Permission request '${id}' (${decided.label}) in session '${sessionId}' ${how}`;
}

/** The result of a call whose permission was denied. */
export function deniedResult(toolName: string, message: string): ToolResult {
  return {
    status: 'error',
    model: message,
    display: { summary: `Permission denied: ${toolName}` },
    error: { message, type: 'PermissionDenied', code: 'PERMISSION_DENIED' },
  };
}
