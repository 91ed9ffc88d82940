/**
 * The one place that proxies activities and sets their options.
 *
 * @module
 */
import {
  ActivityCancellationType,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { createActivities } from '../activities/index.js';
import { DEFAULTS } from '../src/common/defaults.js';
import {
  HOOK_DISPATCH_MAX_ATTEMPTS,
  MODEL_STEP_MAX_ATTEMPTS,
  TOOL_EXECUTION_MAX_ATTEMPTS,
} from '../src/common/activity-io.js';

type Activities = ReturnType<typeof createActivities>;

/**
 * `{ summary }` for a proxy's options when there is one: the one line Temporal's Web UI and
 * `temporal workflow show` give the activity (user metadata: not checked on replay).
 */
function summaryOf(summary: string | undefined): { summary?: string } {
  return summary ? { summary } : {};
}

/**
 * The hook dispatch activity, for one event's budget.
 *
 * - Retried, {@link HOOK_DISPATCH_MAX_ATTEMPTS} attempts, 100 ms apart (doubled), yet its
 *   callbacks run at most once: an attempt has the server record that it began before its
 *   first callback, and a later attempt that finds the record fails at once as a lost worker
 *   (`activities/hook-dispatch.ts`). What a retry recovers is an attempt lost before its
 *   callbacks: a task the matching service marked started but never delivered (it crashed),
 *   a worker killed as it received the task. Such a loss costs the heartbeat timeout, not
 *   the dispatch; a loss after the callbacks began is `HOOK_WORKER_LOST` as before.
 *   The retry policy is not part of Temporal's replay check (it compares an activity's
 *   type and id), so histories recorded with `maximumAttempts: 1` replay unchanged.
 * - `startToCloseTimeout`: the budget plus a margin. The budget itself is enforced exactly
 *   inside the activity; this is the backstop for a worker that died.
 * - `heartbeatTimeout`: the activity heartbeats from its own timer, so a dead worker is
 *   noticed in seconds even when the budget is ten minutes.
 * - `cancellationType: WAIT_CANCELLATION_COMPLETED`, set on purpose (the SDK's default is
 *   TRY_CANCEL): on abort the activity reports whether its callbacks settled, and the
 *   workflow needs that answer to hold the session fail-closed.
 */
export function hookDispatchActivity(
  taskQueue: string,
  budgetMs: number,
  heartbeatTimeoutMs: number,
  eager = true,
  summary?: string,
) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    ...notEager(eager),
    startToCloseTimeout: budgetMs + DEFAULTS.dispatchBackstopMarginMs,
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: {
      initialInterval: '100ms',
      backoffCoefficient: 2,
      maximumAttempts: HOOK_DISPATCH_MAX_ATTEMPTS,
    },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }).dispatchHook;
}

/**
 * The hook dispatch as a local activity (`hookDispatch: 'local'`): the same activity, run by
 * the worker of the workflow task. `maximumAttempts: 1` and the same backstop as above, but
 * a worker that dies mid-dispatch makes the next one run it again (a local activity's result
 * is recorded only with the workflow task): at-least-once, which is why it is opt-in.
 * Cancellation reaches it directly (no heartbeat); WAIT_CANCELLATION_COMPLETED as above.
 */
export function localHookDispatchActivity(budgetMs: number, summary?: string) {
  return proxyLocalActivities<Activities>({
    ...summaryOf(summary),
    startToCloseTimeout: budgetMs + DEFAULTS.dispatchBackstopMarginMs,
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }).dispatchHook;
}

/**
 * Waits, on the worker-unique queue of the process holding a stuck callback, until the
 * callback settles. If that worker is gone, nobody picks the task (schedule-to-start
 * timeout) or its heartbeats stop (heartbeat timeout): either way the wait ends and the
 * session is released, since a callback in a dead process can neither settle nor act.
 * A wait lost while its worker lives (a task the matching service marked started but never
 * delivered) is retried, up to 3 attempts: it only waits, and a retry on a dead worker's
 * queue ends at the schedule-to-start timeout (not retried), as before.
 */
export function awaitHookSettledActivity(cleanupQueue: string, summary?: string) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue: cleanupQueue,
    scheduleToStartTimeout: DEFAULTS.cleanupScheduleToStartTimeoutMs,
    startToCloseTimeout: '30 days',
    heartbeatTimeout: DEFAULTS.cleanupHeartbeatTimeoutMs,
    retry: { initialInterval: '100ms', backoffCoefficient: 2, maximumAttempts: 3 },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  }).awaitHookSettled;
}

