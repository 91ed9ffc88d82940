/**
 * The hook dispatch activity: every callback of one event, one at a time, inside one
 * budget, with the callback's `abortSignal` wired to the budget and to the activity's
 * cancellation (which arrives through heartbeats).
 *
 * @module
 */
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  HookTimeoutError,
  describeHookFailure,
  hookErrorRecord,
  serializeError,
  type SerializedError,
} from '../src/common/errors.js';
import { HookEvent } from '../src/common/hook-events.js';
import { modelTextOf } from '../src/common/hook-rules.js';
import { runHookCallbacks } from '../src/definition/hook-runner.js';
import type { PayloadStore } from '../src/payloads/store.js';
import { capOutput } from '../src/tools/output.js';
import {
  ActivityNames,
  HOOK_DISPATCH_LOST_TYPE,
  type AwaitHookSettledInput,
  type HookDispatchBegan,
  type CleanupHandle,
  type DispatchHookInput,
  type HookDispatchOutcome,
} from '../src/common/activity-io.js';
import type { HookOutput } from '../src/common/types.js';
import { realClock, type BudgetClock } from './budget-clock.js';
import { beganRecordOf, earlierAttemptBegan, finalFailure, recordBegan } from './attempt-record.js';
import type { AgentRegistry } from '../src/definition/registry.js';
import { abortReasonFor } from './abort-reason.js';

/** Dependencies of the hook activities. */
interface HookActivityDeps {
  registry: AgentRegistry;
  /** This process's worker-unique task queue, where cleanup waits are scheduled. */
  cleanupQueue: string;
  /** How often a running dispatch heartbeats, ms. */
  heartbeatIntervalMs: number;
  /** Where a tool hook's oversized `modifiedOutput` is kept whole; cut without one. */
  payloadStore?: PayloadStore;
  /** The clock budgets run on. @default the process's clock */
  clock?: BudgetClock;
}

type RaceResult =
  | { kind: 'done'; outputs: HookOutput[] }
  | { kind: 'threw'; error: unknown; index: number }
  | { kind: 'deadline' }
  | { kind: 'cancelled' };

/** The hook activities' dependencies with their defaults filled: what every function below reads. */
interface HookActivities extends HookActivityDeps {
  clock: BudgetClock;
}

/** Build `dispatchHook` and `awaitHookSettled`. */
export function createHookActivities(deps: HookActivityDeps) {
  const hooks: HookActivities = { ...deps, clock: deps.clock ?? realClock };
  return {
    dispatchHook: (input: DispatchHookInput) => dispatchHook(hooks, input),
    awaitHookSettled: (input: AwaitHookSettledInput) => awaitHookSettled(hooks, input),
  };
}

async function dispatchHook(
  hooks: HookActivities,
  input: DispatchHookInput,
): Promise<HookDispatchOutcome> {
  const { registry, clock } = hooks;
  const ctx = Context.current();
  refuseIfBegun(ctx, input);
  const started = clock.now();
  const elapsed = () => Math.round((clock.now() - started) * 10) / 10;
  const { lineage } = input;
  const callbacks = registry.callbacksFor(
    input.agentName,
    input.sessionId,
    input.event,
    input.version,
    lineage,
  );
  // A worker that has other callbacks than the session expects (none at all, or session
  // hooks of another process) refuses, rather than silently running a different set.
  if (callbacks.length === 0 || callbacks.length !== input.callbackCount) {
    const whose = lineage
      ? `sub-agent ${lineage.subagent} (${lineage.agentPath}) of session '${lineage.rootSessionId}'`
      : `session '${input.sessionId}'`;
    const creator = lineage ? `created session '${lineage.rootSessionId}'` : 'created the session';
    const error: SerializedError = {
      name: 'HookError',
      code: 'HOOK_CALLBACKS_MISSING',
      message:
        `This worker has ${callbacks.length} ${input.event} callback(s) for ${whose}; ` +
        `the session expects ${input.callbackCount}. Session-level hooks live only in the process that ` +
        `${creator}, and every worker of a task queue must run the same agent definition.`,
    };
    logFailure(ctx, input, error);
    return {
      status: 'error',
      error,
      callbackIndex: 0,
      callbackCount: callbacks.length,
      durationMs: elapsed(),
    };
  }

  const began = await recordDispatchBegan(hooks, ctx, input);
  try {
    return await runCallbacks(hooks, ctx, input, callbacks, elapsed, began);
  } catch (error) {
    // The callbacks began: whatever ends this attempt now, no later attempt runs them.
    throw finalFailure(error);
  }
}

