/**
 * What crosses between the session workflow, its activities and its clients: the workflow
 * type, the typed Update and Query definitions both sides use, the activity names, workflow
 * input, update and query payloads, activity inputs and outcomes. Workflow-safe: the
 * definitions come from `@temporalio/workflow`'s `defineUpdate`/`defineQuery`, plain objects
 * that clients import outside the sandbox too (as Temporal's samples share theirs).
 *
 * @module
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { HookErrorRecord, SerializedError } from './errors.js';
import type { HookEvent } from './hook-events.js';
import type { DefinitionManifest, SessionIdentity } from './identity.js';
import type { ConversationMessage, ToolCall } from './conversation.js';
import type { JsonObject } from './json.js';
import type { ContextStamp } from './context-stamp.js';
import type { WorkflowStreamEvent } from './permission-events.js';
import type {
  PendingPermission,
  PermissionAnswer,
  PermissionPreset,
  PermissionResult,
} from './permission.js';
import type {
  HookOutput,
  Prompt,
  SessionEndReason,
  ToolDisplay,
  ToolKind,
  ToolResult,
} from './types.js';

/**
 * The session workflow's type: what clients start (`client.workflow.start<SessionWorkflow>(
 * SESSION_WORKFLOW, ...)`) and the bundle's entry exports. Recorded in every history and
 * listed by `WorkflowType = 'sessionWorkflow'`: never rename it.
 */
export const SESSION_WORKFLOW = 'sessionWorkflow';

/** The session workflow's signature (`workflows/index.ts` checks its export against it). */
export type SessionWorkflow = (input: SessionWorkflowInput) => Promise<SessionWorkflowResult>;

/**
 * The session workflow's Updates: the workflow sets their handlers
 * (`setHandler(Updates.send, ...)`), clients run them
 * (`handle.executeUpdate(Updates.send, { args: [request] })`), both typed by these
 * definitions. The names are in recorded histories and running sessions: never rename one.
 */
export const Updates = {
  /** Answers once SessionStart has run (or failed): what `createSession` waits for. */
  ready: defineUpdate<SessionDescription>('ready'),
  /** One prompt; the update id is the request id, so a retried `send()` runs once. */
  send: defineUpdate<SendResult, [SendRequest]>('send'),
  /** Abort the running prompt (or one request); answers once it has stopped. */
  abort: defineUpdate<{ aborted: boolean }, [AbortRequest]>('abort'),
  /** Close the session: SessionEnd at most once. */
  close: defineUpdate<CloseResult>('close'),
  /** Move the session's activities to another task queue. */
  handoff: defineUpdate<SessionDescription, [HandoffRequest]>('handoff'),
  /** A person's answer to a pending permission `ask`. */
  decidePermission: defineUpdate<{ decided: true }, [PermissionDecisionRequest]>(
    'decidePermission',
  ),
  /**
   * Move the session to another version of its agent, at a turn boundary, in two steps
   * around the client's re-pin (`session.upgrade()`, `workflows/handlers/upgrade.ts`).
   */
  upgrade: defineUpdate<UpgradeAnswer, [UpgradeRequest]>('upgrade'),
} as const;

/**
 * The session workflow's Queries, typed as {@link Updates} are. The names are in running
 * sessions' workers and clients: never rename one.
 */
export const Queries = {
  /** This run's hook timeline (earlier runs' are archived). */
  timeline: defineQuery<TimelineEntry[]>('timeline'),
  describe: defineQuery<SessionDescription>('describe'),
  /** The running prompt's abort, for the dispatch activity to hand callbacks its reason. */
  abortReason: defineQuery<AbortRecord | null>('abortReason'),
  /** This run's whole transcript in one answer (small sessions, tests). */
  conversation: defineQuery<ConversationMessage[]>('conversation'),
  /** The model's context, one page from the given index. */
  conversationPage: defineQuery<ConversationPage, [number]>('conversationPage'),
  pendingPermissions: defineQuery<PendingPermission[]>('pendingPermissions'),
  /** This run's transcript, one page from the given index. */
  transcriptPage: defineQuery<ConversationPage, [number]>('transcriptPage'),
  archives: defineQuery<SessionArchives>('archives'),
} as const;

