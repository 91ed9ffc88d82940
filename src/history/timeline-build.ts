/**
 * The record {@link timelineFromHistory} keeps while it reads a history's events, which every
 * event handler takes, and the small readers they share: payloads, event times, numbers.
 *
 * @module
 */
import type { BudgetCaps, BudgetLedger } from '../common/budgets.js';
import { budgetOfInput } from './timeline-budget.js';
import type { PayloadConverter } from '@temporalio/common';
import type { JsonObject } from '../common/json.js';
import type { SessionWorkflowInput } from '../common/workflow-io.js';
import { decodeFirstPayload, numberOf, type HistoryEvent, type PayloadList } from './decode.js';
import { ToolCallTracker, type ToolCallState } from './tool-calls.js';
import type {
  HistoryDispatch,
  HistoryModelStep,
  HistoryPrompt,
  HistoryTimeline,
} from './timeline-types.js';

/** How a non-dispatch activity closed, for the tool call it belongs to. */
export type ActivityClose =
  | { kind: 'completed'; result: () => unknown; offloaded: boolean }
  | { kind: 'failed'; message: string }
  | { kind: 'worker_lost' }
  | { kind: 'cancelled'; details?: PayloadList };

/** What {@link timelineFromHistory} keeps while it reads a history's events. */
export interface TimelineBuild {
  timeline: HistoryTimeline;
  converter: PayloadConverter;
  /** Dispatches by their scheduled event id. */
  byScheduledId: Map<number, HistoryDispatch>;
  /** Model steps not closed yet, by their scheduled event id. */
  modelSteps: Map<number, HistoryModelStep>;
  /** Activities waiting for a lingering callback, by scheduled event id → dispatch id. */
  settleWaits: Map<number, string>;
  /** Dispatches whose callback outlived them, by dispatch id. */
  byDispatchId: Map<string, HistoryDispatch>;
  /** Each dispatch's payload (what its callbacks got), by `seq`, until it closes. */
  payloads: Map<number, JsonObject>;
  /** Other activities of a tool call (model step, permission check, tool), by scheduled id. */
  others: Map<
    number,
    (close: ActivityClose, durationMs: number | undefined, closed: HistoryEvent) => void
  >;
  tools: ToolCallTracker;
  /** `Task` calls whose sub-agent was started, by the start's initiated event id. */
  children: Map<number, ToolCallState>;
  /** Events whose payload was a payload-store reference. */
  stored: ReadonlySet<number>;
  /** Prompts by the event id of their `send` Update's acceptance. */
  promptsByAcceptedId: Map<number, HistoryPrompt>;
  /**
   * Prompts accepted and not answered yet, in the order they were accepted: they run one at a
   * time in that order, so the first is the one running (the rest wait their turn).
   */
  openPrompts: HistoryPrompt[];
  /** The tool use ids a finished prompt's result lists, by request id. */
  promptCalls: Map<string, string[]>;
  /** Update names by update id, from their accepted events (their completions name none). */
  updateNames: Map<string, string>;
  /** The history's events. */
  events: readonly HistoryEvent[];
  /** The workflow's input (hook budgets, for local dispatches). */
  input: Partial<SessionWorkflowInput> | undefined;
  /** What UserPromptSubmit's callbacks were given, by prompt (for local dispatches). */
  promptInputs: Map<HistoryPrompt, JsonObject>;
  /** The version the session runs at this point of the history (moves by upgrades). */
  version?: string;
  /** The session's budget as far as read (`timeline-budget.ts`); absent without one. */
  budget?: BudgetLedger;
  /** The budgets sub-agents were started with, by initiated event id (`timeline-budget.ts`). */
  childAllotments?: Map<number, BudgetCaps>;
}

/** A new build of `timeline` over `events`, nothing read yet. */
export function createTimelineBuild(
  timeline: HistoryTimeline,
  converter: PayloadConverter,
  events: readonly HistoryEvent[],
  input: Partial<SessionWorkflowInput> | undefined,
  stored: ReadonlySet<number> | undefined,
): TimelineBuild {
  return {
    timeline,
    converter,
    byScheduledId: new Map(),
    modelSteps: new Map(),
    settleWaits: new Map(),
    byDispatchId: new Map(),
    payloads: new Map(),
    others: new Map(),
    tools: new ToolCallTracker(input),
    children: new Map(),
    stored: stored ?? new Set(),
    updateNames: new Map(),
    events,
    promptsByAcceptedId: new Map(),
    openPrompts: [],
    promptCalls: new Map(),
    input,
    promptInputs: new Map(),
    ...(timeline.version !== undefined ? { version: timeline.version } : {}),
    ...(budgetOfInput(input) ? { budget: budgetOfInput(input)! } : {}),
  };
}

/** The first payload of `payloads`, decoded with the build's converter. */
export function decode<T>(build: TimelineBuild, payloads: PayloadList): T | undefined {
  return decodeFirstPayload<T>(payloads, build.converter);
}

/** Event time in ms since epoch. */
export function timeOf(event: HistoryEvent): number | undefined {
  const time = event.eventTime;
  if (!time) return undefined;
  return numberOf(time.seconds) * 1000 + Math.floor(numberOf(time.nanos) / 1_000_000);
}

/** Time of the event with this id (ids are 1-based positions in the history). */
export function timeOfEventId(build: TimelineBuild, eventId: number): number | undefined {
  const event = build.events[eventId - 1];
  return event && numberOf(event.eventId) === eventId ? timeOf(event) : undefined;
}

/** A `{ seconds, nanos }` time (a local activity marker's) in ms since epoch. */
export function protoTime(
  time: { seconds?: unknown; nanos?: unknown } | null | undefined,
): number | undefined {
  if (!time || time.seconds === undefined || time.seconds === null) return undefined;
  return numberOf(time.seconds) * 1000 + Math.floor(numberOf(time.nanos) / 1_000_000);
}

/** `value` when it is a finite number, else `fallback`. */
export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