/**
 * Record, confirmed by the server, that this attempt begins its callbacks: the heartbeat
 * details a later attempt reads (`refuseIfBegun`; `attempt-record.ts`). A local dispatch
 * records nothing (its retry policy allows one attempt, and Temporal refuses a local
 * activity's heartbeats), nor an inline one (`ownsAttempts`: it repeats its activity's
 * record), nor a test environment without a client.
 * @returns the details every heartbeat of this attempt repeats, or undefined when nothing
 *   was recorded.
 * @throws CancelledFailure (nothing ran: `settled`) when the workflow already cancelled it;
 *   a retryable ApplicationFailure when the server did not confirm the record.
 */
async function recordDispatchBegan(
  hooks: HookActivities,
  ctx: Context,
  input: DispatchHookInput,
): Promise<HookDispatchBegan | undefined> {
  if (!ownsAttempts(ctx)) return undefined;
  const began: HookDispatchBegan = { began: input.dispatchId };
  const outcome = await recordBegan(
    ctx,
    began,
    `Hook ${input.event} dispatch`,
    'HookDispatchNotBegun',
    cancelWaitMs(hooks),
  );
  if (outcome === 'no-server') return undefined;
  if (outcome === 'cancelled') {
    const handle: CleanupHandle = {
      settled: true,
      cleanupQueue: hooks.cleanupQueue,
      dispatchId: input.dispatchId,
    };
    throw new CancelledFailure(`Hook ${input.event} dispatch was cancelled`, [handle]);
  }
  return began;
}

/** How long a cancelled attempt waits for its worker to know of the cancel, ms. */
function cancelWaitMs(hooks: HookActivities): number {
  return Math.max(1000, 4 * hooks.heartbeatIntervalMs);
}

/**
 * Run the dispatch's callbacks within its budget, heartbeating, and report how they ended:
 * completed, a callback threw, the budget ran out, or the dispatch was cancelled.
 */
async function runCallbacks(
  hooks: HookActivities,
  ctx: Context,
  input: DispatchHookInput,
  callbacks: ReturnType<AgentRegistry['callbacksFor']>,
  elapsed: () => number,
  began: HookDispatchBegan | undefined,
): Promise<HookDispatchOutcome> {
  const { clock, heartbeatIntervalMs } = hooks;
  const controller = new AbortController();
  // Each callback's own time, ms, so `inspect` can say which one was slow.
  const run = runHookCallbacks(callbacks, input, controller.signal, elapsed);
  let settled = false;
  const outcome: Promise<RaceResult> = run.outputs.then(
    (outputs) => ({ kind: 'done', outputs }),
    (error: unknown) => ({ kind: 'threw', error, index: run.index }),
  );
  void outcome.then(() => (settled = true));

  // Heartbeats come from a timer of their own, so a stuck callback cannot starve them. A
  // local activity (`hookDispatch: 'local'`) has none: Temporal refuses its heartbeats (a
  // WARN line each) and delivers its cancellation without them. Each carries the record that
  // the callbacks began (an inline dispatch's, that its tool began): a heartbeat without
  // details would erase it on the server.
  const record = began ?? beganRecordOf(ctx);
  const heartbeat = ctx.info.isLocal
    ? undefined
    : setInterval(() => ctx.heartbeat(record), heartbeatIntervalMs);
  let reachDeadline: (result: RaceResult) => void = () => undefined;
  const deadline = new Promise<RaceResult>((resolve) => (reachDeadline = resolve));
  const cancelDeadline = clock.after(
    Math.max(0, input.budgetMs - elapsed()),
    () => reachDeadline({ kind: 'deadline' }),
    controller.signal,
  );

  try {
    const result = await Promise.race([outcome, deadline, cancellationOf(ctx)]);
    const callbackRun: CallbackRun = {
      hooks,
      ctx,
      input,
      callbackCount: callbacks.length,
      elapsed,
      run,
      controller,
      isSettled: () => settled,
    };
    return await outcomeOf(callbackRun, result);
  } finally {
    clearInterval(heartbeat);
    cancelDeadline();
  }
}