/**
 * Names of the session's activities, as the workflow schedules them and histories record
 * them (`activities/index.ts` checks that `createActivities` gives exactly these).
 */
export const ActivityNames = {
  dispatchHook: 'dispatchHook',
  awaitHookSettled: 'awaitHookSettled',
  modelStep: 'modelStep',
  describeToolCall: 'describeToolCall',
  checkPermission: 'checkPermission',
  executeTool: 'executeTool',
  archiveRun: 'archiveRun',
  publishStreamEvents: 'publishStreamEvents',
  describeDefinition: 'describeDefinition',
} as const;

/** The name of one of the session's activities. */
export type ActivityName = (typeof ActivityNames)[keyof typeof ActivityNames];

/** Prefix of a session's workflow id (what Temporal's Web UI and `temporal workflow` show). */
const SESSION_WORKFLOW_ID_PREFIX = 'session-';

/** Workflow id of a session. */
export function sessionWorkflowId(sessionId: string): string {
  return `${SESSION_WORKFLOW_ID_PREFIX}${sessionId}`;
}

/**
 * The session id in a session id or a session's workflow id: `session-abc` (the workflow id
 * the Web UI shows) gives `abc`; an id without the prefix (or `session-` alone) is returned
 * as is. Pure.
 *
 * A session whose own id starts with `session-` is ambiguous with it: to find such a session
 * by its id, try {@link sessionIdCandidates} in order.
 */
export function sessionIdOf(idOrWorkflowId: string): string {
  const rest = sessionIdOfWorkflowId(idOrWorkflowId) ?? '';
  return rest === '' ? idOrWorkflowId : rest;
}

/**
 * What follows the prefix of a session's workflow id (`session-abc` gives `abc`, `session-`
 * gives `''`), or `undefined` for an id without it. Pure.
 */
export function sessionIdOfWorkflowId(workflowId: string): string | undefined {
  return workflowId.startsWith(SESSION_WORKFLOW_ID_PREFIX)
    ? workflowId.slice(SESSION_WORKFLOW_ID_PREFIX.length)
    : undefined;
}

/**
 * The session ids a user's argument may mean, in the order to look them up: for
 * `session-abc`, the session `abc` (the argument is its workflow id), then the session
 * `session-abc` itself; for `abc` (or `session-` alone), just the argument. Pure.
 */
export function sessionIdCandidates(idOrWorkflowId: string): string[] {
  const stripped = sessionIdOf(idOrWorkflowId);
  return stripped === idOrWorkflowId ? [idOrWorkflowId] : [stripped, idOrWorkflowId];
}

