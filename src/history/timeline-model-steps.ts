/**
 * The timeline's model steps: each `modelStep` activity, when it was scheduled, how it closed,
 * why the model stopped, the tool calls it asked for and the tokens the provider reported
 * (when the step's result carries `usage`). Read as {@link timelineFromHistory} walks the events.
 *
 * @module
 */
import type { ModelStepInput } from '../common/activity-io.js';
import { isPlainObject } from '../common/json.js';
import { numberOf, type HistoryEvent } from './decode.js';
import { timeOf, type ActivityClose, type TimelineBuild } from './timeline-build.js';
import type { HistoryModelStep } from './timeline-types.js';

/** A `modelStep` activity was scheduled: its row, `running` until it closes. */
export function modelStepOpened(
  build: TimelineBuild,
  event: HistoryEvent,
  input: Partial<ModelStepInput> | undefined,
): void {
  const step: HistoryModelStep = { scheduledEventId: numberOf(event.eventId), status: 'running' };
  if (typeof input?.requestId === 'string') step.requestId = input.requestId;
  if (typeof input?.step === 'number') step.step = input.step;
  if (typeof input?.modelStepIndex === 'number') step.modelStepIndex = input.modelStepIndex;
  const at = timeOf(event);
  if (at !== undefined) step.scheduledAt = at;
  (build.timeline.modelSteps ??= []).push(step);
  build.modelSteps.set(step.scheduledEventId, step);
}

/** An activity closed: when it is a model step, its row gets how. */
export function modelStepClosed(
  build: TimelineBuild,
  scheduledEventId: number,
  close: ActivityClose,
  closed: HistoryEvent,
): void {
  const step = build.modelSteps.get(scheduledEventId);
  if (!step) return;
  build.modelSteps.delete(scheduledEventId);
  step.closedEventId = numberOf(closed.eventId);
  const at = timeOf(closed);
  if (at !== undefined && step.scheduledAt !== undefined) {
    step.durationMs = Math.max(0, at - step.scheduledAt);
  }
  if (close.kind !== 'completed') {
    step.status = close.kind;
    return;
  }
  step.status = 'completed';
  const output = close.result();
  if (!isPlainObject(output)) return;
  if (typeof output.finishReason === 'string') step.finishReason = output.finishReason;
  if (typeof output.deferred === 'string') step.deferred = output.deferred;
  if (Array.isArray(output.toolCalls)) {
    step.toolUseIds = output.toolCalls
      .map((call) => (isPlainObject(call) ? call.toolUseId : undefined))
      .filter((id): id is string => typeof id === 'string');
  }
  const usage = output.usage;
  if (
    isPlainObject(usage) &&
    typeof usage.inputTokens === 'number' &&
    typeof usage.outputTokens === 'number'
  ) {
    step.usage = {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      totalTokens:
        typeof usage.totalTokens === 'number'
          ? usage.totalTokens
          : usage.inputTokens + usage.outputTokens,
    };
  }
}
