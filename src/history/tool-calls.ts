/**
 * The tool calls of a session as its history records them: what the model asked for (the
 * `modelStep` results), how hooks, the permission policy and people changed the input, the
 * permission stage (the policy's answer, a person's wait and answer, the deadline) and the
 * tool's result. Read by {@link timelineFromHistory} as it walks the events; pure.
 *
 * Calls run one at a time (a prompt's calls in order, one prompt at a time), so events
 * without a tool use id (the `describeToolCall` marker, the approval timer, the
 * `decidePermission` Update) belong to the call in progress.
 *
 * @module
 */
import { stageOfTimerSummary, stageReached } from '../common/approval-stages.js';
import { DEFAULTS } from '../common/defaults.js';
import { isPlainObject, type JsonObject, type JsonValue } from '../common/json.js';
import {
  presetDecision,
  type PermissionAnswer,
  type PermissionPreset,
  type PermissionResult,
} from '../common/permission.js';
import type { SessionWorkflowInput } from '../common/workflow-io.js';
import type { ToolKind, ToolResult } from '../common/types.js';
import { diffValues, type ValueDiff } from './diff.js';

/** How the permission policy was set: a preset, or a permission function. */
type HistoryPolicy =
  `preset ${PermissionPreset}` | 'permission function' | 'session permission function';

/** A person's wait for a permission `ask`, and how it ended. */
interface HistoryAsk {
  /** When the request was asked, ms since epoch (the approval timer's start). */
  askedAt: number;
  /** When silence turns into a denial, ms since epoch. */
  deadline: number;
  /**
   * - `approved` / `denied`: a person answered (the `decidePermission` Update);
   * - `expired`: no answer by the deadline: denied;
   * - `cancelled`: the prompt was aborted (or the session closed) while it waited;
   * - `waiting`: still waiting (open sessions).
   */
  outcome: 'approved' | 'denied' | 'expired' | 'cancelled' | 'waiting';
  /** How long it waited, ms (to the answer, the deadline or the cancellation). */
  waitedMs?: number;
  /** The identity of the client that sent the answer, as the Update records it. */
  by?: string;
  /** The request's id (`approve <session> <requestId>`), from the answer. */
  requestId?: string;
  /**
   * The call's approval digest: the session's (from the `permission-decided` event the tool's
   * activity carries), else the one the answer named (whole or its first 12+ hex digits).
   * Absent for an answer that named none, before the tool ran.
   */
  digest?: string;
  /** Whether the answer named the call's approval digest (`false`: accepted unbound). */
  bound?: boolean;
  /** An approval with edit: the approval digest of the call as it ran (the edited input's). */
  updatedInputDigest?: string;
  /** The input the person approved, when they edited it. */
  updatedInput?: JsonObject;
  /** That edit against the input they were asked about. */
  inputDiff?: ValueDiff;
  /** The denial's message. */
  message?: string;
  /** The denial also stopped the prompt. */
  interrupt?: boolean;
  /** Event id of the approval timer's `TimerStarted`. */
  timerEventId: number;
  /**
   * The stages `advanced.approvals` reached while it waited (their timers fired), in order:
   * `reminded`, `escalated` (to `escalateTo`). Absent when none was reached.
   */
  stages?: { stage: 'reminded' | 'escalated'; at: number; escalateTo?: string }[];
}

/** The permission stage of one call. */
interface HistoryPermission {
  /** How the policy was set. */
  policy: HistoryPolicy;
  /** The policy's answer (absent while a permission function runs, or when it failed to report). */
  answer?: PermissionResult['behavior'];
  /** The policy's message (a denial's, an ask's). */
  message?: string;
  /** The policy's edit of the input (`allow` with `updatedInput`), against the input it judged. */
  inputDiff?: ValueDiff;
  /** How long the permission function took, ms (absent for presets: they take no time). */
  durationMs?: number;
  /** The tool's kind as the policy judged it. */
  kind?: ToolKind;
  /** The wait for a person, when the policy asked one. */
  ask?: HistoryAsk;
}

/** The tool's run. */
interface HistoryToolResult {
  /**
   * `success` / `error`: the tool's result; `failed`: the activity failed; `worker_lost`: it
   * timed out (its worker died); `cancelled`: the prompt was aborted while it ran; `running`.
   */
  status: 'success' | 'error' | 'failed' | 'worker_lost' | 'cancelled' | 'running';
  /** How long it ran, ms (scheduled to closed). */
  durationMs?: number;
  /** Size of what the model got, UTF-8 bytes. */
  sizeBytes?: number;
  /** The model got a cut output; the whole is in the payload store under `outputRef`. */
  truncated: boolean;
  /** Where the whole output is kept (`session.readPayload(ref)`). */
  outputRef?: string;
  /** The result itself was moved out of history into the payload store (large results). */
  offloaded: boolean;
  /** The result's `display.summary`. */
  summary?: string;
  /** The error's type and message (status `error` or `failed`). */
  error?: { type: string; message: string; code?: string };
  /** Event id of the event that closed the tool's activity (its result, when it completed). */
  closedEventId?: number;
}