/** Input of the session workflow. */
export interface SessionWorkflowInput {
  sessionId: string;
  /** Name of the agent definition the worker-side registry holds. */
  agentName: string;
  /**
   * The version the session started with (a Temporal build id): only a worker running this
   * version with this fingerprint runs its tasks. Absent in sessions started before versions
   * existed (their tasks are not checked).
   */
  version?: string;
  /** The fingerprint of the definition the session started with (16 hex digits). */
  fingerprint?: string;
  /** What that fingerprint is the hash of: a refusing worker's manifest is compared with it. */
  manifest?: DefinitionManifest;
  /**
   * The session's moves to other versions, oldest first (`session.upgrade()`); `version`,
   * `fingerprint` and `manifest` above are then those of the last move's target. Absent until
   * the first move.
   */
  upgrades?: VersionUpgrade[];
  /**
   * Moves begun and never finished: the client that began one gave neither `finish` nor
   * `cancel` within the hold's bound, so the session gave its turn back and stayed where it
   * was. Oldest first; absent until the first.
   */
  abandonedUpgrades?: AbandonedUpgrade[];
  /** How many callbacks each event has (events with none schedule nothing). */
  hookCounts: Partial<Record<HookEvent, number>>;
  hookTimeoutMs: number;
  sessionEndHookTimeoutMs: number;
  /** End the session with SessionEnd `reason: 'idle_timeout'` after this long idle. */
  idleTimeoutMs?: number;
  /** Most model steps per prompt. */
  maxTurns: number;
  /** Task queue activities go to (changed by handoff). */
  taskQueue: string;
  isResume?: boolean;
  resumeSessionId?: string;
  /** Heartbeat timeout of hook dispatches: how soon a lost worker is noticed, in ms. */
  dispatchHeartbeatTimeoutMs: number;
  /** Heartbeat timeout of model steps, ms; absent: `DEFAULTS.modelHeartbeatTimeoutMs`. */
  modelHeartbeatTimeoutMs?: number;
  /** Heartbeat timeout of tool executions, ms; absent: `DEFAULTS.toolHeartbeatTimeoutMs`. */
  toolHeartbeatTimeoutMs?: number;
  /** The tools the model may call, with their kinds (from the agent definition). */
  tools?: Array<{ name: string; kind: ToolKind }>;
  /** How permission is decided: a preset, or the agent's function (run as an activity). */
  permission?:
    | { preset: PermissionPreset }
    /** `advanced.permission`, a function on the workers. */
    | { handler: 'function' }
    /** `SessionOptions.permissionHandler`, on the worker of the process that created the session. */
    | { handler: 'session' };
  /** How long an `ask` waits for a person before it is denied, ms. */
  permissionTimeoutMs?: number;
  /** Time budget of one tool execution, ms. */
  toolTimeoutMs?: number;
  /** Time budget of one model step, ms. */
  modelTimeoutMs?: number;
  /** Most tokens of conversation sent to the model per step (JSON characters / 4). */
  maxContextTokens?: number;
  /** Continue as new after this many prompts in one run (besides Temporal's suggestion). */
  continueAsNewAfterPrompts?: number;
  /**
   * `'reject'`: a failed tool hook makes the `send()` reject with its error. Absent: the call
   * ends in an error result and the prompt goes on (as in sessions started before it existed).
   */
  toolHookErrors?: 'reject';
  /** Events whose callbacks are dispatched as local activities (`hookDispatch`); absent: none. */
  localDispatch?: HookEvent[];
  /**
   * Events whose callbacks run inside another activity (`hookDispatch` `'inline'`):
   * UserPromptSubmit in the send's first model step, PostToolUse in the tool's execution;
   * absent: none.
   */
  inlineDispatch?: HookEvent[];
  /**
   * Whether the status search attribute follows every turn (`running`/`idle`,
   * `advanced.temporal.turnStatus`). Absent: it does (sessions started before the option
   * existed upserted at every turn, and replay so).
   */
  turnStatus?: boolean;
  /** What an earlier run of this session handed on (absent in the first run). */
  carry?: SessionCarry;
}

/**
 * What a run hands to the next when it continues as new: everything the hooks contract
 * needs, and nothing that grows with the session except the list of archived runs.
 */
export interface SessionCarry {
  /** 0-based index of the run that receives it (1 for the second run). */
  runIndex: number;
  promptsHandled: number;
  modelSteps: number;
  /** Timeline entries of earlier runs, so `seq` keeps counting. */
  timelineBase: number;
  /** Messages of earlier runs. */
  transcriptBase: number;
  /** Task queue in use (handoff may have changed it). */
  taskQueue: string;
  /** The model's context (already compacted), and how many messages left it so far. */
  context: ConversationMessage[];
  compactedMessages: number;
  /** Earlier runs' transcripts and timelines, in the payload store. */
  archives: RunArchive[];
  /** Callbacks that outlived their dispatch: the session stays fail-closed until they settle. */
  pendingCleanups: Array<{ entry: TimelineEntry; handle: CleanupHandle }>;
  /** Recent send() outcomes by request id, so a send retried across the rollover runs once. */
  recentSends: RecentSend[];
  /** The SessionEnd marker, when a SessionEnd already ran (and failed) in an earlier run. */
  endMarker?: { reason: SessionEndReason; at: number };
}

/** How a recent `send()` ended: its result, or the failure it raised. */
export interface RecentSend {
  requestId: string;
  result?: SendResult;
  failure?: SerializedError;
}

/** One earlier run of a session, archived in the payload store when it continued as new. */
export interface RunArchive {
  runId: string;
  /** Payload reference of a JSON {@link RunArchiveBody}. */
  ref: string;
  messages: number;
  timelineEntries: number;
}

