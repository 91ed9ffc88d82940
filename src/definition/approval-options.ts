/**
 * `advanced.approvals`: approval deadlines in stages, a reminder, an escalation to a second
 * group, then the deadline's outcome, each stage a durable timer of the session and a call of
 * the user's `notify` callback run as an activity with retries. The option's type, its rules
 * and what a session records of it.
 *
 * @module
 */
import type { ApprovalNotifyEvent, SessionApprovalPolicy } from '../common/approval-stages.js';
import { ConfigError } from '../common/errors.js';
import { describeValue, rule } from './rule-builders.js';

export type { ApprovalNotifyEvent } from '../common/approval-stages.js';

/**
 * Reminders and escalation while an `ask` waits for a person (docs/sessions.md). Each stage
 * reached is a durable timer of the session's workflow (it fires once, whichever worker runs
 * the session, across restarts), shown by `pendingPermissions()`, `pending`, `inspect` and the
 * inbox, and, with `notify`, one `notifyApproval` activity in the session's history.
 * @example
 * ```ts
 * advanced: {
 *   permissionTimeoutMs: 4 * 60 * 60 * 1000,
 *   approvals: {
 *     remindAfterMs: 30 * 60 * 1000,
 *     escalateAfterMs: 2 * 60 * 60 * 1000,
 *     escalateTo: 'security-oncall',
 *     notify: (event) => postToChat(event),
 *   },
 * }
 * ```
 */
export interface ApprovalOptions {
  /** How long after the ask the reminder stage comes, ms. @default none (no reminder) */
  remindAfterMs?: number;
  /**
   * How long after the ask the escalation stage comes, ms; after the reminder when both are set.
   * @default none (no escalation)
   */
  escalateAfterMs?: number;
  /**
   * The group an escalation goes to (a name or label the `notify` callback understands:
   * a chat channel, a team). Needs `escalateAfterMs`. @default none
   */
  escalateTo?: string;
  /**
   * Called on the worker, as the `notifyApproval` activity, at each stage reached: `remind`,
   * `escalate`, and `deadline` once the deadline decided. A callback that throws is retried
   * (5 attempts, 1 s apart, doubled, 30 s each); after the last the failure is logged and the
   * request goes on waiting (a notification never decides an approval). Without it the stages
   * still advance (and show) but no activity runs.
   * @default none
   */
  notify?: (event: ApprovalNotifyEvent) => Promise<void> | void;
  /** What silence decides at the deadline (`permissionTimeoutMs`): `deny`. @default 'deny' */
  deadlineOutcome?: 'deny';
}

/** `advanced.approvals`, resolved: the policy a session records, and the callback. */
export interface ResolvedApprovals {
  policy: SessionApprovalPolicy;
  notify?: (event: ApprovalNotifyEvent) => Promise<void> | void;
}

const PATH = 'advanced.approvals';
const KEYS = ['remindAfterMs', 'escalateAfterMs', 'escalateTo', 'notify', 'deadlineOutcome'];

/** The problems of `value` as `advanced.approvals`, each naming its field. Pure. */
function approvalsProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [`${PATH} must be an object, got ${describeValue(value)}`];
  }
  const problems: string[] = [];
  for (const key of Object.keys(value)) {
    if (!KEYS.includes(key))
      problems.push(`${PATH} has an unknown key '${key}' (keys: ${KEYS.join(', ')})`);
  }
  const given = value as Record<string, unknown>;
  for (const key of ['remindAfterMs', 'escalateAfterMs'] as const) {
    const ms = given[key];
    if (ms !== undefined && (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 1)) {
      problems.push(`${PATH}.${key} must be a positive integer of ms, got ${describeValue(ms)}`);
    }
  }
  const { remindAfterMs, escalateAfterMs, escalateTo, notify, deadlineOutcome } = given;
  if (
    typeof remindAfterMs === 'number' &&
    typeof escalateAfterMs === 'number' &&
    escalateAfterMs <= remindAfterMs
  ) {
    problems.push(
      `${PATH}.escalateAfterMs must come after remindAfterMs (${remindAfterMs}), got ${escalateAfterMs}`,
    );
  }
  if (escalateTo !== undefined && (typeof escalateTo !== 'string' || escalateTo.trim() === '')) {
    problems.push(
      `${PATH}.escalateTo must be a non-empty string, got ${describeValue(escalateTo)}`,
    );
  } else if (escalateTo !== undefined && escalateAfterMs === undefined) {
    problems.push(`${PATH}.escalateTo needs escalateAfterMs (when to escalate)`);
  }
  if (notify !== undefined && typeof notify !== 'function') {
    problems.push(`${PATH}.notify must be a function, got ${describeValue(notify)}`);
  }
  if (deadlineOutcome !== undefined && deadlineOutcome !== 'deny') {
    problems.push(`${PATH}.deadlineOutcome must be 'deny', got ${describeValue(deadlineOutcome)}`);
  }
  return problems;
}

/** `advanced.approvals`'s rules, for the agent's schema. */
export const approvalsSchema = rule((value, issue) => approvalsProblems(value).forEach(issue));

/**
 * `advanced.approvals` against the deadline it stages: the policy a session records and the
 * callback, or undefined when not set (or set to `{}`).
 * @throws {ConfigError} for a stage at or past `permissionTimeoutMs`, naming the field.
 */
export function resolveApprovals(
  approvals: ApprovalOptions | undefined,
  permissionTimeoutMs: number,
): ResolvedApprovals | undefined {
  if (!approvals) return undefined;
  for (const key of ['remindAfterMs', 'escalateAfterMs'] as const) {
    const ms = approvals[key];
    if (ms !== undefined && ms >= permissionTimeoutMs) {
      throw new ConfigError(
        `${PATH}.${key} must come before the deadline (advanced.permissionTimeoutMs, ${permissionTimeoutMs} ms), got ${ms}`,
      );
    }
  }
  const policy: SessionApprovalPolicy = {
    ...(approvals.remindAfterMs !== undefined ? { remindAfterMs: approvals.remindAfterMs } : {}),
    ...(approvals.escalateAfterMs !== undefined
      ? { escalateAfterMs: approvals.escalateAfterMs }
      : {}),
    ...(approvals.escalateTo !== undefined ? { escalateTo: approvals.escalateTo } : {}),
    ...(approvals.notify ? { notify: true as const } : {}),
  };
  // Nothing set: as if unset (the fingerprint and the sessions' inputs stay as they were).
  if (Object.keys(policy).length === 0) return undefined;
  return { policy, ...(approvals.notify ? { notify: approvals.notify } : {}) };
}
