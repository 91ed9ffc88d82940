/**
 * The session workflow's own contract: its type and signature, the workflow id of a session,
 * its input, what one run carries to the next when it continues as new (with the runs it
 * archived), what it returns, and the entries of its hook timeline. Workflow-safe: plain types,
 * constants and pure functions.
 *
 * @module
 */
import type { McpToolList } from './mcp.js';
import type { BudgetLedger, BudgetSpend, ModelPrice, SessionBudgetSpec } from './budgets.js';
import type { SessionApprovalPolicy } from './approval-stages.js';
import type { HookErrorRecord, SerializedError } from './errors.js';
import type { HookEvent } from './hook-events.js';
import type { DefinitionManifest } from './identity.js';
import type { ConversationMessage } from './conversation.js';
import type { PermissionPreset } from './permission.js';
import type { PermissionRules } from './permission-rules.js';
import type { SessionEndReason, ToolKind } from './types.js';
import type { CleanupHandle } from './activity-io.js';
import type { SendResult, SendStatus } from './messages.js';
import type { WorkflowStreamEvent } from './permission-events.js';

/**
 * The session workflow's type: what clients start (`client.workflow.start<SessionWorkflow>(
 * SESSION_WORKFLOW, ...)`) and the bundle's entry exports. Recorded in every history and
 * listed by `WorkflowType = 'sessionWorkflow'`: never rename it.
 */
export const SESSION_WORKFLOW = 'sessionWorkflow';

/** The session workflow's signature (`workflows/index.ts` checks its export against it). */
export type SessionWorkflow = (input: SessionWorkflowInput) => Promise<SessionWorkflowResult>;

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
  /**
   * The names of the definition's MCP servers (`mcpServers`): the session lists their tools
   * when it opens and keeps that list (`listMcpTools`). Absent when it has none.
   */
  mcpServers?: string[];
  /**
   * A sub-agent's: the MCP tool list of the session that started it (a sub-agent lists
   * none of its own), so it offers and checks the tools its parent recorded.
   */
  mcpTools?: McpToolList;
  /**
   * A sub-agent's, when its definition lists its `tools`: the MCP tools of the list it may
   * call, as patterns (`mcp__notes__*`); the others are neither offered nor run.
   */
  mcpAllow?: string[];
  /** How permission is decided: a preset, or the agent's function (run as an activity). */
  permission?:
    | { preset: PermissionPreset }
    /** `advanced.permission`, a function on the workers. */
    | { handler: 'function' }
    /** `SessionOptions.permissionHandler`, on the worker of the process that created the session. */
    | { handler: 'session' };
  /**
   * `advanced.permissionRules`: tool name patterns the workflow decides by before `permission`
   * (deny, then ask, then allow). A sub-agent's input carries its top session's. Absent when
   * the definition has none (every session started before they existed).
   */
  permissionRules?: Required<PermissionRules>;
  /** How long an `ask` waits for a person before it is denied, ms. */
  permissionTimeoutMs?: number;
  /**
   * `advanced.requireBoundApprovals`: an answer naming no approval digest is refused. Absent
   * when off (every session started before it existed). A sub-agent's input carries its top
   * session's.
   */
  requireBoundApprovals?: true;
  /**
   * `advanced.approvals`: the reminder and escalation stages of an `ask`'s wait. Absent when
   * not set: such sessions wait, and record, exactly as before stages existed. A sub-agent's
   * input carries its top session's.
   */
  approvals?: SessionApprovalPolicy;
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
  /**
   * The session's budget (`advanced.budgets` and the session's `budgets`). Absent when it has
   * none: such sessions run, and record, exactly as before budgets existed.
   */
  budget?: SessionBudgetSpec;
  /**
   * The sub-agents the model may start through the `Task` tool, and the limits
   * (`advanced.subagents`). Absent when the definition has none: every session started
   * before sub-agents existed, and every one without them, runs as it always did.
   */
  subagents?: SubagentsSpec;
  /** Where this session sits under the session that started it. Set in sub-agents only. */
  lineage?: SessionLineage;
  /** The one prompt a sub-agent runs, then it ends. Set in sub-agents only. */
  task?: SubagentTask;
}

/** The one prompt of a sub-agent's session: the `Task` call's `prompt`. */
export interface SubagentTask {
  /** The request id of the sub-agent's one prompt. */
  requestId: string;
  prompt: string;
  /**
   * The parent's stream events up to the `Task` call's `tool-start`, each naming the parent's
   * path (`main` for a top session): the sub-agent's first activity publishes them before any
   * event of its own, so the stream keeps their order without a local activity in the parent.
   */
  streamStart?: WorkflowStreamEvent[];
}

/**
 * Where a sub-agent's session sits in its tree. Set in a sub-agent's workflow input and in
 * its activity inputs only; a top session has none.
 */
export interface SessionLineage {
  /** The session whose `Task` call started this one. */
  parentSessionId: string;
  /** The top session of the tree: its session hooks and permission handler apply here too. */
  rootSessionId: string;
  /** The sub-agent names from the top session, `main` first: `main/researcher`. */
  agentPath: string;
  /** How deep this session is: 1 under the top session. */
  depth: number;
  /** This sub-agent's name (the `Task` call's `subagent_type`). */
  subagent: string;
  /** The parent's `Task` call. */
  toolUseId: string;
  /** The top session's send whose stream this session's events go to (tagged `agentPath`). */
  stream: { sessionId: string; requestId: string };
}