/** What an archive holds. */
export interface RunArchiveBody {
  runId: string;
  messages: ConversationMessage[];
  timeline: TimelineEntry[];
}

/** The `archives` query's answer: earlier runs, and how much of the session they hold. */
interface SessionArchives {
  archives: RunArchive[];
  /** Messages of earlier runs. */
  transcriptBase: number;
  /** Timeline entries of earlier runs. */
  timelineBase: number;
}

/** Input of the `archiveRun` activity: it reads the run by query and stores it. */
export interface ArchiveRunInput {
  sessionId: string;
  /** How many of the run's messages and timeline entries to archive (the rest came later). */
  messages: number;
  timelineEntries: number;
}

/** The `send` update's argument. */
export interface SendRequest {
  /** Also the update id: a retried call with the same id runs once. */
  requestId: string;
  prompt: Prompt;
}

/** The `handoff` update's argument. */
interface HandoffRequest {
  /** The task queue the session's activities go to from now on. */
  taskQueue: string;
}

/** Status of a finished `send()`. */
export type SendStatus = 'completed' | 'interrupted' | 'aborted' | 'max_turns';

/** A tool call the model made during one `send()`. */
export interface ToolCallRecord {
  toolUseId: string;
  toolName: string;
  toolInput: JsonObject;
  status: 'success' | 'error' | 'skipped' | 'denied' | 'aborted' | 'cancelled';
  /** The result's `display` part (for people and UIs; hooks never change it). */
  display?: ToolDisplay;
  /** Where the full output is kept when the model got a cut one (`session.readPayload`). */
  outputRef?: string;
  /**
   * A hook of this call (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure)
   * failed: it threw, returned `undefined` or a malformed output, timed out, or its worker
   * was lost. The call then ended in an error result telling the model so (`status` is
   * `error`), except after PostToolUseFailure, where the tool's own error is kept. With
   * `advanced.toolHookErrors: 'reject'` the `send()` rejects with the hook's error instead.
   */
  hookError?: HookErrorRecord;
  /**
   * Why the call did not run, for `skipped`, `aborted` (blocked) and `denied` calls: what
   * the model was told, which is the hook's `reason` (a PreToolUse `skip` or `abort`, a
   * PermissionRequest `skip` or `abort`), the denial's `message` (a person's `deny`, the
   * permission function's or the preset's), or, when none was given, the default sentence
   * (`Tool Bash was blocked by a PreToolUse hook`, `Permission to run Bash was denied`).
   * Absent for other statuses.
   */
  reason?: string;
}

/** The `send` update's answer. */
export interface SendResult {
  requestId: string;
  status: SendStatus;
  /** Final assistant text ('' when none). */
  text: string;
  toolCalls: ToolCallRecord[];
  /** The abort that stopped this prompt, when `status` is `aborted`. */
  abort?: AbortRecord;
}

/** An abort as the workflow records it. */
export interface AbortRecord {
  /** Id the aborting client chose; it maps back to the very reason object in that process. */
  abortId: string;
  reason: SerializedError;
}

/** The `abort` update's argument. */
export interface AbortRequest extends AbortRecord {
  /** Abort only this request (a send()'s own signal), running or queued. @default the running one */
  requestId?: string;
}

/**
 * What `close()` came to (the `close` update's answer, and what `Session.close()` and
 * `Agent.close()` resolve with).
 */
export interface CloseResult {
  /**
   * True when this call closed the session. False when it was already closed and nothing
   * was called: by an earlier `close()` (or one that overlapped this call and closed it),
   * an idle timeout, a cancellation from outside, or a termination (see `terminated`).
   */
  closedNow: boolean;
  /**
   * Whether SessionEnd's callbacks ran during this call. False when the session has no
   * SessionEnd callbacks, when an earlier `close()` already called them (one that failed:
   * this call closed without calling them again), and whenever `closedNow` is false.
   */
  sessionEndRan: boolean;
  /**
   * Set when the session was terminated from outside (`temporal workflow terminate`, the
   * Web UI, `WorkflowHandle.terminate()`). Termination stops the workflow at once: SessionEnd
   * did not run on it (`describe().sessionEndMarker` says whether an earlier close had
   * scheduled it). Never set by the workflow itself.
   */
  terminated?: SessionTermination;
}