/** A dispatch's callbacks while they run: what deciding its outcome needs. */
interface CallbackRun {
  hooks: HookActivities;
  ctx: Context;
  input: DispatchHookInput;
  callbackCount: number;
  elapsed: () => number;
  run: ReturnType<typeof runHookCallbacks>;
  /** Aborts the callbacks' signal (at the deadline, or cancelled). */
  controller: AbortController;
  /** Whether the callbacks have settled (returned or thrown). */
  isSettled: () => boolean;
}

/** Resolves once the activity is cancelled (at once when it already is). */
function cancellationOf(ctx: Context): Promise<RaceResult> {
  return new Promise<RaceResult>((resolve) => {
    if (ctx.cancellationSignal.aborted) resolve({ kind: 'cancelled' });
    ctx.cancellationSignal.addEventListener('abort', () => resolve({ kind: 'cancelled' }), {
      once: true,
    });
  });
}

/**
 * The dispatch's outcome from how the race ended; at the deadline or cancelled, the
 * callbacks are aborted first and the outcome carries their cleanup handle.
 * @throws CancelledFailure (with the cleanup handle) when the dispatch was cancelled.
 */
async function outcomeOf(r: CallbackRun, result: RaceResult): Promise<HookDispatchOutcome> {
  const { hooks, ctx, input, callbackCount, elapsed, run } = r;
  switch (result.kind) {
    case 'done':
      return {
        status: 'completed',
        outputs: await boundToolOutputs(hooks, input, result.outputs),
        callbackCount,
        durationMs: elapsed(),
        callbackDurationsMs: [...run.durationsMs],
      };
    case 'threw': {
      const error = describeThrown(result.error, input.event, result.index);
      logFailure(ctx, input, error, result.index);
      return {
        status: 'error',
        error,
        callbackIndex: result.index,
        callbackCount,
        durationMs: elapsed(),
      };
    }
    case 'deadline': {
      const timeout = new HookTimeoutError(input.event, input.budgetMs);
      // The callback running at the deadline: `index` stops there once it is aborted.
      const callbackIndex = Math.min(run.index, callbackCount - 1);
      r.controller.abort(timeout);
      logFailure(ctx, input, serializeError(timeout), callbackIndex);
      const handle = await cleanupHandle(hooks, input.dispatchId, r.isSettled, run.outputs);
      return {
        status: 'timeout',
        callbackCount,
        durationMs: elapsed(),
        callbackIndex,
        ...handle,
      };
    }
    case 'cancelled': {
      r.controller.abort(await abortReasonFor(ctx, input.lineage?.depth ?? 0));
      const handle = await cleanupHandle(hooks, input.dispatchId, r.isSettled, run.outputs);
      throw new CancelledFailure(`Hook ${input.event} dispatch was cancelled`, [handle]);
    }
  }
}

/** Give callbacks one macrotask to settle after their signal aborted, then report. */
async function cleanupHandle(
  hooks: HookActivities,
  dispatchId: string,
  isSettled: () => boolean,
  running: Promise<unknown>,
): Promise<CleanupHandle> {
  await nextMacrotask();
  const settled = isSettled();
  if (!settled) hooks.registry.trackCleanup(dispatchId, running);
  return { settled, cleanupQueue: hooks.cleanupQueue, dispatchId };
}

