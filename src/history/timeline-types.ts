/**
 * The types of a session's hook timeline as {@link timelineFromHistory} rebuilds it from its
 * Temporal history: the timeline, its dispatches and their callbacks, its prompts.
 *
 * @module
 */
import type { HistoryBudget } from './timeline-budget.js';
import type { HookErrorRecord } from '../common/errors.js';
import type { HookOutput } from '../common/types.js';
import type { JsonObject, JsonValue } from '../common/json.js';
import type { AbandonedUpgrade, VersionUpgrade } from '../common/workflow-io.js';
import type { ValueDiff } from './diff.js';
import type { HistoryToolCall } from './tool-calls.js';

export type { HistoryToolCall } from './tool-calls.js';
export type { LineChange, ValueDiff } from './diff.js';

/**
 * How a dispatch ended, as far as its history shows:
 * - `continue` / `skip` / `abort`: the callbacks' merged decision (the first skip or abort
 *   wins, as the workflow merges them);
 * - `error`: a callback threw or returned a malformed output, or the activity failed;
 * - `timeout`: the budget ran out inside the activity;
 * - `cancelled`: the prompt was aborted (or the session closed or cancelled) during it;
 * - `worker_lost`: the activity timed out (heartbeat or start-to-close): its worker died;
 * - `running`: not finished yet (open sessions);
 * - `refused`: workers of other versions refused it until its budget was spent (its
 *   attempts are one dispatch: a refused attempt scheduled again keeps its row).
 *
 * The workflow's own timeline also knows `refused` (a dispatch refused while a cancelled
 * callback cleaned up); nothing is scheduled for it, so it is not in the history.
 */
export type HistoryDecision =
  | 'continue'
  | 'skip'
  | 'abort'
  | 'error'
  | 'timeout'
  | 'cancelled'
  | 'worker_lost'
  | 'running'
  /** Every worker that took it ran another version and refused it (nothing ran). */
  | 'refused';

/** One callback of a dispatch: its own decision, why, what it changed, how long it took. */
export interface HistoryCallback {
  /** 0-based position among the event's callbacks (the text shows `#index+1`). */
  index: number;
  action: HookOutput['action'];
  /** The callback's `reason`. */
  reason?: string;
  /** Its skip or abort decided the dispatch (the first one does). */
  decided?: true;
  /** Its own time, ms (absent in histories from before 0.2: only the dispatch's is known). */
  durationMs?: number;
  /** Its `modifiedInput`, as it returned it (merged over the input). */
  modifiedInput?: JsonObject;
  /** That edit against the input the callback was given (every callback gets the original). */
  inputDiff?: ValueDiff;
  /** Its `modifiedOutput` (PostToolUse, PostToolUseFailure). */
  modifiedOutput?: JsonValue;
  /** That replacement against the tool output the callback was given. */
  outputDiff?: ValueDiff;
}