/** How a session was terminated from outside. */
export interface SessionTermination {
  /** The reason given to the termination (`''` when none was). */
  reason: string;
  /** When the session's workflow was terminated. */
  at: Date;
}

/** A dispatch's outcome on the timeline. */
export type DispatchOutcomeKind =
  'continue' | 'skip' | 'abort' | 'timeout' | 'error' | 'cancelled' | 'worker_lost' | 'refused';

/** One entry of a session's hook timeline. */
export interface TimelineEntry {
  seq: number;
  event: HookEvent;
  callbackCount: number;
  outcome: DispatchOutcomeKind;
  /** 0-based position of the callback that decided (skip/abort) or failed. */
  decidedBy?: number;
  reason?: string;
  /** How the dispatch failed (outcomes `error`, `timeout`, `worker_lost` and `refused`). */
  error?: HookErrorRecord;
  /** Wall time of the dispatch as the activity measured it (or the workflow, when lost), ms. */
  durationMs: number;
  /** Workflow time the dispatch started, ms since epoch. */
  startedAt: number;
  toolUseId?: string;
  /** The tool of a tool event (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure). */
  toolName?: string;
  requestId?: string;
  /** A callback of this dispatch outlived it; the session was fail-closed until it settled. */
  cleanup?: 'pending' | 'settled' | 'lost';
  /** The version whose definition decided (absent in sessions from before versions). */
  version?: string;
  /**
   * Set while the dispatch runs: `outcome` and `durationMs` are not final yet. Absent once it
   * ended (and in every timeline of a closed session).
   */
  pending?: true;
}

/** The `describe` query's answer. */
export interface SessionDescription {
  sessionId: string;
  status: 'starting' | 'open' | 'closing' | 'closed';
  taskQueue: string;
  /** Set once SessionEnd was scheduled (or skipped for want of callbacks); never cleared. */
  sessionEndMarker?: { reason: SessionEndReason; at: number };
  pendingCleanups: number;
  promptsHandled: number;
  busy: boolean;
  /** Set (with `status: 'closed'`) when the session was terminated from outside. */
  terminated?: SessionTermination;
  /** The version the session runs (absent in sessions started before versions existed). */
  version?: string;
  /** The fingerprint of the definition it started with. */
  fingerprint?: string;
  /** Its moves to other versions, oldest first (absent until the first). */
  upgrades?: VersionUpgrade[];
  /** Moves begun whose client never finished nor cancelled them, oldest first (absent until the first). */
  abandonedUpgrades?: AbandonedUpgrade[];
}

/**
 * One move of a session from one version of its agent to another, recorded by the workflow
 * (in its input from then on, carried across continue-as-new, and in the `upgrade` Update's
 * result in the history).
 */
export interface VersionUpgrade {
  fromVersion: string;
  fromFingerprint: string;
  toVersion: string;
  toFingerprint: string;
  /** Who asked (`session.upgrade()`'s `identity`, else the client's Temporal identity). */
  by: string;
  /** When the move took effect: workflow time, ms since the epoch. */
  at: number;
  /** Prompts the session had handled before it: they ran on `fromVersion`, later ones on `toVersion`. */
  afterPrompts: number;
}

/**
 * A move begun (`upgrade` `begin`) whose client sent neither `finish` nor `cancel` within
 * `holdMs` (it died, or lost the server): the session gave its turn back without moving.
 * Recorded by the workflow in its input (carried across continue-as-new) and in its memo
 * (`upgradeAbandoned`, a history event).
 */
export interface AbandonedUpgrade {
  /** The version the session stayed on. */
  version: string;
  /** The version the move was to. */
  toVersion: string;
  /** Who began it. */
  by: string;
  /** When the session gave the turn back: workflow time, ms since the epoch. */
  at: number;
  /** How long the turn was held for the move, ms. */
  heldMs: number;
}