/**
 * The sub-agent a `Task` call ran (`advanced.subagents`): a child workflow of the session,
 * whose own timeline is in its own history (`inspect` shows it under the call).
 */
export interface HistoryChildSession {
  /** The sub-agent's session id (`<parent>/<model step>-<toolUseId>`). */
  sessionId: string;
  /** Its workflow id (`session-` and its session id). */
  workflowId: string;
  /** Its place in the tree, e.g. `main/researcher`. */
  agentPath: string;
  /** The sub-agent's name (the call's `subagent_type`). */
  subagent: string;
  /**
   * How its workflow stands at the end of this history: `running`, or how it closed
   * (`not_started`: Temporal refused the start, an id already used).
   */
  status:
    'running' | 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out' | 'not_started';
  /** Tool calls it made, from its result (closed sub-agents). */
  toolCalls?: number;
}

/** One tool call. */
export interface HistoryToolCall {
  toolUseId: string;
  toolName: string;
  /** The input as the model asked for it. */
  input?: JsonObject;
  /** The input the tool ran with (absent when it did not run). */
  executedInput?: JsonObject;
  /** What hooks, the policy and people changed, between the two. */
  inputDiff?: ValueDiff;
  /** The permission stage, when the call reached it. */
  permission?: HistoryPermission;
  /** The tool's run, when it ran. */
  result?: HistoryToolResult;
  /** `seq` of the call's hook dispatches, in order. */
  dispatches: number[];
  /** The sub-agent a `Task` call started, in place of a tool's run. */
  child?: HistoryChildSession;
}

/** What a dispatch tells the tracker: enough of {@link HistoryDispatch} to follow a call. */
interface TrackedDispatch {
  seq: number;
  event: string;
  toolUseId?: string;
  toolName?: string;
  decision: string;
}

type ExecuteOutcome =
  | { kind: 'completed'; result: ToolResult | undefined; offloaded: boolean }
  | { kind: 'failed'; message: string }
  | { kind: 'worker_lost' }
  | { kind: 'cancelled' };

/** Follows a history's tool calls as {@link timelineFromHistory} reads its events. */
export class ToolCallTracker {
  /** Every call, in the order first seen. */
  readonly calls: HistoryToolCall[] = [];
  readonly #byId = new Map<string, CallState>();
  /** The calls the latest model step asked for, in order, and where the run is in them. */
  #queue: CallState[] = [];
  #current: CallState | undefined;
  readonly #preset: PermissionPreset | undefined;
  readonly #policy: HistoryPolicy;
  readonly #timeoutMs: number;

  constructor(input: Partial<SessionWorkflowInput> | undefined) {
    const permission = input?.permission ?? { preset: 'default' as const };
    if ('preset' in permission) {
      this.#preset = permission.preset;
      this.#policy = `preset ${permission.preset}`;
    } else {
      this.#policy =
        'handler' in permission && permission.handler === 'session'
          ? 'session permission function'
          : 'permission function';
    }
    this.#timeoutMs = input?.permissionTimeoutMs ?? DEFAULTS.permissionTimeoutMs;
    this.#escalateTo = input?.approvals?.escalateTo;
  }

  /** `advanced.approvals.escalateTo` of the session. */
  readonly #escalateTo: string | undefined;
  /** The open ask's stage timers (`advanced.approvals`), by their `TimerStarted` event id. */
  readonly #stageTimers = new Map<number, 'remind' | 'escalate'>();

  /** A model step was scheduled: the previous step's calls are over. */
  modelStepScheduled(): void {
    this.#current = undefined;
    this.#queue = [];
  }

  /** A model step completed, asking for these calls (run next, in order). */
  modelStepCompleted(toolCalls: unknown): void {
    if (!Array.isArray(toolCalls)) return;
    this.#queue = [];
    for (const call of toolCalls) {
      if (!isPlainObject(call) || typeof call.toolUseId !== 'string') continue;
      const state = this.#call(call.toolUseId, String(call.toolName ?? 'unknown'));
      if (isPlainObject(call.input)) state.call.input = call.input as JsonObject;
      state.input ??= state.call.input;
      this.#queue.push(state);
    }
  }

