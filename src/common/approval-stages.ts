/**
 * Approval deadlines in stages (`advanced.approvals`): while an `ask` waits for a person, a
 * reminder after `remindAfterMs`, an escalation after `escalateAfterMs`, then the deadline
 * (`permissionTimeoutMs`). What a session's workflow input carries of the policy, the stages
 * it schedules, and the event a stage hands the user's `notify` callback. Workflow-safe, pure.
 *
 * @module
 */

/** Where a waiting request is: asked, reminded (`remindAfterMs` passed), escalated. */
export type ApprovalStage = 'asked' | 'reminded' | 'escalated';

/** A stage that notifies: the reminder, the escalation, the deadline. */
export type ApprovalNotifyStage = 'remind' | 'escalate' | 'deadline';

/**
 * What a session's workflow input carries of `advanced.approvals`: the timing and the group,
 * and `notify: true` when the agent has a `notify` callback (the workflow cannot see
 * functions: the flag says whether a stage schedules the `notifyApproval` activity).
 */
export interface SessionApprovalPolicy {
  remindAfterMs?: number;
  escalateAfterMs?: number;
  escalateTo?: string;
  notify?: true;
}

/** The event a stage hands `advanced.approvals.notify`. */
export interface ApprovalNotifyEvent {
  /** `remind`, `escalate`, or `deadline` (the request was decided by its deadline: denied). */
  stage: ApprovalNotifyStage;
  /** The session that asks (a sub-agent's own session id for its asks). */
  sessionId: string;
  /** The agent's name. */
  agentName: string;
  /** The pending request's id (`session.approve(requestId)`). */
  requestId: string;
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The call as a label (`Write NOTES.md`). */
  label: string;
  /** The call's approval digest (64 hex digits), as the request carries it. */
  digest: string;
  /** When it was asked, ms since the epoch (workflow time). */
  askedAt: number;
  /** When silence turns into the deadline's outcome, ms since the epoch. */
  deadline: number;
  /** `advanced.approvals.escalateTo`, when set. */
  escalateTo?: string;
  /** What the deadline decided (stage `deadline` only): `deny`. */
  outcome?: 'deny';
  /** The notification's attempt, from 1 (a failed callback is retried). */
  attempt: number;
}

/** One timed stage of a wait: the stage reached `afterMs` after the ask. */
interface ScheduledStage {
  stage: 'remind' | 'escalate';
  afterMs: number;
}

/**
 * The timed stages of a wait of `timeoutMs` under `policy`, in order: the reminder and the
 * escalation, each only when set and before the deadline (a sub-agent's shorter deadline
 * drops the ones past it). Empty without a policy.
 */
export function scheduledStages(
  policy: SessionApprovalPolicy | undefined,
  timeoutMs: number,
): ScheduledStage[] {
  if (!policy) return [];
  const stages: ScheduledStage[] = [];
  if (policy.remindAfterMs !== undefined && policy.remindAfterMs < timeoutMs) {
    stages.push({ stage: 'remind', afterMs: policy.remindAfterMs });
  }
  if (policy.escalateAfterMs !== undefined && policy.escalateAfterMs < timeoutMs) {
    stages.push({ stage: 'escalate', afterMs: policy.escalateAfterMs });
  }
  return stages.sort((a, b) => a.afterMs - b.afterMs);
}

/** The stage a request is in once `stage` was reached. */
export function stageReached(stage: ScheduledStage['stage']): Exclude<ApprovalStage, 'asked'> {
  return stage === 'remind' ? 'reminded' : 'escalated';
}

/**
 * When the stage after `reached` is due, ms since the epoch: the next timed stage, else the
 * deadline.
 */
export function nextStageAt(
  stages: readonly ScheduledStage[],
  reached: number,
  askedAt: number,
  deadline: number,
): number {
  const next = stages[reached];
  return next ? askedAt + next.afterMs : deadline;
}

/** The summary of a stage's timer in Temporal's tools and `inspect`. */
export function stageTimerSummary(stage: ScheduledStage['stage'], label: string): string {
  return `${stage === 'remind' ? 'approval reminder' : 'approval escalation'}: ${label}`;
}

/** Which stage a timer's summary names (from {@link stageTimerSummary}), if any. */
export function stageOfTimerSummary(
  summary: string | undefined,
): ScheduledStage['stage'] | undefined {
  if (summary?.startsWith('approval reminder:')) return 'remind';
  if (summary?.startsWith('approval escalation:')) return 'escalate';
  return undefined;
}