/**
 * An `upgrade` Update's argument. `begin` waits for the turn in flight (and the prompts
 * queued before it) to end, then holds the session's turn so that nothing runs while Temporal
 * re-pins it; `finish` takes the target version's identity from a worker of that version and
 * records the move; `cancel` lets go of the turn without moving.
 */
export interface UpgradeRequest {
  phase: 'begin' | 'finish' | 'cancel';
  toVersion: string;
  by: string;
  /**
   * `begin` only: how long the session holds its turn for `finish` or `cancel`, ms (a positive
   * integer). When neither came by then, the session finishes the move itself if Temporal
   * re-pinned it to `toVersion` already (its workflow task runs on a worker of that version),
   * else gives the turn back and records the move as abandoned ({@link AbandonedUpgrade}).
   * @default DEFAULTS.upgradeHoldMs (30 000)
   */
  holdMs?: number;
}

/** An `upgrade` Update's answer: the version the session runs now, and the move `finish` recorded. */
export interface UpgradeAnswer {
  version: string;
  upgrade?: VersionUpgrade;
}

/** Input of the `describeDefinition` activity: which definition a worker of `version` runs. */
export interface DescribeDefinitionInput {
  agentName: string;
  sessionId: string;
  version: string;
}

/** What `describeDefinition` answers: the identity of the definition of that version. */
export interface DefinitionIdentity extends SessionIdentity {
  manifest: DefinitionManifest;
}

/** What the workflow returns when it completes. */
export interface SessionWorkflowResult {
  sessionId: string;
  /** Set when SessionStart failed and the session never opened. */
  startError?: SerializedError;
  endReason?: SessionEndReason;
  /** Prompts the session handled. */
  promptsHandled?: number;
  /** This run's timeline (earlier runs' are in `archives`). */
  timeline: TimelineEntry[];
  /** Earlier runs of the session, archived when they continued as new. */
  archives?: RunArchive[];
}

/** Input of the `dispatchHook` activity: every callback of one event. */
export interface DispatchHookInput extends Partial<SessionIdentity> {
  dispatchId: string;
  sessionId: string;
  agentName: string;
  event: HookEvent;
  /** The event's fields beyond `event`, `sessionId` and `abortSignal`. */
  payload: JsonObject;
  /** One wall-clock budget for all callbacks, in ms. */
  budgetMs: number;
  /** How many callbacks the workflow expects; the registry's count wins. */
  callbackCount: number;
  /** The `send()` the dispatch belongs to, for its live stream (absent: SessionStart, SessionEnd, older workflows). */
  requestId?: string;
  /**
   * Stream events the workflow made for this send since its last activity (permission
   * decisions): the activity publishes them first. Absent when there are none.
   */
  streamEvents?: WorkflowStreamEvent[];
}

/** What `dispatchHook` reports. Failures of callbacks are values, so history shows them. */
export type HookDispatchOutcome =
  | {
      status: 'completed';
      outputs: HookOutput[];
      callbackCount: number;
      durationMs: number;
      /** Each callback's own time, ms, in order (absent in histories from before 0.2). */
      callbackDurationsMs?: number[];
    }
  | {
      status: 'error';
      error: SerializedError;
      callbackIndex: number;
      callbackCount: number;
      durationMs: number;
    }
  | ({
      status: 'timeout';
      callbackCount: number;
      durationMs: number;
      /** 0-based position of the callback running at the deadline (absent in old histories). */
      callbackIndex?: number;
    } & CleanupHandle);

/** Where to wait for a callback that outlived its dispatch. */
export interface CleanupHandle {
  /** True when every callback had settled by the time the dispatch reported. */
  settled: boolean;
  /** The worker-unique task queue of the process that holds the callback. */
  cleanupQueue: string;
  dispatchId: string;
}

/** Input of the `awaitHookSettled` activity, run on the holder's cleanup queue. */
export interface AwaitHookSettledInput {
  dispatchId: string;
}

