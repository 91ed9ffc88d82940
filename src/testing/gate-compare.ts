/**
 * How the deploy gate compares one session's recording with the new definition: its hook
 * dispatches re-run through the new callbacks ({@link compareRecording}), its permission
 * checks judged again by the new policy ({@link comparePermissionChecks}).
 *
 * @module
 */
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { messageOf } from '../common/errors.js';
import { isHookEvent, type HookEvent } from '../common/hook-events.js';
import {
  ActivityNames,
  type CheckPermissionInput,
  type CheckPermissionOutput,
} from '../common/activity-io.js';
import type { SessionWorkflowInput } from '../common/workflow-io.js';
import {
  normalizePermission,
  presetDecision,
  type PermissionHandler,
  type PermissionPreset,
} from '../common/permission.js';
import type { HookCallback, HookMap } from '../common/types.js';
import { isDeepStrictEqual } from 'node:util';
import { decodeFirstPayload } from '../history/decode.js';
import { callbacksOfDefinition, type DefinitionHooks } from '../definition/registry.js';
import {
  decideDispatch,
  sameDecision,
  whereOf,
  type GoldenChange,
  type GoldenDispatch,
  type GoldenSession,
} from './golden.js';

import type {
  GatePermissionAnswer,
  GatePermissionCheck,
  GatePermissionFlip,
  GateUncompared,
} from './gate-report.js';

/** How a session's recording is compared: see {@link compareRecording}. */
export interface CompareRecordingOptions {
  /** The running version: dispatches another version decided are not compared. */
  version?: string;
  /** Events the session had session-level callbacks for: not compared. */
  sessionHookEvents?: ReadonlySet<HookEvent>;
  /** Only these events are replayed. @default every event */
  events?: readonly HookEvent[];
  /**
   * The new definition's sub-agents by name: a sub-agent's dispatch is re-run through its
   * own hooks, or the agent's `hooks` when it inherits them; one the new definition does not
   * have is not compared. @default none
   */
  subagents?: DefinitionHooks['subagents'];
}

/**
 * Replay one session's recorded dispatches (its sub-agents' included) through `hooks` (the
 * new definition's callbacks; a sub-agent's own, by its recorded `lineage`) and compare
 * decisions. Pure apart from what the callbacks do (they are called for real).
 *
 * @returns the flips (before: recorded, after: `hooks`), how many were compared, and the
 *   dispatches not compared with why.
 */
export async function compareRecording(
  recording: Pick<GoldenSession, 'sessionId' | 'dispatches'>,
  hooks: HookMap,
  options: CompareRecordingOptions = {},
): Promise<{ checked: number; flips: GoldenChange[]; uncompared: GateUncompared[] }> {
  const flips: GoldenChange[] = [];
  const uncompared: GateUncompared[] = [];
  let checked = 0;
  for (const dispatch of recording.dispatches) {
    let why = whyNotCompared(dispatch, options);
    let callbacks: HookCallback[] = [];
    try {
      const definition = { hooks, ...(options.subagents ? { subagents: options.subagents } : {}) };
      callbacks = callbacksOfDefinition(definition, dispatch.event, dispatch.lineage);
    } catch (error) {
      why ??= `a sub-agent's dispatch: ${messageOf(error)}`;
    }
    if (why !== undefined) {
      uncompared.push({ ...whereOf(dispatch), why });
      continue;
    }
    checked++;
    const after = await decideDispatch(dispatch, callbacks, recording.sessionId);
    if (!sameDecision(dispatch.decision, after)) {
      flips.push({ ...whereOf(dispatch), before: dispatch.decision, after });
    }
  }
  return { checked, flips, uncompared };
}

function whyNotCompared(
  dispatch: GoldenDispatch,
  options: CompareRecordingOptions,
): string | undefined {
  if (options.events && !options.events.includes(dispatch.event)) {
    return `event ${dispatch.event} is not among the events checked`;
  }
  if (
    options.version !== undefined &&
    dispatch.version !== undefined &&
    dispatch.version !== options.version
  ) {
    return `decided by version '${dispatch.version}', not '${options.version}'`;
  }
  if (options.sessionHookEvents?.has(dispatch.event)) {
    return `the session had session-level ${dispatch.event} callbacks (SessionOptions.hooks, in-process only): not in the definition`;
  }
  const { decision } = dispatch;
  if (decision.action === 'error' && decision.decidedBy === undefined) {
    return `no decision was recorded (${decision.reason ?? 'the dispatch failed'})`;
  }
  return undefined;
}

/**
 * The permission checks a session's histories record (`checkPermission` activities, which
 * run for a permission-function policy), each with the answer it got. Checks a worker of
 * another version refused, and checks that never reported, are left out.
 */