/**
 * One model step. Transient provider errors are retried after 1 s, 2 s, 4 s, 8 s, the 5th
 * final (the step sets the wait, `stepRetryDelayMs`, and makes the failure of its 5th attempt
 * final); the model adapter marks client errors (400, 401) non-retryable. A step lost with its
 * worker (its heartbeat timed out) is retried 100 ms later, doubled per attempt, and up to
 * {@link MODEL_STEP_MAX_ATTEMPTS} attempts in all.
 * @param inlineBudgetMs the budget of the inline dispatch the step runs first
 *   (`ModelStepInput.hook`), when it runs one.
 * @param heartbeatTimeoutMs how soon a lost worker is noticed (`modelHeartbeatTimeoutMs`).
 */
export function modelStepActivity(
  taskQueue: string,
  timeoutMs: number = DEFAULTS.modelTimeoutMs,
  eager = true,
  summary?: string,
  inlineBudgetMs?: number,
  heartbeatTimeoutMs: number = DEFAULTS.modelHeartbeatTimeoutMs,
) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    ...notEager(eager),
    // The provider enforces `timeoutMs` itself (a retryable failure); this is the backstop.
    // A step running an inline dispatch first has that dispatch's budget more.
    startToCloseTimeout: timeoutMs + 10_000 + (inlineBudgetMs ?? 0),
    heartbeatTimeout: heartbeatTimeoutMs,
    // A step that failed sets its own wait (1 s, doubled: `stepRetryDelayMs`); this backoff is
    // for a step lost with its worker (a heartbeat timeout), retried on another at once.
    retry: {
      initialInterval: '100ms',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: MODEL_STEP_MAX_ATTEMPTS,
    },
    // An inline dispatch reports on cancel whether its callbacks settled (as `dispatchHook`).
    cancellationType:
      inlineBudgetMs === undefined
        ? ActivityCancellationType.TRY_CANCEL
        : ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }).modelStep;
}

/** Kind and affected paths of a tool call: pure lookups, so a local activity (~4 ms). */
export function describeToolCallActivity(summary?: string) {
  return proxyLocalActivities<Activities>({
    ...summaryOf(summary),
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 3 },
  }).describeToolCall;
}

/**
 * The same lookup as an ordinary activity on the session's task queue: when the worker that
 * ran the workflow task refused the local one (it runs another version), a worker of the
 * session's version answers.
 */
export function describeToolCallOnQueueActivity(
  taskQueue: string,
  eager: boolean,
  summary?: string,
) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    ...notEager(eager),
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 3 },
  }).describeToolCall;
}

/** Most attempts of one permission check, lost workers included (the retry policy's maximum). */
const PERMISSION_CHECK_MAX_ATTEMPTS = 3;

/**
 * The agent's permission function (`advanced.permission`, or the session's
 * `permissionHandler`). Its answer is never retried: what it returned, or threw, is reported
 * as the activity's result (`CheckPermissionOutput`), so a denial or a failing function is
 * final. An attempt lost with its worker (heartbeat timeout, 10 s) is asked again, up to
 * {@link PERMISSION_CHECK_MAX_ATTEMPTS} attempts, 100 ms apart (doubled): the contract makes
 * the permission function a decision (`allow`, `deny`, `ask` or a `PermissionResult`), with
 * no at-most-once promise (that is the hooks', and SessionStart's and SessionEnd's), and a
 * person's `ask` is held by the workflow, not by the function. So asking it again after a
 * lost attempt is allowed: a function with side effects may see one request twice when its
 * worker died while it ran; a matching or frontend crash that lost the task before the
 * function ran costs 10 s, not a denial. After the last attempt the call is denied as before.
 */
export function checkPermissionActivity(taskQueue: string, eager = true, summary?: string) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    ...notEager(eager),
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: 10_000,
    retry: {
      initialInterval: '100ms',
      backoffCoefficient: 2,
      maximumAttempts: PERMISSION_CHECK_MAX_ATTEMPTS,
    },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  }).checkPermission;
}

/**
 * One tool execution. Retried, {@link TOOL_EXECUTION_MAX_ATTEMPTS} attempts, 100 ms apart
 * (doubled), yet the tool runs at most once (a tool may have side effects): an attempt has
 * the server record that it began before the tool runs, and a later attempt that finds the
 * record fails at once as lost (`activities/tool-exec.ts`). What a retry recovers is an
 * attempt lost before the tool: a task the matching service marked started but never
 * delivered, a worker killed as it received the task; for an idempotent call (no record),
 * also one lost while the tool ran. Cancellation waits for the tool to
 * finish cleaning up (e.g. kill its process group) before the prompt ends.
 * @param inlineBudgetMs the budget of the inline PostToolUse dispatch the execution runs
 *   after the tool (`ExecuteToolInput.hook`), when it runs one.
 * @param heartbeatTimeoutMs how soon a lost worker is noticed (`toolHeartbeatTimeoutMs`).
 */