  /** A tool event's dispatch was scheduled, with the input its callbacks get. */
  dispatchScheduled(dispatch: TrackedDispatch, toolInput: unknown): void {
    if (dispatch.toolUseId === undefined) return;
    const state = this.#enter(dispatch.toolUseId, dispatch.toolName);
    state.call.dispatches.push(dispatch.seq);
    state.call.input ??= isPlainObject(toolInput) ? (toolInput as JsonObject) : undefined;
    if (isPlainObject(toolInput)) state.input = toolInput as JsonObject;
    state.lastDispatch = dispatch;
  }

  /**
   * The call a local dispatch of a tool event belongs to (its marker names the tool, not the
   * call): PreToolUse starts the next call of that tool the model asked for; the other tool
   * events belong to the call in progress when it is of that tool, else the next such call.
   * With what its callbacks were given: the input as it stands, the tool's output.
   */
  localDispatchCall(
    event: string,
    toolName: string,
  ): { toolUseId: string; toolInput?: JsonObject; toolOutput?: JsonValue } | undefined {
    const current = this.#current;
    let state: CallState | undefined;
    if (event !== 'PreToolUse' && current?.call.toolName === toolName) state = current;
    else {
      const from = current ? this.#queue.indexOf(current) + 1 : 0;
      state = this.#queue.slice(from).find((s) => s.call.toolName === toolName);
    }
    if (!state) return undefined;
    return {
      toolUseId: state.call.toolUseId,
      ...(state.input !== undefined ? { toolInput: state.input } : {}),
      ...(state.output !== undefined ? { toolOutput: state.output } : {}),
    };
  }

  /**
   * A tool event's dispatch closed. PreToolUse and PermissionRequest edits (`modifiedInput`,
   * merged as the workflow merges them) become the call's input.
   */
  dispatchClosed(dispatch: TrackedDispatch, modifiedInput: JsonObject | undefined): void {
    if (dispatch.toolUseId === undefined) return;
    const state = this.#byId.get(dispatch.toolUseId);
    if (!state) return;
    if (dispatch.event === 'PermissionRequest') {
      state.permissionHookEnded = dispatch.decision !== 'continue';
      if (modifiedInput && dispatch.decision === 'continue') state.redescribe = true;
    }
    if (dispatch.event === 'PreToolUse' || dispatch.event === 'PermissionRequest') {
      if (modifiedInput && state.input) state.input = { ...state.input, ...modifiedInput };
    }
  }

  /** The `describeToolCall` local activity's marker: the call's kind (the policy judges it). */
  described(result: unknown): void {
    const current = this.#current;
    let state: CallState | undefined;
    if (current && !current.described) state = current;
    else if (current?.redescribe) {
      current.redescribe = false;
      state = current;
    } else {
      // A call with no hook before it: the next one the model asked for.
      const next = this.#queue[current ? this.#queue.indexOf(current) + 1 : 0];
      if (next) state = this.#enter(next.call.toolUseId);
    }
    if (!state) return;
    state.described = true;
    if (isPlainObject(result)) {
      state.known = result.known !== false;
      if (typeof result.kind === 'string') state.kind = result.kind as ToolKind;
    }
  }

