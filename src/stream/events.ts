/**
 * The events of a `send()`'s live stream: what `SendCall.stream()` and `Session.stream()`
 * yield. They are published by the activities that do the work (the model step, the hook
 * dispatch, the tool execution, the permission check) and by the client that sent the
 * prompt (the final `finish` or `error`), through a {@link StreamTransport}: never through
 * Updates or queries, and no text delta ever enters workflow history. The permission
 * decisions are made by the workflow: the next activity of the send carries them in its
 * input and publishes them first (a preset's decision, a person's answer), or a local
 * activity publishes them when none follows or a person is asked
 * (`workflows/session/stream-outbox.ts`).
 *
 * A send whose `Task` call starts a sub-agent gets the sub-agent's events too (and those of
 * its own sub-agents), each with the sub-agent's `agentPath`; only the send itself ends its
 * stream (`finish` or `error`), never a sub-agent.
 *
 * @module
 */
import type { SerializedError } from '../common/errors.js';
import type { HookEvent } from '../common/hook-events.js';
import type { DispatchOutcomeKind } from '../common/workflow-io.js';
import type { SendStatus, ToolCallRecord } from '../common/messages.js';
import type {
  PermissionAskedEvent,
  PermissionDecidedEvent,
  PermissionStageEvent,
} from '../common/permission-events.js';
import type { ToolEndEvent, ToolStartEvent } from '../common/tool-events.js';

export type {
  PermissionAskedEvent,
  PermissionDecidedEvent,
  PermissionDecider,
  PermissionStageEvent,
} from '../common/permission-events.js';
export type { ToolEndEvent, ToolStartEvent } from '../common/tool-events.js';

/**
 * A piece of the model's text, in order. The deltas of one model step concatenate to that
 * step's recorded assistant text (unless a `restart` of the step comes between them).
 */
export interface TextDeltaEvent {
  /** Discriminant: `'text-delta'`. */
  type: 'text-delta';
  /** The new text (never empty). */
  text: string;
  /** 0-based model step within the `send()` (within the sub-agent's prompt, for a sub-agent's). */
  step: number;
  /**
   * The sub-agent whose work this is (`main/researcher`): set on a sub-agent's events only,
   * which its top session's send stream carries besides its own. Absent on the session's
   * own events.
   */
  agentPath?: string;
}

/**
 * The model step `step` runs again (its worker was lost, or the provider failed and the
 * step is retried): the deltas of this step seen so far are void; the new attempt's deltas
 * follow.
 */
export interface RestartEvent {
  /** Discriminant: `'restart'`. */
  type: 'restart';
  /** 0-based model step within the `send()`. */
  step: number;
  /** The new attempt, from 2. */
  attempt: number;
  /**
   * The sub-agent whose work this is (`main/researcher`): set on a sub-agent's events only,
   * which its top session's send stream carries besides its own. Absent on the session's
   * own events.
   */
  agentPath?: string;
}

/** One hook dispatch (all callbacks of one event) ended. */
export interface HookDispatchEvent {
  /** Discriminant: `'hook'`. */
  type: 'hook';
  /** The hook event dispatched. */
  event: HookEvent;
  /** How it ended: the merged decision (`continue`, `skip`, `abort`) or a failure. */
  decision: Extract<
    DispatchOutcomeKind,
    'continue' | 'skip' | 'abort' | 'error' | 'timeout' | 'cancelled'
  >;
  /** For tool events (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure). */
  toolName?: string;
  /** The tool call's id, for the same tool events. */
  toolUseId?: string;
  /** The deciding callback's reason, or the failure's message. */
  reason?: string;
  /** How many callbacks ran. */
  callbackCount: number;
  /** Wall time of the dispatch, ms. */
  durationMs: number;
  /**
   * The sub-agent whose work this is (`main/researcher`): set on a sub-agent's events only,
   * which its top session's send stream carries besides its own. Absent on the session's
   * own events.
   */
  agentPath?: string;
}

/** The `send()` resolved: the last event of its stream. */
export interface FinishEvent {
  /** Discriminant: `'finish'`. */
  type: 'finish';
  /** The `send()`'s status, as `response.status` gives it. */
  status: SendStatus;
  /** The final assistant text (`''` when none), as `response.text()` gives it. */
  text: string;
  /** The tool calls the model made, in order, as `response.toolCalls` gives them. */
  toolCalls: ToolCallRecord[];
}

/** The `send()` rejected (a hook rejected the prompt, the session closed, ...): the last event. */
export interface ErrorEvent {
  /** Discriminant: `'error'`. */
  type: 'error';
  /** The error `send()` rejected with, serialized (`name`, `message`, `code`, ...). */
  error: SerializedError;
}

/** Any event of a send's stream, by `type`. */
export type StreamEvent =
  | TextDeltaEvent
  | RestartEvent
  | HookDispatchEvent
  | ToolStartEvent
  | ToolEndEvent
  | PermissionAskedEvent
  | PermissionStageEvent
  | PermissionDecidedEvent
  | FinishEvent
  | ErrorEvent;

/**
 * An event as a reader gets it: with the id of its entry in the stream. Pass the last `id`
 * seen as `after` to `Session.stream()` to resume with the next one.
 */
export type StreamedEvent = StreamEvent & { id: string };

/** Whether `event` ends its stream (`finish` or `error`). */
export function isFinal(event: StreamEvent): event is FinishEvent | ErrorEvent {
  return event.type === 'finish' || event.type === 'error';
}