export function executeToolActivity(
  taskQueue: string,
  timeoutMs: number,
  eager = true,
  summary?: string,
  inlineBudgetMs = 0,
  heartbeatTimeoutMs: number = DEFAULTS.toolHeartbeatTimeoutMs,
) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    ...notEager(eager),
    startToCloseTimeout: timeoutMs + 30_000 + inlineBudgetMs,
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: {
      initialInterval: '100ms',
      backoffCoefficient: 2,
      maximumAttempts: TOOL_EXECUTION_MAX_ATTEMPTS,
    },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }).executeTool;
}

/**
 * Publish stream events of the workflow that no following activity of the send carries (a
 * person is asked; a denial ends the send): a local activity (a marker, no task round trip),
 * run once (the stream is best effort), within a few seconds (a network transport waits at
 * most 1 s for its write).
 */
export function publishStreamEventsActivity(summary?: string) {
  return proxyLocalActivities<Activities>({
    ...summaryOf(summary),
    startToCloseTimeout: '5 seconds',
    retry: { maximumAttempts: 1 },
  }).publishStreamEvents;
}

/**
 * Archive this run's transcript and timeline in the payload store before continuing as
 * new. Idempotent (content-addressed), so retried; a few attempts only, since prompts are
 * refused while it runs: after that the session stays in this run and tries again later.
 */
export function archiveRunActivity(taskQueue: string, summary?: string) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    startToCloseTimeout: '1 minute',
    heartbeatTimeout: 30_000,
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 3 },
  }).archiveRun;
}

/**
 * Which definition a worker of the version a session moves to runs (`handlers/upgrade.ts`):
 * read-only, so retried; refused (non-retryable) by a worker of another version, which the
 * caller schedules again without eager dispatch.
 */
export function describeDefinitionActivity(taskQueue: string, eager = true, summary?: string) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    ...notEager(eager),
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumAttempts: 5 },
  }).describeDefinition;
}

/**
 * No eager dispatch for a task scheduled again after a version refusal: Temporal's matching,
 * not the worker that ran this workflow task (the one that refused), picks who runs it.
 * Nothing is added otherwise, so first attempts keep Temporal's default (eager allowed).
 */
function notEager(eager: boolean): { allowEagerDispatch?: false } {
  return eager ? {} : { allowEagerDispatch: false };
}

/**
 * The MCP tools of the definition's servers, listed on a worker of the session's version when
 * the session opens (`session/mcp-tools.ts`): read-only, so retried; a stdio server started
 * for it may take seconds (an `npx` download more), hence the two minutes. Refused
 * (non-retryable) by a worker of another version, which the caller schedules again.
 */
export function listMcpToolsActivity(taskQueue: string, eager = true) {
  return proxyActivities<Activities>({
    summary: 'list the MCP servers’ tools',
    taskQueue,
    ...notEager(eager),
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 3 },
  }).listMcpTools;
}

/**
 * A request to a shared budget (`activities/budget-lease.ts`): a local activity (a marker in
 * the session's history, no task of its own), retried until it is answered for at most five
 * minutes. Run again after a lost worker (a local activity's result is recorded with the
 * workflow task), it is answered the same: the budget answers each lease id once.
 */
export function leaseSharedBudgetActivity() {
  return proxyLocalActivities<Activities>({
    summary: 'lease of a shared budget',
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: '5 minutes',
    retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10 seconds' },
  }).leaseSharedBudget;
}

/** Most attempts of one approval notification (`advanced.approvals.notify`). */
const APPROVAL_NOTIFY_MAX_ATTEMPTS = 5;

/**
 * The agent's `advanced.approvals.notify` for one stage of a waiting `ask`: retried,
 * {@link APPROVAL_NOTIFY_MAX_ATTEMPTS} attempts, 1 s apart (doubled), 30 s each (a chat
 * webhook's outage of a few seconds is ridden out); the workflow logs a failure after the last
 * and goes on. Cancelled with the ask's prompt (TRY_CANCEL: nothing waits for it).
 */
export function notifyApprovalActivity(taskQueue: string, summary?: string) {
  return proxyActivities<Activities>({
    ...summaryOf(summary),
    taskQueue,
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumAttempts: APPROVAL_NOTIFY_MAX_ATTEMPTS,
    },
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  }).notifyApproval;
}