async function awaitHookSettled(
  hooks: HookActivities,
  input: AwaitHookSettledInput,
): Promise<'settled' | 'unknown'> {
  const pending = hooks.registry.pendingCleanups.get(input.dispatchId);
  if (!pending) return 'unknown';
  const ctx = Context.current();
  const heartbeat = setInterval(() => ctx.heartbeat(), 1000);
  try {
    const cancelled = ctx.cancelled.then(
      () => 'cancelled' as const,
      () => 'cancelled' as const,
    );
    // Cancelled (e.g. this worker is shutting down) is not settled: say so.
    const outcome = await Promise.race([pending.then(() => 'settled' as const), cancelled]);
    if (outcome === 'cancelled') {
      throw new CancelledFailure('The wait for a hook callback to settle was cancelled');
    }
    return 'settled';
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * A tool hook's `modifiedOutput` becomes the model's view of the tool result, so it gets
 * the tool output cap: past `maxToolOutputBytes` the model (and later hooks) see the head
 * with a marker naming the reference under which the whole value is kept.
 */
async function boundToolOutputs(
  hooks: HookActivities,
  input: DispatchHookInput,
  outputs: HookOutput[],
): Promise<HookOutput[]> {
  if (input.event !== HookEvent.PostToolUse && input.event !== HookEvent.PostToolUseFailure) {
    return outputs;
  }
  const maxBytes = hooks.registry.agent(input.agentName, input.version).maxToolOutputBytes;
  return Promise.all(
    outputs.map(async (output) => {
      if (output.modifiedOutput === undefined) return output;
      const text = modelTextOf(output.modifiedOutput);
      if (Buffer.byteLength(text) <= maxBytes) return output;
      const ref = await hooks.payloadStore?.put(Buffer.from(text, 'utf8')).catch(() => undefined);
      return { ...output, modifiedOutput: capOutput(text, maxBytes, ref).text };
    }),
  );
}

/**
 * Whether this activity's attempts are the dispatch's own: a `dispatchHook` task from the
 * task queue. A local dispatch runs once; an inline one (`hookDispatch: 'inline'`) runs in a
 * model step or a tool execution, whose attempts and heartbeat details are theirs (a model
 * step retried runs its inline callbacks again: at-least-once, documented; a tool execution
 * records that it began, and its inline callbacks run after the tool, at most once).
 */
function ownsAttempts(ctx: Context): boolean {
  return !ctx.info.isLocal && ctx.info.activityType === ActivityNames.dispatchHook;
}

/**
 * A later attempt of a dispatch whose earlier attempt began its callbacks (its heartbeat
 * details say so, `recordDispatchBegan`) ends at once: that attempt's worker was lost with them
 * running, and they run at most once.
 * @throws ApplicationFailure of type {@link HOOK_DISPATCH_LOST_TYPE}, non-retryable.
 */
export function refuseIfBegun(ctx: Context, input: DispatchHookInput): void {
  if (!ownsAttempts(ctx) || !earlierAttemptBegan(ctx, input.dispatchId)) return;
  throw ApplicationFailure.create({
    type: HOOK_DISPATCH_LOST_TYPE,
    nonRetryable: true,
    message:
      `attempt ${ctx.info.attempt - 1} began the callbacks, then its worker was lost ` +
      `(no heartbeat in time); they are not run again`,
  });
}

/**
 * One WARN line on the worker per failed dispatch, through Temporal's logger (the Runtime's
 * logger, with the activity's attributes): the outcome alone reaches only the workflow, and
 * for tool events only the model hears of it.
 */
function logFailure(
  ctx: Context,
  input: DispatchHookInput,
  error: SerializedError,
  callbackIndex?: number,
): void {
  const { toolName, toolUseId } = input.payload;
  const line = describeHookFailure(hookErrorRecord(input.event, error, callbackIndex), {
    agentName: input.agentName,
    sessionId: input.sessionId,
    ...(typeof toolName === 'string' ? { toolName } : {}),
    ...(typeof toolUseId === 'string' ? { toolUseId } : {}),
  });
  ctx.log.warn(line.message, line.meta);
}

function describeThrown(error: unknown, event: HookEvent, index: number): SerializedError {
  const serialized = serializeError(error);
  return { ...serialized, event, callbackIndex: index };
}
