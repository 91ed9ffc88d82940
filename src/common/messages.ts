/**
 * What crosses between the session workflow and its clients: the typed Update and Query
 * definitions both sides use (send, abort, close, handoff, permission decision, upgrade;
 * describe, timeline, conversation pages, archives ...) and their arguments and answers.
 * Workflow-safe: the definitions come from `@temporalio/workflow`'s
 * `defineUpdate`/`defineQuery`, plain objects that clients import outside the sandbox too (as
 * Temporal's samples share theirs).
 *
 * @module
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { McpToolList } from './mcp.js';
import type { BudgetCaps, BudgetExceeded, BudgetStatus } from './budgets.js';
import type { HookErrorRecord, SerializedError } from './errors.js';
import type { ConversationMessage } from './conversation.js';
import type { JsonObject } from './json.js';
import type { PendingPermission, PermissionAnswer } from './permission.js';
import type { Prompt, SessionEndReason, ToolDisplay } from './types.js';
import type { AbandonedUpgrade, RunArchive, TimelineEntry, VersionUpgrade } from './workflow-io.js';

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
  /** Set caps of the session's budget (a person raising it); answers the budget as it stands. */
  raiseBudget: defineUpdate<BudgetStatus, [RaiseBudgetRequest]>('raiseBudget'),
} as const;

/** The `raiseBudget` Update's argument. */
interface RaiseBudgetRequest {
  /** The caps to set (others stay as they are). */
  caps: BudgetCaps;
  /** Who raised it: the client's identity (Temporal does not hand it to the workflow). */
  identity?: string;
}

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
  /**
   * Why the session cancelled its sub-agent with this workflow id: its `Task` call's timeout,
   * or the running prompt's abort. What a sub-agent's dispatch activity asks after its own
   * `abortReason` answered a record with `askParent`.
   */
  subagentAbortReason: defineQuery<AbortRecord | null, [string]>('subagentAbortReason'),
  /** This run's whole transcript in one answer (small sessions, tests). */
  conversation: defineQuery<ConversationMessage[]>('conversation'),
  /** The model's context, one page from the given index. */
  conversationPage: defineQuery<ConversationPage, [number]>('conversationPage'),
  pendingPermissions: defineQuery<PendingPermission[]>('pendingPermissions'),
  /**
   * This run's sub-agents: those running, and the latest finished (at most 100), in the
   * order their `Task` calls started them; `[]` in a session without sub-agents.
   */
  children: defineQuery<ChildRunInfo[]>('children'),
  /** This run's transcript, one page from the given index. */
  transcriptPage: defineQuery<ConversationPage, [number]>('transcriptPage'),
  archives: defineQuery<SessionArchives>('archives'),
  /**
   * The MCP tools the session started with (`mcpServers`), schemas included; null when it
   * has no MCP servers. A model step whose worker has no copy of the list reads it here.
   */
  mcpTools: defineQuery<McpToolList | null>('mcpTools'),
} as const;

/** The `archives` query's answer: earlier runs, and how much of the session they hold. */
interface SessionArchives {
  archives: RunArchive[];
  /** Messages of earlier runs. */
  transcriptBase: number;
  /** Timeline entries of earlier runs. */
  timelineBase: number;
}

/** A sub-agent a session's `Task` call started, as the `children` query lists it. */
export interface ChildRunInfo {
  /** The `Task` call's tool-use id. */
  toolUseId: string;
  /** The sub-agent's session id, `<parent session id>/<model step>-<toolUseId>`. */
  sessionId: string;
  /** Its workflow id, `session-<sessionId>`. */
  workflowId: string;
  /** Its path of sub-agent names from the top session, e.g. `main/researcher`. */
  agentPath: string;
  /** The sub-agent's name (`subagent_type`). */
  subagent: string;
  /** When it was started, ms since the epoch (workflow time). */
  startedAt: number;
  status: 'running' | 'completed' | 'failed' | 'timed_out' | 'cancelled';
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

/**
 * Status of a finished `send()`. `budget_exceeded`: a model step or tool call would have
 * passed a cap of the session's budget and was not made (`SendResult.budgetExceeded` names it).
 */
export type SendStatus = 'completed' | 'interrupted' | 'aborted' | 'max_turns' | 'budget_exceeded';

/** A tool call the model made during one `send()`. */
export interface ToolCallRecord {
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The call's input as it last stood: the model's, with the edits of hooks and permission. */
  toolInput: JsonObject;
  /**
   * How it ended: `success` or `error` (it ran, or a hook turned it into an error result),
   * `skipped` (a hook skipped it), `denied` (permission), `aborted` (a hook blocked it), or
   * `cancelled` (not run to its end: the `send()` was aborted, or an earlier call of the same
   * step was denied with `interrupt` or had a hook fail).
   */
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
  /** The cap that stopped this prompt, when `status` is `budget_exceeded`. */
  budgetExceeded?: BudgetExceeded;
}

/** An abort as the workflow records it. */
export interface AbortRecord {
  /** Id the aborting client chose; it maps back to the very reason object in that process. */
  abortId: string;
  reason: SerializedError;
  /**
   * Set by a sub-agent cancelled by its parent session: the parent's workflow id, whose
   * `subagentAbortReason` query holds the real reason. Never taken from a client's request.
   */
  askParent?: string;
}

/** The `abort` update's argument. */
export interface AbortRequest extends Omit<AbortRecord, 'askParent'> {
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

/** The `describe` query's answer. */
export interface SessionDescription {
  /** The session's id. */
  sessionId: string;
  /** Where the session is in its life. */
  status: 'starting' | 'open' | 'closing' | 'closed';
  /** The task queue the session's activities go to. */
  taskQueue: string;
  /** Set once SessionEnd was scheduled (or skipped for want of callbacks); never cleared. */
  sessionEndMarker?: { reason: SessionEndReason; at: number };
  /**
   * Hook callbacks whose dispatch was cancelled but which have not yet settled on their
   * worker; the session waits for them before it closes or hands off.
   */
  pendingCleanups: number;
  /** Prompts (`send()` calls) the session has finished, over all its runs. */
  promptsHandled: number;
  /** Whether a prompt is running now. */
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
  /** The session's budget: caps, spend and what is left (absent when it has none). */
  budget?: BudgetStatus;
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
  /** The version the session runs now. */
  version: string;
  /** The move `finish` recorded (absent for `begin` and `cancel`). */
  upgrade?: VersionUpgrade;
}

/** The `decidePermission` update's argument: a person's answer to a pending `ask`. */
export interface PermissionDecisionRequest {
  requestId: string;
  answer: PermissionAnswer;
  /**
   * The approval digest of the call the person was shown (`PendingPermission.digest`, whole
   * or its first 12 or more hex digits): the validator refuses the answer when it is not the
   * request's. Absent: the answer is accepted unbound (older clients).
   */
  digest?: string;
  /**
   * Who answered: the identity of the client that sends the Update (the one Temporal records
   * with it), for the send's stream. Absent from older clients.
   */
  identity?: string;
}

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
