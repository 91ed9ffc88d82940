/**
 * The timeline's session lifecycle handlers: prompts (the `send` Updates, accepted and
 * completed), a person's permission answer (`decidePermission`), moves to other versions
 * (`upgrade` Updates, abandoned moves), the SessionEnd marker and how the workflow closed.
 *
 * @module
 */
import { budgetRaised } from './timeline-budget.js';
import { describePrompt } from '../common/hook-rules.js';
import { Updates, type UpgradeAnswer } from '../common/messages.js';
import type { AbandonedUpgrade, SessionWorkflowResult } from '../common/workflow-io.js';
import type { Prompt } from '../common/types.js';
import { decodePayload, numberOf, type HistoryEvent } from './decode.js';
import { failureMessage, type Failure } from './failures.js';
import { subagentPromptClosed } from './timeline-children.js';
import { decode, numberOr, timeOf, type TimelineBuild } from './timeline-build.js';
import type { HistoryPrompt, HistoryWorkflowStatus } from './timeline-types.js';

type UpdateAcceptedAttributes = NonNullable<
  HistoryEvent['workflowExecutionUpdateAcceptedEventAttributes']
>;
type UpdateCompletedAttributes = NonNullable<
  HistoryEvent['workflowExecutionUpdateCompletedEventAttributes']
>;
type MemoAttributes = NonNullable<HistoryEvent['workflowPropertiesModifiedEventAttributes']>;

/** An accepted Update: a `send` opens a prompt; a `decidePermission` is a person's answer. */
export function updateAccepted(
  build: TimelineBuild,
  event: HistoryEvent,
  accepted: UpdateAcceptedAttributes,
): void {
  const request = accepted.acceptedRequest;
  const updateId = request?.meta?.updateId;
  if (updateId && request?.input?.name) build.updateNames.set(updateId, request.input.name);
  if (request?.input?.name === 'send') {
    const send = decode<{ requestId?: unknown; prompt?: unknown }>(build, request.input.args);
    const prompt: HistoryPrompt = {
      requestId: String(send?.requestId ?? request.meta?.updateId ?? ''),
      prompt: promptText(send?.prompt),
      acceptedAt: timeOf(event) ?? 0,
      dispatches: [],
      toolCalls: [],
    };
    build.timeline.prompts.push(prompt);
    if (typeof send?.prompt === 'string' || Array.isArray(send?.prompt)) {
      build.promptInputs.set(prompt, { ...describePrompt(send.prompt as Prompt) });
    }
    build.promptsByAcceptedId.set(numberOf(event.eventId), prompt);
    build.openPrompts.push(prompt);
    return;
  }
  if (request?.input?.name === 'raiseBudget' && build.budget) {
    budgetRaised(build.budget, decode<unknown>(build, request.input.args), timeOf(event) ?? 0);
    return;
  }
  if (request?.input?.name !== 'decidePermission') return;
  const identity = request.meta?.identity;
  build.tools.decided(
    timeOf(event) ?? 0,
    decode<unknown>(build, request.input.args),
    typeof identity === 'string' && identity !== '' ? identity : undefined,
  );
}

/** A completed Update: a `send` ends its prompt, an `upgrade` moves the session's version. */
export function updateCompleted(
  build: TimelineBuild,
  event: HistoryEvent,
  completed: UpdateCompletedAttributes,
): void {
  promptCompleted(build, event, completed);
  upgradeCompleted(build, completed);
}

/** A completed `send` Update ends its prompt: its status, its answer, its tool calls. */
function promptCompleted(
  build: TimelineBuild,
  event: HistoryEvent,
  completed: UpdateCompletedAttributes,
): void {
  const prompt = build.promptsByAcceptedId.get(numberOf(completed.acceptedEventId));
  if (!prompt) return;
  prompt.completedAt = timeOf(event) ?? 0;
  const failure = completed.outcome?.failure as Failure | undefined;
  if (failure) {
    prompt.status = 'failed';
    const message = failureMessage(failure);
    if (message) prompt.text = message;
  } else {
    const result = decode<{ status?: unknown; text?: unknown; toolCalls?: unknown }>(
      build,
      completed.outcome?.success,
    );
    const status = result?.status;
    prompt.status =
      status === 'completed' ||
      status === 'interrupted' ||
      status === 'aborted' ||
      status === 'max_turns' ||
      status === 'budget_exceeded'
        ? status
        : 'completed';
    if (typeof result?.text === 'string') prompt.text = result.text;
    const calls = Array.isArray(result?.toolCalls) ? result.toolCalls : [];
    build.promptCalls.set(
      prompt.requestId,
      calls
        .map((call: unknown) => (call as { toolUseId?: unknown } | null)?.toolUseId)
        .filter((id): id is string => typeof id === 'string'),
    );
  }
  const open = build.openPrompts.indexOf(prompt);
  if (open >= 0) build.openPrompts.splice(open, 1);
}

