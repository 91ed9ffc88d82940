/**
 * The stages of an `ask`'s wait (`advanced.approvals`): a durable timer to the reminder, then
 * one to the escalation, beside the deadline's own (`tool-permission.ts`). Each stage reached
 * moves the pending request's `stage` on and, with a `notify` callback, schedules one
 * `notifyApproval` activity. An answer ends the wait (the stage timer still running is
 * cancelled with its `condition`). Workflow code: a session without stages runs none of it.
 *
 * @module
 */
import { condition, isCancellation, log, setCurrentDetails } from '@temporalio/workflow';
import { approvalDetails } from '../../src/common/summaries.js';
import {
  nextStageAt,
  scheduledStages,
  stageReached,
  stageTimerSummary,
  type ApprovalNotifyStage,
} from '../../src/common/approval-stages.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { notifyApprovalActivity } from '../activity-options.js';
import { failureMessage } from '../session/failures.js';
import {
  publishQueuedNow,
  queueStreamEvent,
  type StreamOutboxState,
} from '../session/stream-outbox.js';
import type { PendingPermission } from '../../src/common/permission.js';

/** A waiting request, and the answer once given (`tool-permission.ts`'s entry). */
interface StagedEntry {
  request: PendingPermission;
  answer?: unknown;
}

/** The session state the stages read. */
interface StageState extends StreamOutboxState {
  readonly input: SessionWorkflowInput;
  readonly taskQueue: string;
}

/**
 * Run the timed stages of `entry`'s wait until it is answered or the last stage is reached:
 * each stage reached moves the request's stage and the workflow's current details on, and
 * goes to the send's stream (`streamId`) and the `notify` callback. Resolves (it rejects only
 * on a bug): a cancelled prompt ends it, a failed notification is logged.
 */
export async function runApprovalStages(
  state: StageState,
  entry: StagedEntry,
  label: string,
  streamId?: string,
): Promise<void> {
  const policy = state.input.approvals;
  if (!policy) return;
  const { request } = entry;
  const stages = scheduledStages(policy, request.deadline - request.askedAt);
  request.stage = 'asked';
  request.nextStageAt = nextStageAt(stages, 0, request.askedAt, request.deadline);
  try {
    for (const [index, { stage, afterMs }] of stages.entries()) {
      // From the ask, not from the previous stage: a stage is due when the policy says.
      const dueInMs = Math.max(1, request.askedAt + afterMs - Date.now());
      const answered = await condition(() => entry.answer !== undefined, dueInMs, {
        summary: stageTimerSummary(stage, label),
      });
      if (answered) return;
      request.stage = stageReached(stage);
      if (stage === 'escalate' && policy.escalateTo !== undefined) {
        request.escalateTo = policy.escalateTo;
      }
      request.nextStageAt = nextStageAt(stages, index + 1, request.askedAt, request.deadline);
      setCurrentDetails(approvalDetails(label, request.askedAt, request.deadline, request));
      void notifyStage(state, entry, stage, label);
      // The send's stream hears of it now (the call still waits: no activity of the send
      // would carry it).
      queueStreamEvent(state, streamId, {
        type: 'permission-stage',
        toolUseId: request.toolUseId,
        toolName: request.toolName,
        permissionRequestId: request.requestId,
        stage: request.stage,
        ...(request.escalateTo !== undefined ? { escalateTo: request.escalateTo } : {}),
        nextStageAt: request.nextStageAt,
        ...(request.digest !== undefined ? { digest: request.digest } : {}),
      });
      await publishQueuedNow(state, streamId);
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
  }
}

/**
 * Schedule `notifyApproval` for `stage` of `entry` when the agent has a `notify` callback
 * (not awaited by the wait: a slow webhook never delays the next stage or the deadline).
 * Resolves, never rejects: a notification that failed its every attempt is logged.
 */
export async function notifyStage(
  state: StageState,
  entry: StagedEntry,
  stage: ApprovalNotifyStage,
  label: string,
): Promise<void> {
  const policy = state.input.approvals;
  if (!policy?.notify) return;
  const { request } = entry;
  const { version, fingerprint } = state.input;
  try {
    await notifyApprovalActivity(
      state.taskQueue,
      `approval ${stage}: ${label}`,
    )({
      stage,
      sessionId: state.input.sessionId,
      agentName: state.input.agentName,
      requestId: request.requestId,
      toolUseId: request.toolUseId,
      toolName: request.toolName,
      label,
      digest: request.digest ?? '',
      askedAt: request.askedAt,
      deadline: request.deadline,
      ...(policy.escalateTo !== undefined && stage !== 'remind'
        ? { escalateTo: policy.escalateTo }
        : {}),
      ...(stage === 'deadline' ? { outcome: 'deny' as const } : {}),
      ...(version !== undefined ? { version } : {}),
      ...(fingerprint !== undefined ? { fingerprint } : {}),
    });
  } catch (error) {
    if (isCancellation(error)) return;
    log.warn(`approval notification failed: ${stage} of ${label}`, {
      sessionId: state.input.sessionId,
      requestId: request.requestId,
      error: failureMessage(error),
    });
  }
}