  /** The permission function was asked (`checkPermission` scheduled). */
  permissionCheckScheduled(toolUseId: string, input: unknown): CallState {
    const state = this.#enter(toolUseId);
    if (isPlainObject(input)) state.input = input as JsonObject;
    state.call.permission = { policy: this.#policy };
    if (state.kind) state.call.permission.kind = state.kind;
    return state;
  }

  /** The permission function's answer (`checkPermission` closed). */
  permissionChecked(state: CallState, output: unknown, durationMs: number | undefined): void {
    const permission = (state.call.permission ??= { policy: this.#policy });
    if (durationMs !== undefined) permission.durationMs = durationMs;
    if (!isPlainObject(output)) {
      permission.answer = 'deny';
      permission.message = 'the permission check failed';
      return;
    }
    if (output.ok === true && isPlainObject(output.result)) {
      this.#policyAnswer(state, output.result as PermissionResult);
    } else {
      const error = isPlainObject(output.error) ? output.error : {};
      permission.answer = 'deny';
      permission.message = `Permission check for ${state.call.toolName} failed: ${String(error.message ?? 'unknown error')}`;
    }
  }

  /**
   * A timer started. During a call's permission stage that is the approval deadline (no other
   * timer starts while a prompt runs); a timer whose summary says otherwise is not.
   */
  timerStarted(eventId: number, at: number, durationMs: number, summary: string | undefined): void {
    const staged = stageOfTimerSummary(summary);
    if (staged) {
      // Started after the deadline's timer, while its ask is open.
      if (this.#openAsk) this.#stageTimers.set(eventId, staged);
      return;
    }
    const state = this.#current;
    if (summary !== undefined && !summary.startsWith('approval deadline')) return;
    if (!state || state.call.result || state.ask) return;
    if (!state.call.permission) this.#presetAnswer(state);
    const permission = (state.call.permission ??= { policy: this.#policy, answer: 'ask' });
    permission.answer = 'ask';
    const ask: HistoryAsk = {
      askedAt: at,
      deadline: at + (durationMs > 0 ? durationMs : this.#timeoutMs),
      outcome: 'waiting',
      timerEventId: eventId,
    };
    permission.ask = ask;
    state.ask = ask;
    this.#openAsk = { state, timerEventId: eventId };
  }

  #openAsk: { state: CallState; timerEventId: number } | undefined;

  /** A `decidePermission` Update was accepted: a person's answer to the open ask. */
  decided(at: number, request: unknown, identity: string | undefined): void {
    const open = this.#openAsk;
    if (!open || !isPlainObject(request) || !isPlainObject(request.answer)) return;
    const ask = open.state.ask!;
    const answer = request.answer as PermissionAnswer;
    ask.outcome = answer.behavior === 'allow' ? 'approved' : 'denied';
    ask.waitedMs = Math.max(0, at - ask.askedAt);
    if (identity) ask.by = identity;
    if (typeof request.requestId === 'string') ask.requestId = request.requestId;
    ask.bound = typeof request.digest === 'string';
    if (typeof request.digest === 'string') ask.digest = request.digest;
    if (answer.behavior === 'allow' && isPlainObject(answer.updatedInput)) {
      ask.updatedInput = answer.updatedInput;
      const diff = diffValues(open.state.input, answer.updatedInput);
      if (diff) ask.inputDiff = diff;
      open.state.input = answer.updatedInput;
    }
    if (answer.behavior === 'deny') {
      if (typeof answer.message === 'string') ask.message = answer.message;
      if (answer.interrupt === true) ask.interrupt = true;
    }
    this.#openAsk = undefined;
  }

  /** A timer fired or was cancelled: the open ask's deadline passed, or its wait ended. */
  timerClosed(startedEventId: number, at: number, fired: boolean): void {
    const open = this.#openAsk;
    const staged = this.#stageTimers.get(startedEventId);
    if (staged) {
      this.#stageTimers.delete(startedEventId);
      if (!fired || !open) return;
      const escalateTo = staged === 'escalate' ? this.#escalateTo : undefined;
      (open.state.ask!.stages ??= []).push({
        stage: stageReached(staged),
        at,
        ...(escalateTo !== undefined ? { escalateTo } : {}),
      });
      return;
    }
    if (!open || open.timerEventId !== startedEventId) return;
    const ask = open.state.ask!;
    ask.outcome = fired ? 'expired' : 'cancelled';
    ask.waitedMs = Math.max(0, (fired ? ask.deadline : at) - ask.askedAt);
    this.#openAsk = undefined;
  }

  /**
   * The person's `permission-decided` event of the call, as the tool's activity carries it to
   * the send's stream: the digests of the answer.
   */
  personDecided(state: CallState, event: Record<string, unknown>): void {
    const ask = state.ask;
    if (!ask) return;
    if (typeof event.digest === 'string') ask.digest = event.digest;
    if (typeof event.bound === 'boolean') ask.bound = event.bound;
    if (typeof event.updatedInputDigest === 'string') {
      ask.updatedInputDigest = event.updatedInputDigest;
    }
  }

  /** The tool was scheduled (`executeTool`), with the input it runs with. */
  executeScheduled(toolUseId: string, toolName: unknown, input: unknown): CallState {
    const state = this.#enter(toolUseId, typeof toolName === 'string' ? toolName : undefined);
    if (!state.call.permission) this.#presetAnswer(state);
    if (isPlainObject(input)) {
      state.call.executedInput = input as JsonObject;
      const diff = state.call.input ? diffValues(state.call.input, input as JsonObject) : undefined;
      if (diff) state.call.inputDiff = diff;
    }
    state.call.result = { status: 'running', truncated: false, offloaded: false };
    return state;
  }

  /**
   * A `Task` call started its sub-agent (`StartChildWorkflowExecutionInitiated`): the call's
   * run, with the input the sub-agent was given. A `Task` call is described in workflow code
   * (kind `readonly`), so no marker says so.
   */
  childScheduled(toolUseId: string, input: JsonObject, child: HistoryChildSession): CallState {
    const state = this.#call(toolUseId, 'Task');
    state.described = true;
    state.kind = 'readonly';
    const entered = this.executeScheduled(toolUseId, 'Task', input);
    entered.call.child = child;
    return entered;
  }

  /** The tool's activity closed. */
  executeClosed(state: CallState, outcome: ExecuteOutcome, durationMs: number | undefined): void {
    const result: HistoryToolResult = { status: 'running', truncated: false, offloaded: false };
    if (durationMs !== undefined) result.durationMs = durationMs;
    switch (outcome.kind) {
      case 'completed': {
        const ran = outcome.result;
        result.offloaded = outcome.offloaded;
        result.status = ran?.status === 'success' ? 'success' : 'error';
        if (ran && typeof ran.model === 'string') {
          result.sizeBytes = new TextEncoder().encode(ran.model).length;
        }
        if (ran && ran.model !== undefined) state.output = ran.model as JsonValue;
        if (typeof ran?.outputRef === 'string') {
          result.truncated = true;
          result.outputRef = ran.outputRef;
        }
        if (typeof ran?.display?.summary === 'string') result.summary = ran.display.summary;
        if (ran?.status === 'error' && ran.error) {
          result.error = { type: String(ran.error.type), message: String(ran.error.message) };
          if (ran.error.code) result.error.code = ran.error.code;
        }
        break;
      }
      case 'failed':
        result.status = 'failed';
        result.error = { type: 'ActivityFailure', message: outcome.message };
        break;
      case 'worker_lost':
        result.status = 'worker_lost';
        break;
      case 'cancelled':
        result.status = 'cancelled';
        break;
    }
    state.call.result = result;
  }

  /**
   * The history is read: a call that reached the policy, with a preset that left no trace
   * (a denial: neither a wait nor a run follows), gets the preset's answer.
   */
  finish(): HistoryToolCall[] {
    for (const state of this.#byId.values()) {
      if (!state.call.permission && !state.call.result) this.#presetAnswer(state);
    }
    return this.calls;
  }

  /** A preset's answer for a call that reached the permission stage (presets leave no event). */
  #presetAnswer(state: CallState): void {
    if (!this.#preset || !state.described || state.known === false) return;
    if (state.permissionHookEnded) return;
    const last = state.lastDispatch;
    if (last?.event === 'PermissionRequest' && last.decision === 'running') return;
    const kind = state.kind ?? 'execute';
    state.call.permission = { policy: this.#policy, kind };
    this.#policyAnswer(state, presetDecision(this.#preset, kind));
  }

  #policyAnswer(state: CallState, result: PermissionResult): void {
    const permission = (state.call.permission ??= { policy: this.#policy });
    permission.answer = result.behavior;
    if ('message' in result && typeof result.message === 'string') {
      permission.message = result.message;
    }
    if (result.behavior === 'allow' && isPlainObject(result.updatedInput)) {
      const diff = diffValues(state.input, result.updatedInput as JsonValue);
      if (diff) permission.inputDiff = diff;
      state.input = result.updatedInput;
    }
  }

  #call(toolUseId: string, toolName?: string): CallState {
    let state = this.#byId.get(toolUseId);
    if (!state) {
      state = { call: { toolUseId, toolName: toolName ?? 'unknown', dispatches: [] } };
      this.#byId.set(toolUseId, state);
      this.calls.push(state.call);
    } else if (toolName && state.call.toolName === 'unknown') {
      state.call.toolName = toolName;
    }
    return state;
  }

  /** The call with this id is now the one in progress. */
  #enter(toolUseId: string, toolName?: string): CallState {
    const state = this.#call(toolUseId, toolName);
    this.#current = state;
    return state;
  }
}

/** What the tracker keeps of one call beyond what it reports. */
interface CallState {
  call: HistoryToolCall;
  /** The input as it stands at this point of the call. */
  input?: JsonObject;
  described?: boolean;
  known?: boolean;
  kind?: ToolKind;
  /** A PermissionRequest hook edited the input: the call is described again. */
  redescribe?: boolean;
  /** A PermissionRequest hook denied (or failed): the policy never ran. */
  permissionHookEnded?: boolean;
  lastDispatch?: TrackedDispatch;
  ask?: HistoryAsk;
  /** The tool's output to the model, once it ran (what PostToolUse's callbacks get). */
  output?: JsonValue;
}

export type { CallState as ToolCallState, ExecuteOutcome as ToolExecuteOutcome };