/** Input of the `modelStep` activity. Only the new messages travel, never the whole conversation. */
export interface ModelStepInput extends Partial<SessionIdentity> {
  sessionId: string;
  agentName: string;
  requestId: string;
  /** 0-based model step within this `send()`. */
  step: number;
  /** 0-based index of this prompt in the session. */
  promptIndex: number;
  /** 0-based index of this model step in the session (across prompts). */
  modelStepIndex: number;
  /**
   * The prompt as it reaches the model, after UserPromptSubmit (on step 0). Histories
   * recorded before 0.2 carry it here; the activity now reads it with the conversation, so
   * history holds each prompt once.
   */
  prompt?: Prompt;
  /**
   * The exact context state this step must see: the worker's cached copy is used only when
   * it matches, else the step queries the workflow. Absent in histories from before the cache.
   */
  context?: ContextStamp;
  /**
   * Stream events the workflow made for this send since its last activity (permission
   * decisions): the step's first attempt publishes them first. Absent when there are none.
   */
  streamEvents?: WorkflowStreamEvent[];
  /**
   * An inline UserPromptSubmit dispatch (`hookDispatch: { UserPromptSubmit: 'inline' }`, step
   * 0 only): the step runs these callbacks first, and calls the model only when they leave
   * the prompt as it is and the worker's cache holds the `context` stamped (which then
   * includes the prompt, not yet added to the workflow's state).
   */
  hook?: DispatchHookInput;
}

/** What `modelStep` returns. */
export interface ModelStepOutput {
  /** Assistant text of this step ('' when the step only calls tools). */
  text: string;
  /** Tool calls asked for, in order (empty when none). */
  toolCalls?: ToolCall[];
  finishReason: 'stop' | 'tool-calls' | 'length' | 'error' | 'other';
  /** The inline dispatch's outcome, when the step ran one (`ModelStepInput.hook`). */
  hook?: HookDispatchOutcome;
  /**
   * Set when the step ran only its inline dispatch and not the model: the callbacks rejected
   * or rewrote the prompt, or failed (`'hook'`), or this worker's cache did not hold the
   * stamped context (`'context'`). `text` is then '' and the workflow runs the step itself.
   */
  deferred?: 'hook' | 'context';
}

/**
 * What an inline dispatch's model step attaches to its failure (the last detail of the
 * ApplicationFailure or CancelledFailure) when its callbacks completed before the model call
 * failed or was cancelled: what they decided.
 */
export interface InlineHookDetail {
  inlineHook: HookDispatchOutcome;
}

/** The `decidePermission` update's argument: a person's answer to a pending `ask`. */
export interface PermissionDecisionRequest {
  requestId: string;
  answer: PermissionAnswer;
  /**
   * Who answered: the identity of the client that sends the Update (the one Temporal records
   * with it), for the send's stream. Absent from older clients.
   */
  identity?: string;
}

/** Input of the `describeToolCall` local activity. */
export interface DescribeToolCallInput extends Partial<SessionIdentity> {
  agentName: string;
  /** The session asking (absent in histories from before versions). */
  sessionId?: string;
  toolName: string;
  input: JsonObject;
}

/** What the worker knows of a tool call before it runs. */
export interface ToolCallDescription {
  known: boolean;
  kind: ToolKind;
  affectedPaths: string[];
}

/** Input of the `checkPermission` activity (the agent's permission function). */
export interface CheckPermissionInput extends Partial<SessionIdentity> {
  agentName: string;
  sessionId: string;
  toolUseId: string;
  toolName: string;
  input: JsonObject;
  kind: ToolKind;
  affectedPaths: string[];
  /** Set when the session has a permission function of its own (`permissionHandler`). */
  handler?: 'session';
  /** The `send()` the call belongs to, for its live stream (absent in older workflows). */
  requestId?: string;
  /**
   * Stream events the workflow made for this send since its last activity (permission
   * decisions): the activity publishes them first. Absent when there are none.
   */
  streamEvents?: WorkflowStreamEvent[];
}

/** What `checkPermission` returns: a normalised decision, or why it could not be had. */
export type CheckPermissionOutput =
  { ok: true; result: PermissionResult } | { ok: false; error: SerializedError };