/** One sub-agent, as a session's workflow input carries it. */
export interface SubagentSpec {
  /** Its name (`subagent_type`). */
  name: string;
  /** The tools it may call, with their kinds (never `Task`: that comes with its depth). */
  tools: Array<{ name: string; kind: ToolKind }>;
  /** Most model steps of its one prompt. */
  maxTurns: number;
  /** Budget of one `Task` call running it, ms. */
  timeoutMs: number;
  /**
   * How many callbacks each event has in it: its own agent-level hooks (or the agent's,
   * when it inherits them) and the top session's hooks.
   */
  hookCounts: Partial<Record<HookEvent, number>>;
  /** How its permission is decided: its own, or (when it inherits) the top session's. */
  permission: NonNullable<SessionWorkflowInput['permission']>;
  /** The sub-agents it may start (when its depth is under `maxDepth`). */
  mayUse: string[];
  /**
   * The MCP tools it may call, as patterns (`mcp__notes__*`), when its `tools` are listed;
   * absent: every MCP tool of the session.
   */
  mcpTools?: string[];
  /**
   * The price of its model (its own, or the agent's when it inherits it), when the session
   * has a budget and the model is priced: its `costUsd` is counted at it.
   */
  price?: ModelPrice;
}

/** `advanced.subagents` as a session's workflow input carries it. */
export interface SubagentsSpec {
  /** Deepest sub-agent: 1, sub-agents start none. */
  maxDepth: number;
  /** Sub-agents of one session running at once. */
  maxConcurrent: number;
  /** Budget of one `Task` call, ms (a sub-agent's own `timeoutMs` overrides it). */
  timeoutMs: number;
  /** The sub-agents, in the order the definition gives them. */
  agents: SubagentSpec[];
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
  /** The MCP tools the session started with (its first run listed them). */
  mcpTools?: McpToolList;
  /** The budget's ledger: caps as raised, spend, raises (absent without a budget). */
  budget?: BudgetLedger;
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

/** A dispatch's outcome on the timeline. */
export type DispatchOutcomeKind =
  'continue' | 'skip' | 'abort' | 'timeout' | 'error' | 'cancelled' | 'worker_lost' | 'refused';

/** One entry of a session's hook timeline. */
export interface TimelineEntry {
  /** 0-based position of the dispatch in the session, across runs. */
  seq: number;
  /** The hook event dispatched. */
  event: HookEvent;
  /** How many callbacks the event had. */
  callbackCount: number;
  /** How the dispatch ended: the merged decision, or how it failed. */
  outcome: DispatchOutcomeKind;
  /** 0-based position of the callback that decided (skip/abort) or failed. */
  decidedBy?: number;
  /** The deciding callback's reason, or the failure's message. */
  reason?: string;
  /** How the dispatch failed (outcomes `error`, `timeout`, `worker_lost` and `refused`). */
  error?: HookErrorRecord;
  /** Wall time of the dispatch as the activity measured it (or the workflow, when lost), ms. */
  durationMs: number;
  /** Workflow time the dispatch started, ms since epoch. */
  startedAt: number;
  /** The tool call's id, for tool events. */
  toolUseId?: string;
  /** The tool of a tool event (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure). */
  toolName?: string;
  /** The request id of the `send()` the dispatch belongs to (absent outside one). */
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
  /**
   * The sub-agent session the dispatch ran in, with `agentPath`: set only on a sub-agent's
   * entries in `Session.timeline({ subagents: true })` (its `seq` counts in that session).
   */
  sessionId?: string;
  /** The sub-agent's path, e.g. `main/researcher` (with `sessionId`). */
  agentPath?: string;
}

/**
 * One move of a session from one version of its agent to another, recorded by the workflow
 * (in its input from then on, carried across continue-as-new, and in the `upgrade` Update's
 * result in the history).
 */
export interface VersionUpgrade {
  /** The version the session ran before the move. */
  fromVersion: string;
  /** That version's definition fingerprint. */
  fromFingerprint: string;
  /** The version the session runs after it. */
  toVersion: string;
  /** That version's definition fingerprint. */
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
  /** A sub-agent's outcome: what its `Task` call returns. Set by sub-agents only. */
  task?: SubagentOutcome;
}

/**
 * How a sub-agent's one prompt ended, compact: its timeline stays in its own history (a
 * sub-agent returns `timeline: []`), so the parent's history does not grow with it.
 */
interface SubagentOutcome {
  status: SendStatus;
  /** Its final assistant text ('' when none). */
  text: string;
  /** Why it failed (SessionStart refused, a hook aborted, ...). */
  error?: SerializedError;
  /** Tool calls it made. */
  toolCalls: number;
  /** Entries of its hook timeline. */
  timelineEntries: number;
  /**
   * What it spent (its ledger's `spent`, its own sub-agents' included): set when it ran under
   * a budget, its share of its parent's; the parent adds it to its own.
   */
  spent?: BudgetSpend;
}