/** A completed `upgrade` Update: the move it made, and the version from then on. */
function upgradeCompleted(build: TimelineBuild, completed: UpdateCompletedAttributes): void {
  const updateId = completed.meta?.updateId;
  if (updateId && build.updateNames.get(updateId) === Updates.upgrade.name) {
    const answer = decode<UpgradeAnswer>(build, completed.outcome?.success);
    if (answer?.upgrade) {
      (build.timeline.upgrades ??= []).push(answer.upgrade);
      if (typeof answer.upgrade.toVersion === 'string') build.version = answer.upgrade.toVersion;
    }
  }
}

/**
 * The prompt a dispatch belongs to (none for SessionStart and SessionEnd): the open one of its
 * `requestId` (a dispatch's input names its send), else the one running, the first accepted of
 * those still open (histories from before dispatches named their send, local dispatches'
 * markers).
 */
export function promptOfDispatch(
  build: TimelineBuild,
  event: string,
  requestId: string | undefined,
): HistoryPrompt | undefined {
  if (event === 'SessionStart' || event === 'SessionEnd') return undefined;
  const named =
    requestId === undefined ? undefined : build.openPrompts.find((p) => p.requestId === requestId);
  return named ?? build.openPrompts[0];
}

/** A prompt as text: its text parts, image parts as `[image]`. */
function promptText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (!Array.isArray(prompt)) return '';
  return prompt
    .map((part: unknown) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      return p?.type === 'text' && typeof p.text === 'string' ? p.text : '[image]';
    })
    .join('\n');
}

/**
 * Each prompt's tool calls: a finished prompt's from its result, in order; calls of no
 * finished prompt belong to the one still running.
 */
export function promptToolCalls(build: TimelineBuild): void {
  const claimed = new Set<string>();
  const known = new Set(build.timeline.toolCalls.map((call) => call.toolUseId));
  for (const prompt of build.timeline.prompts) {
    prompt.toolCalls = (build.promptCalls.get(prompt.requestId) ?? []).filter((id) =>
      known.has(id),
    );
    for (const id of prompt.toolCalls) claimed.add(id);
  }
  const open = build.timeline.prompts.find((prompt) => prompt.status === undefined);
  if (open) {
    open.toolCalls = build.timeline.toolCalls
      .map((call) => call.toolUseId)
      .filter((id) => !claimed.has(id));
  }
}

/**
 * The first upsert of `sessionEndMarker` is the SessionEnd marker; each `upgradeAbandoned`,
 * an abandoned move.
 */
export function memoUpserted(
  build: TimelineBuild,
  event: HistoryEvent,
  modified: MemoAttributes,
): void {
  const abandoned = decodePayload<AbandonedUpgrade>(
    modified.upsertedMemo?.fields?.upgradeAbandoned,
    build.converter,
  );
  if (abandoned && typeof abandoned.toVersion === 'string') {
    (build.timeline.abandonedUpgrades ??= []).push(abandoned);
  }
  const marker = decodePayload<{ reason?: unknown; at?: unknown }>(
    modified.upsertedMemo?.fields?.sessionEndMarker,
    build.converter,
  );
  if (marker && !build.timeline.sessionEndMarker) {
    build.timeline.sessionEndMarker = {
      reason: String(marker.reason ?? 'unknown'),
      at: numberOr(marker.at, timeOf(event) ?? 0),
      eventId: numberOf(event.eventId),
    };
  }
}

/** The execution closed: its status, and what its result or failure says. */
export function workflowClosed(
  build: TimelineBuild,
  event: HistoryEvent,
  closedStatus: HistoryWorkflowStatus,
): void {
  const { timeline } = build;
  timeline.status = closedStatus;
  const closedAt = timeOf(event);
  if (closedAt !== undefined) timeline.closedAt = closedAt;
  const result = event.workflowExecutionCompletedEventAttributes?.result;
  const value = result ? decode<Partial<SessionWorkflowResult>>(build, result) : undefined;
  subagentPromptClosed(build, closedStatus, value, closedAt);
  if (result) {
    if (typeof value?.endReason === 'string') timeline.endReason = value.endReason;
    if (typeof value?.promptsHandled === 'number') timeline.promptsHandled = value.promptsHandled;
    if (value?.startError && typeof value.startError.message === 'string') {
      timeline.startError = value.startError.message;
    }
  }
  const failure = event.workflowExecutionFailedEventAttributes?.failure as Failure | undefined;
  const why =
    failureMessage(failure ?? null) ?? event.workflowExecutionTerminatedEventAttributes?.reason;
  if (why) timeline.closeReason = why;
}