/** Input of the `executeTool` activity. */
export interface ExecuteToolInput extends Partial<SessionIdentity> {
  sessionId: string;
  agentName: string;
  toolUseId: string;
  toolName: string;
  input: JsonObject;
  /** Time budget, ms. */
  timeoutMs: number;
  /** The `send()` the call belongs to, for its live stream (absent in older workflows). */
  requestId?: string;
  /**
   * Stream events the workflow made for this send since its last activity (permission
   * decisions): the activity publishes them first. Absent when there are none.
   */
  streamEvents?: WorkflowStreamEvent[];
  /**
   * An inline PostToolUse dispatch (`hookDispatch: { PostToolUse: 'inline' }`): after a tool
   * that succeeded, the activity runs these callbacks on its output (added to `payload` as
   * `toolOutput`) and returns their outcome with the result.
   */
  hook?: DispatchHookInput;
}

/**
 * What an execution with an inline PostToolUse dispatch attaches to its CancelledFailure (the
 * last detail; the first is the dispatch's cleanup handle) when an abort came while the
 * callbacks ran: the tool ran, and its result stands.
 */
export interface InlineToolDetail {
  inlineTool: ToolResult;
  /** How long the callbacks ran until the execution was cancelled, ms. */
  durationMs: number;
}

/**
 * Input of the `publishStreamEvents` local activity: stream events of the workflow that no
 * following activity of the send carries (a person is asked; a denial ends the send).
 */
export interface PublishStreamEventsInput {
  agentName: string;
  sessionId: string;
  /** The send whose stream gets them. */
  requestId: string;
  events: WorkflowStreamEvent[];
}

/** What `executeTool` returns. */
export type ExecuteToolOutput = ToolResult & {
  /** The inline PostToolUse dispatch's outcome, when the execution ran one (`hook`). */
  hook?: HookDispatchOutcome;
};

/** One page of the conversation: query answers must stay under Temporal's 2 MiB limit. */
export interface ConversationPage {
  messages: ConversationMessage[];
  /** Index to ask for next, or `null` at the end. */
  next: number | null;
  /** On the model context's first page: the newest prompt as sent (no note, no cuts). */
  prompt?: Prompt;
}

/**
 * Most characters of JSON in one conversation page (at least one message is always
 * returned). Under the payload store's default threshold (256 KiB), so a page stays in the
 * query answer instead of becoming a stored value each model step.
 */
export const CONVERSATION_PAGE_BYTES = 200_000;

/**
 * Attempts of a model step whose provider keeps failing (429, 5xx, timeouts): the 5th such
 * failure is final. Steps lost with their worker count as attempts too, so Temporal's retry
 * policy allows {@link MODEL_STEP_MAX_ATTEMPTS}: a step retried after a lost worker keeps
 * some of its provider retries.
 */
export const MODEL_STEP_PROVIDER_ATTEMPTS = 5;

/** Most attempts of one model step, lost workers included (the retry policy's maximum). */
export const MODEL_STEP_MAX_ATTEMPTS = 10;

/**
 * Attempts of one hook dispatch activity (the retry policy's maximum). A later attempt runs
 * the callbacks only when no earlier one began them: an attempt records
 * {@link HookDispatchBegan} as its heartbeat details, confirmed by the server, before its
 * first callback, and an attempt that finds that record fails at once with
 * {@link HOOK_DISPATCH_LOST_TYPE}. So an attempt lost before its callbacks (a task the
 * matching service marked started but never delivered, a worker killed as it received the
 * task) costs a heartbeat timeout, and the callbacks still run at most once.
 */
export const HOOK_DISPATCH_MAX_ATTEMPTS = 3;

/**
 * The heartbeat details of a hook dispatch attempt that began its callbacks: the server
 * recorded them before the first callback ran. `began` is the dispatch's `dispatchId`.
 */
export interface HookDispatchBegan {
  began: string;
}

/**
 * `ApplicationFailure.type` of a hook dispatch attempt that found an earlier attempt's
 * {@link HookDispatchBegan} record (non-retryable): that attempt's worker was lost while its
 * callbacks ran, and they are not run again. The workflow treats it as a lost worker
 * (`HOOK_WORKER_LOST`), as it treats the heartbeat timeout of a last attempt.
 */
export const HOOK_DISPATCH_LOST_TYPE = 'HookDispatchLost';