/** One hook dispatch as its history records it. */
export interface HistoryDispatch {
  /**
   * 0-based position among the dispatches in the history. The workflow's own timeline also
   * counts refused dispatches, which schedule nothing, so its `seq` may run ahead of this one.
   */
  seq: number;
  /** The hook event. */
  event: string;
  /** `payload.toolName`, for the tool events. */
  toolName?: string;
  /** `payload.toolUseId`, for the tool events. */
  toolUseId?: string;
  /** Callbacks run: the activity's count when it reported, else the workflow's expectation. */
  callbackCount: number;
  decision: HistoryDecision;
  /** The session's version, which only a worker of that version runs (absent before versions). */
  version?: string;
  /**
   * Run as a local activity (`hookDispatch: 'local'`): its history is one marker, recorded
   * once it ended. The marker records no input: `dispatchId` is empty (unless a callback
   * outlived it), the budget is the session's hook budget, a tool event's call is the one in
   * progress, and edits are diffed against what the history shows the callbacks were given.
   */
  local?: true;
  /**
   * Run inline: UserPromptSubmit (`hookDispatch: { UserPromptSubmit: 'inline' }`) inside the
   * send's first model step, whose `modelStep` activity is this row's (its result or failure
   * carries the outcome); PostToolUse (`{ PostToolUse: 'inline' }`) inside the tool's
   * `executeTool` activity, after the tool succeeded (the row exists once the execution
   * closed with the outcome, or was cancelled while the callbacks ran).
   */
  inline?: true;
  /** How many times a worker of another version refused it before it ran (or was refused for good). */
  refusals?: number;
  /** 0-based position of the callback that decided (skip/abort) or failed. */
  decidedBy?: number;
  /** Why: the deciding callback's reason, the error message, the budget that ran out, ... */
  reason?: string;
  /** Every callback's own output, when the dispatch completed (in order). */
  callbacks?: HistoryCallback[];
  /**
   * How it failed, when the activity reported it (`error`: a callback threw or returned a
   * malformed output; `timeout`): event, callback, code, name and message.
   */
  error?: HookErrorRecord;
  /**
   * How long it took, ms: the activity's own measure when it reported one, else the time
   * between the scheduled and the closing event. Absent while running.
   */
  durationMs?: number;
  /** When the dispatch was scheduled, ms since epoch. */
  scheduledAt: number;
  /** The budget the callbacks had, ms. */
  budgetMs: number;
  /** The dispatch's id (also the id a lingering callback is waited on by). */
  dispatchId: string;
  /** Event id of `ActivityTaskScheduled` (of `MarkerRecorded` for a local dispatch). */
  scheduledEventId: number;
  /** Event id of the event that closed the activity, when closed (the marker, if local). */
  closedEventId?: number;
  /** Whether the workflow asked to cancel the activity (abort, close, cancellation). */
  cancelRequested: boolean;
  /**
   * A callback outlived the dispatch (timeout or cancellation): whether it settled, its
   * worker was lost, or the session still waits for it.
   */
  cleanup?: 'pending' | 'settled' | 'lost';
}

/** One prompt (a `send` Update) as its history records it. */
export interface HistoryPrompt {
  /** The send's request id (its Update id). */
  requestId: string;
  /** The prompt's text (image parts as `[image]`). */
  prompt: string;
  /** When the workflow accepted it, ms since epoch. */
  acceptedAt: number;
  /** When it ended, ms since epoch (absent while it runs). */
  completedAt?: number;
  /** How it ended (`failed`: the Update failed); absent while it runs. */
  status?: 'completed' | 'interrupted' | 'aborted' | 'max_turns' | 'budget_exceeded' | 'failed';
  /** The answer's text, or the failure's message. */
  text?: string;
  /** `seq` of the dispatches scheduled while it ran, in order. */
  dispatches: number[];
  /** `toolUseId` of its tool calls, in order. */
  toolCalls: string[];
}

/** The SessionEnd marker: recorded once, right before SessionEnd is scheduled. */
interface HistorySessionEndMarker {
  /** SessionEnd's `reason`: `other` (close), `idle_timeout`, `cancelled`, ... */
  reason: string;
  /** Workflow time it was recorded, ms since epoch. */
  at: number;
  /** Event id of the `WorkflowPropertiesModified` event carrying it. */
  eventId: number;
}

/** A workflow execution's status, named as the Temporal client names it. */
export type HistoryWorkflowStatus =
  | 'RUNNING'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TERMINATED'
  | 'TIMED_OUT'
  | 'CONTINUED_AS_NEW';

/** The MCP tool list a session used, as its history records it. */
export interface HistoryMcpTools {
  /** sha256 (hex) of the list: what model steps name it by. */
  digest: string;
  /** Each tool, `mcp__<server>__<tool>`, with the digest of its definition. */
  tools: Array<{ name: string; server: string; digest: string }>;
  /** The servers that were down when the list was taken, and why. */
  unavailable: Array<{ server: string; message: string }>;
}

