/**
 * What crosses between the session workflow and its activities: the activity names as
 * histories record them, each activity's one input and one output (hook dispatch, model step,
 * tool description, permission check, tool execution, archive, stream events, definition),
 * the details an inline dispatch attaches to a failure, and the retry constants both sides
 * count with. Workflow-safe: plain types and constants.
 *
 * @module
 */
import type { McpToolRef } from './mcp.js';
import type { SerializedError } from './errors.js';
import type { HookEvent } from './hook-events.js';
import type { DefinitionManifest, SessionIdentity } from './identity.js';
import type { ToolCall } from './conversation.js';
import type { JsonObject } from './json.js';
import type { ContextStamp } from './context-stamp.js';
import type { WorkflowStreamEvent } from './permission-events.js';
import type { PermissionResult } from './permission.js';
import type { HookOutput, Prompt, ToolKind, ToolResult } from './types.js';
import type { SessionLineage } from './workflow-io.js';
import type { LeaseRequest } from './shared-budgets.js';
import type { BudgetCaps, ModelPrice } from './budgets.js';
import type { ApprovalNotifyEvent } from './approval-stages.js';

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
  listMcpTools: 'listMcpTools',
  leaseSharedBudget: 'leaseSharedBudget',
  notifyApproval: 'notifyApproval',
} as const;

/** The name of one of the session's activities. */
export type ActivityName = (typeof ActivityNames)[keyof typeof ActivityNames];

/** Input of the `leaseSharedBudget` activity: a request to a shared budget's workflow. */
export interface LeaseSharedBudgetInput {
  request: LeaseRequest;
  /** The task queue the budget's workflow starts on when no run of it is open. */
  taskQueue: string;
}

/** Input of the `archiveRun` activity: it reads the run by query and stores it. */
export interface ArchiveRunInput {
  sessionId: string;
  /** How many of the run's messages and timeline entries to archive (the rest came later). */
  messages: number;
  timelineEntries: number;
}

/**
 * Input of the `notifyApproval` activity: a stage of a waiting `ask` reached
 * (`advanced.approvals.notify` gets it with the attempt number).
 */
export interface NotifyApprovalInput
  extends Omit<ApprovalNotifyEvent, 'attempt'>, Partial<SessionIdentity> {}

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
  /** Where the session sits under the one that started it: set in sub-agents only. */
  lineage?: SessionLineage;
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
  /** Where the session sits under the one that started it: set in sub-agents only. */
  lineage?: SessionLineage;
  /**
   * The digest of the MCP tool list the session started with (`McpToolList.digest`): the step
   * offers the model exactly those tools. Absent when the session has no MCP servers.
   */
  mcpTools?: string;
  /** A sub-agent's `mcpAllow`: of that list, only the tools these names or patterns match. */
  mcpAllow?: string[];
  /**
   * Set in sessions with a budget only: the most output tokens the step may produce (the
   * provider's limit, and its reservation's output part). The step's output then carries
   * `usage`.
   */
  maxOutputTokens?: number;
  /**
   * Set in sessions with a budget only: what was left of each cap when the step was
   * scheduled, and the price of the session's model (for the step's span, which says what
   * is left once the step is counted).
   */
  budget?: { remaining: BudgetCaps; price?: ModelPrice };
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
  /**
   * Tokens the provider reported for this step (streamed usage included). Kept in the output
   * of sessions with a budget only (`ModelStepInput.maxOutputTokens`); absent when the model
   * reported none (the session then counts the documented estimate).
   */
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
}

/**
 * What an inline dispatch's model step attaches to its failure (the last detail of the
 * ApplicationFailure or CancelledFailure) when its callbacks completed before the model call
 * failed or was cancelled: what they decided.
 */
export interface InlineHookDetail {
  inlineHook: HookDispatchOutcome;
}

/** Input of the `describeToolCall` local activity. */
export interface DescribeToolCallInput extends Partial<SessionIdentity> {
  agentName: string;
  /** The session asking (absent in histories from before versions). */
  sessionId?: string;
  toolName: string;
  input: JsonObject;
  /** Where the session sits under the one that started it: set in sub-agents only. */
  lineage?: SessionLineage;
}

/** What the worker knows of a tool call before it runs. */
export interface ToolCallDescription {
  known: boolean;
  kind: ToolKind;
  affectedPaths: string[];
  /**
   * The tool's `idempotent` (a call may run again after a lost worker), when the worker says
   * so; absent: decided by `kind` (`readonly`). Set only when it differs from that.
   */
  idempotent?: boolean;
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
  /** Where the session sits under the one that started it: set in sub-agents only. */
  lineage?: SessionLineage;
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
  /** Where the session sits under the one that started it: set in sub-agents only. */
  lineage?: SessionLineage;
  /** Set for an MCP tool: which one, as the session recorded it. */
  mcp?: McpToolRef;
  /**
   * The call may run again after a lost attempt: a read-only tool (kind `readonly`: `Read`,
   * `Grep`, `Glob`, a custom tool so declared, an MCP tool with `readOnlyHint`) or an MCP tool
   * its server marks `idempotentHint`. Such an attempt sends no record that it began, so one
   * lost with its worker is retried (up to {@link TOOL_EXECUTION_MAX_ATTEMPTS}) instead of
   * ending as lost. Absent: the tool runs at most once.
   */
  idempotent?: true;
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
  /** Where the session sits under the one that started it: set in sub-agents only. */
  lineage?: SessionLineage;
}

/** What `executeTool` returns. */
export type ExecuteToolOutput = ToolResult & {
  /** The inline PostToolUse dispatch's outcome, when the execution ran one (`hook`). */
  hook?: HookDispatchOutcome;
};

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

/**
 * Attempts of one tool execution (the retry policy's maximum). A later attempt runs the tool
 * only when no earlier one began it, as for a hook dispatch: an attempt records
 * `{ began: toolUseId }` as its heartbeat details, confirmed by the server, before the tool
 * runs, and an attempt that finds that record fails at once with
 * {@link TOOL_EXECUTION_LOST_TYPE}. So a tool runs at most once, and an execution lost before
 * it began costs the tool's heartbeat timeout, not the call.
 */
export const TOOL_EXECUTION_MAX_ATTEMPTS = 3;

/**
 * `ApplicationFailure.type` of a tool execution attempt that found an earlier attempt's
 * record that it began the tool (non-retryable): the call ends as a tool that failed to run.
 */
export const TOOL_EXECUTION_LOST_TYPE = 'ToolExecutionLost';

/**
 * `ApplicationFailure.type` of a tool execution attempt whose record that it began was not
 * confirmed by the server (retryable: the tool did not run).
 */
export const TOOL_EXECUTION_NOT_BEGUN_TYPE = 'ToolExecutionNotBegun';