export function permissionChecksOf(histories: readonly History[]): GatePermissionCheck[] {
  const checks: GatePermissionCheck[] = [];
  for (const history of histories) {
    const scheduled = new Map<string, CheckPermissionInput>();
    for (const event of history.events ?? []) {
      const attrs = event.activityTaskScheduledEventAttributes;
      if (attrs?.activityType?.name === ActivityNames.checkPermission) {
        const input = decodeFirstPayload<CheckPermissionInput>(attrs.input);
        if (input) scheduled.set(String(event.eventId), input);
        continue;
      }
      const completed = event.activityTaskCompletedEventAttributes;
      if (!completed) continue;
      const input = scheduled.get(String(completed.scheduledEventId ?? ''));
      const output = decodeFirstPayload<CheckPermissionOutput>(completed.result);
      if (!input || !output) continue;
      checks.push({
        toolUseId: input.toolUseId,
        toolName: input.toolName,
        request: {
          toolName: input.toolName,
          input: input.input,
          kind: input.kind,
          affectedPaths: input.affectedPaths,
        },
        answer: output.ok
          ? output.result
          : { behavior: 'error', message: output.error?.message ?? 'the check failed' },
        ...(input.handler === 'session' ? { sessionHandler: true as const } : {}),
        ...(typeof input.version === 'string' ? { version: input.version } : {}),
        ...(input.lineage
          ? { subagent: input.lineage.subagent, agentPath: input.lineage.agentPath }
          : {}),
      });
    }
  }
  return checks;
}

/** A sub-agent's own permission policy; absent or `'inherit'`: the agent's. */
export type SubagentPolicies = Readonly<
  Record<
    string,
    { readonly permission?: PermissionPreset | PermissionHandler | 'inherit' | undefined }
  >
>;

/**
 * Judge recorded permission checks again with `policy` (a preset: on the recorded kind; a
 * function: called for real with the recorded request, bounded by `timeoutMs`), and list the
 * answers that flip. A sub-agent's check is judged by its own policy in `options.subagents`,
 * else by `policy`. Checks of a session permission function, of another version, or of a
 * sub-agent `options.subagents` does not have, are not judged. Failures compare by
 * `behavior: 'error'` alone (their messages vary).
 */
export async function comparePermissionChecks(
  checks: readonly GatePermissionCheck[],
  policy: PermissionPreset | PermissionHandler,
  options: { version?: string; timeoutMs?: number; subagents?: SubagentPolicies } = {},
): Promise<{ checked: number; flips: GatePermissionFlip[] }> {
  const flips: GatePermissionFlip[] = [];
  let checked = 0;
  for (const check of checks) {
    if (check.sessionHandler) continue;
    let judgeBy = policy;
    if (check.subagent !== undefined) {
      const subagent = options.subagents?.[check.subagent];
      if (!subagent) continue;
      if (subagent.permission !== undefined && subagent.permission !== 'inherit') {
        judgeBy = subagent.permission;
      }
    }
    if (
      options.version !== undefined &&
      check.version !== undefined &&
      check.version !== options.version
    ) {
      continue;
    }
    checked++;
    const after =
      typeof judgeBy === 'function'
        ? await judge(judgeBy, check.request, options.timeoutMs ?? 60_000)
        : presetDecision(judgeBy, check.request.kind);
    const same =
      after.behavior === 'error' || check.answer.behavior === 'error'
        ? after.behavior === check.answer.behavior
        : isDeepStrictEqual(after, check.answer);
    if (!same) {
      flips.push({
        toolUseId: check.toolUseId,
        toolName: check.toolName,
        before: check.answer,
        after,
        ...(check.agentPath !== undefined ? { agentPath: check.agentPath } : {}),
      });
    }
  }
  return { checked, flips };
}

/** One call of a permission function, as the `checkPermission` activity makes it. */
async function judge(
  policy: PermissionHandler,
  request: GatePermissionCheck['request'],
  timeoutMs: number,
): Promise<GatePermissionAnswer> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const value = await Promise.race([
      Promise.resolve(policy({ ...structuredClone(request), signal: controller.signal })),
      deadline,
    ]);
    if (value === 'timeout') {
      controller.abort(new Error(`permission check exceeded ${timeoutMs}ms`));
      return { behavior: 'error', message: `the permission function exceeded ${timeoutMs}ms` };
    }
    return (
      normalizePermission(value, request.toolName) ?? {
        behavior: 'error',
        message: `advanced.permission returned ${JSON.stringify(value) ?? String(value)} for ${request.toolName}`,
      }
    );
  } catch (error) {
    return { behavior: 'error', message: messageOf(error) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Events whose dispatches included session-level callbacks: the session's callback count per
 * event beyond the definition's (its manifest names one source per definition callback).
 * Sessions from before manifests were recorded: none known.
 */
export function sessionHookEventsOf(
  input: Partial<SessionWorkflowInput> | undefined,
): Set<HookEvent> {
  const events = new Set<HookEvent>();
  const manifestHooks = input?.manifest?.hooks;
  if (!input?.hookCounts || !manifestHooks) return events;
  for (const [event, count] of Object.entries(input.hookCounts)) {
    const own = manifestHooks[event as HookEvent]?.length ?? 0;
    if (isHookEvent(event) && typeof count === 'number' && count > own) events.add(event);
  }
  return events;
}