/** One `modelStep` activity as its history records it. */
export interface HistoryModelStep {
  /** The send it ran for (its Update id). */
  requestId?: string;
  /** 0-based step within that send. */
  step?: number;
  /** 0-based step within the session, across prompts. */
  modelStepIndex?: number;
  /** When it was scheduled, ms since epoch. */
  scheduledAt?: number;
  /** Event id of its `ActivityTaskScheduled`. */
  scheduledEventId: number;
  /** How its activity closed (`running` while open). */
  status: 'completed' | 'failed' | 'worker_lost' | 'cancelled' | 'running';
  /** Event id of the event that closed it. */
  closedEventId?: number;
  /** Scheduled to closed, ms. */
  durationMs?: number;
  /** Why the model stopped (`stop`, `tool-calls`, ...), when it completed. */
  finishReason?: string;
  /** It ran only its inline dispatch (`hook`) or found no cached context (`context`). */
  deferred?: string;
  /** The tool calls the model asked for, by tool use id, in order. */
  toolUseIds?: string[];
  /** The tokens the provider reported, when the result records them (sessions with a budget). */
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
}

/** A session's hook timeline rebuilt from its history. */
export interface HistoryTimeline {
  /** The workflow id, when the history records it (servers from 1.24 on do). */
  workflowId?: string;
  /** The session id, from the workflow's input. */
  sessionId?: string;
  /** The agent's name, from the workflow's input. */
  agentName?: string;
  /**
   * A sub-agent's place in the tree (`main/researcher`) and the session whose `Task` call
   * started it, from the workflow's input; absent for a top session.
   */
  subagent?: { agentPath: string; parentSessionId: string; depth: number };
  /**
   * The agent version the session started with, from the workflow's input (absent in
   * sessions started before versions existed).
   */
  version?: string;
  /** The fingerprint of the agent's definition, when the input records one. */
  fingerprint?: string;
  /**
   * The MCP tools the session started with (`mcpServers`): the list's digest, each tool by
   * name with its digest, and the servers that could not be reached. From the `listMcpTools`
   * activity's result (a first run) or the carried list (a later run); absent without MCP
   * servers (or while the listing runs).
   */
  mcpTools?: HistoryMcpTools;
  /**
   * The session's budget recounted from this history (and the ledger an earlier run carried
   * in): caps, spend, what is left. Absent without a budget.
   */
  budget?: HistoryBudget;
  /** The workflow type (`sessionWorkflow` for sessions). */
  workflowType?: string;
  /** How the execution stands at the last event of the history. */
  status: HistoryWorkflowStatus;
  /** When the execution started, ms since epoch. */
  startedAt?: number;
  /** When the execution closed, ms since epoch (absent while running). */
  closedAt?: number;
  /** Every hook dispatch, in the order scheduled. */
  dispatches: HistoryDispatch[];
  /** Every model step, in the order scheduled (absent when the run made none). */
  modelSteps?: HistoryModelStep[];
  /**
   * Every tool call, in the order the model asked for them: its input and how it was
   * changed, its permission (the policy's answer, a person's wait and answer), its result.
   */
  toolCalls: HistoryToolCall[];
  /**
   * Every prompt (`send` Update) of this run, in the order accepted: its text, how it ended,
   * and the dispatches and tool calls that ran for it (the session page shows the session as
   * these turns). Dispatches outside every prompt (SessionStart, SessionEnd) belong to none.
   */
  prompts: HistoryPrompt[];
  /**
   * The session's moves to other versions (`session.upgrade()`), from the `upgrade` Updates'
   * results: from which version to which, when, by whom, after how many prompts. Dispatches
   * before a move carry its `fromVersion`, later ones its `toVersion`. Absent when none.
   */
  upgrades?: VersionUpgrade[];
  /**
   * Moves begun whose client sent neither finish nor cancel in time (it died): the session
   * gave its turn back and stayed on its version. From the memo upserts (`upgradeAbandoned`);
   * absent when none.
   */
  abandonedUpgrades?: AbandonedUpgrade[];
  /** The SessionEnd marker, once recorded. */
  sessionEndMarker?: HistorySessionEndMarker;
  /** SessionEnd's reason, from the workflow's result (completed sessions). */
  endReason?: string;
  /** Prompts the session handled, from the workflow's result (completed sessions). */
  promptsHandled?: number;
  /** Why the session never opened (SessionStart aborted or failed), from the result. */
  startError?: string;
  /** The failure or termination reason of a failed or terminated execution. */
  closeReason?: string;
  /** Number of events in the history. */
  eventCount: number;
}
