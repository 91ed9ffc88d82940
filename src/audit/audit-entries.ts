/**
 * The entries of an audit log, made from one run's {@link HistoryTimeline} and the events it
 * names (a model step's or a tool's result, by event id): pure and deterministic, so
 * `audit-verify` makes them again from the history and compares them entry for entry.
 *
 * Order: by the history event each entry stands for (a dispatch's or model step's
 * `ActivityTaskScheduled`, an ask's timer, a tool's closing event); a prompt comes before its
 * first dispatch or model step; a run's upgrades follow its `run`; `session-end` (the
 * SessionEnd marker and how the run closed) ends a closed run.
 *
 * @module
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { isPlainObject, type JsonObject, type JsonValue } from '../common/json.js';
import { decodeFirstPayload, numberOf } from '../history/decode.js';
import type {
  HistoryDispatch,
  HistoryModelStep,
  HistoryTimeline,
  HistoryToolCall,
} from '../history/timeline-types.js';
import { digestOf } from './audit-digest.js';
import type { AuditEntryBody, AuditEntryKind } from './audit-types.js';

/** How entries are made (the header's `covers` records it, so verify makes the same). */
export interface AuditEntryOptions {
  /** Put content (inputs, outputs, prompt and answer texts) beside its digests. @default false */
  content?: boolean;
  /**
   * The session's payloads are encrypted: without `content`, callback reasons, messages and
   * diffs become digests too. @default false
   */
  encrypted?: boolean;
}

/** The position of each kind among entries anchored on the same event. */
const KIND_RANK: Record<AuditEntryKind, number> = {
  session: 0,
  run: 1,
  upgrade: 2,
  prompt: 3,
  dispatch: 4,
  'model-step': 5,
  permission: 6,
  approval: 7,
  tool: 8,
  'session-end': 9,
};

/** After every event: entries with nothing to anchor them end the run. */
const LAST = Number.MAX_SAFE_INTEGER;

interface Anchored {
  at: number;
  body: AuditEntryBody;
}

/** The `session` entry that opens a session's entries in the log. */
export function sessionEntry(timeline: HistoryTimeline, workflowId: string): AuditEntryBody {
  return compact({
    kind: 'session',
    sessionId: timeline.sessionId,
    workflowId: timeline.workflowId ?? workflowId,
    agentName: timeline.agentName,
    subagent: timeline.subagent,
  });
}

/**
 * The entries of one run: its `run` entry, then its upgrades, prompts, dispatches, model
 * steps, permission answers, approvals, tool runs and SessionEnd, in history order.
 *
 * @param timeline `timelineFromHistory(history)`.
 * @param history the run's history, payloads decoded, that the timeline was made from.
 */
export function runEntries(
  timeline: HistoryTimeline,
  history: History,
  options: AuditEntryOptions = {},
): AuditEntryBody[] {
  const make = new EntryMaker(history, options);
  const entries: Anchored[] = [{ at: 0, body: runEntry(timeline, history) }];
  for (const upgrade of timeline.upgrades ?? []) {
    entries.push({ at: 0, body: { kind: 'upgrade', ...upgrade } as AuditEntryBody });
  }
  const dispatchAt = new Map<number, HistoryDispatch>();
  for (const dispatch of timeline.dispatches) {
    dispatchAt.set(dispatch.seq, dispatch);
    entries.push({ at: dispatch.scheduledEventId, body: make.dispatch(dispatch) });
  }
  for (const step of timeline.modelSteps ?? []) {
    entries.push({ at: step.scheduledEventId, body: make.modelStep(step) });
  }
  for (const prompt of timeline.prompts) {
    const anchors = [
      ...prompt.dispatches.map((seq) => dispatchAt.get(seq)?.scheduledEventId ?? LAST),
      ...(timeline.modelSteps ?? [])
        .filter((step) => step.requestId === prompt.requestId)
        .map((step) => step.scheduledEventId),
    ];
    const at = anchors.length > 0 ? Math.min(...anchors) - 0.5 : LAST;
    entries.push({ at, body: make.prompt(prompt) });
  }
  for (const call of timeline.toolCalls) entries.push(...make.toolCall(call, dispatchAt));
  const end = make.sessionEnd(timeline);
  if (end) entries.push({ at: LAST, body: end });
  return entries
    .map((entry, index) => ({ ...entry, index }))
    .sort(
      (a, b) => a.at - b.at || KIND_RANK[a.body.kind] - KIND_RANK[b.body.kind] || a.index - b.index,
    )
    .map((entry) => entry.body);
}

/** A run's `run` entry: which run, the agent's version and definition, how it stood. */
function runEntry(timeline: HistoryTimeline, history: History): AuditEntryBody {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return compact({
    kind: 'run',
    runId: started?.originalExecutionRunId ?? undefined,
    continuedFrom: started?.continuedExecutionRunId || undefined,
    workflowType: timeline.workflowType,
    version: timeline.version,
    fingerprint: timeline.fingerprint,
    mcpTools: timeline.mcpTools?.digest,
    startedAt: timeline.startedAt,
  });
}

/** Makes the entries of one run, digests and content as its options say. */
class EntryMaker {
  readonly #events: NonNullable<History['events']>;
  readonly #content: boolean;
  /** Texts people and callbacks wrote stay text unless the payloads were encrypted. */
  readonly #plainText: boolean;

  constructor(history: History, options: AuditEntryOptions) {
    this.#events = history.events ?? [];
    this.#content = options.content ?? false;
    this.#plainText = this.#content || !(options.encrypted ?? false);
  }

  dispatch(dispatch: HistoryDispatch): AuditEntryBody {
    return compact({
      kind: 'dispatch',
      dispatch: dispatch.seq,
      event: dispatch.event,
      toolName: dispatch.toolName,
      toolUseId: dispatch.toolUseId,
      version: dispatch.version,
      decision: dispatch.decision,
      decidedBy: dispatch.decidedBy,
      ...this.#text('reason', dispatch.reason),
      error: dispatch.error ? { code: dispatch.error.code, name: dispatch.error.name } : undefined,
      callbackCount: dispatch.callbackCount,
      callbacks: dispatch.callbacks?.map((callback) =>
        compact({
          index: callback.index,
          action: callback.action,
          decided: callback.decided,
          ...this.#text('reason', callback.reason),
          ...this.#text('inputDiff', callback.inputDiff),
          ...this.#text('outputDiff', callback.outputDiff),
        }),
      ),
      scheduledAt: dispatch.scheduledAt,
      durationMs: dispatch.durationMs,
      budgetMs: dispatch.budgetMs,
      local: dispatch.local,
      inline: dispatch.inline,
    });
  }

  /** The run's end: the SessionEnd marker and how it closed; undefined while neither. */
  sessionEnd(timeline: HistoryTimeline): AuditEntryBody | undefined {
    const marker = timeline.sessionEndMarker;
    if (!marker && timeline.status === 'RUNNING') return undefined;
    return compact({
      kind: 'session-end',
      reason: marker?.reason,
      at: marker?.at,
      status: timeline.status,
      closedAt: timeline.closedAt,
      endReason: timeline.endReason,
      ...this.#text('closeReason', timeline.closeReason),
      ...this.#text('startError', timeline.startError),
      promptsHandled: timeline.promptsHandled,
    });
  }

  modelStep(step: HistoryModelStep): AuditEntryBody {
    const output = this.#resultOf(step.closedEventId);
    const text = isPlainObject(output) && typeof output.text === 'string' ? output.text : undefined;
    return compact({
      kind: 'model-step',
      requestId: step.requestId,
      step: step.step,
      modelStepIndex: step.modelStepIndex,
      status: step.status,
      finishReason: step.finishReason,
      deferred: step.deferred,
      toolUseIds: step.toolUseIds,
      usage: step.usage,
      outputSha256: output === undefined ? undefined : digestOf(output),
      text: this.#content ? text : undefined,
      scheduledAt: step.scheduledAt,
      durationMs: step.durationMs,
    });
  }

  prompt(prompt: HistoryTimeline['prompts'][number]): AuditEntryBody {
    return compact({
      kind: 'prompt',
      requestId: prompt.requestId,
      promptSha256: digestOf(prompt.prompt),
      prompt: this.#content ? prompt.prompt : undefined,
      status: prompt.status,
      answerSha256: prompt.text === undefined ? undefined : digestOf(prompt.text),
      answer: this.#content ? prompt.text : undefined,
      acceptedAt: prompt.acceptedAt,
      completedAt: prompt.completedAt,
    });
  }

  /** A tool call's `permission`, `approval` and `tool` entries, each at its event. */
  toolCall(call: HistoryToolCall, dispatchAt: Map<number, HistoryDispatch>): Anchored[] {
    const ask = call.permission?.ask;
    const lastDispatch = call.dispatches
      .map((seq) => dispatchAt.get(seq)?.closedEventId ?? dispatchAt.get(seq)?.scheduledEventId)
      .filter((id): id is number => id !== undefined)
      .at(-1);
    const toolAt = call.result?.closedEventId ?? lastDispatch ?? LAST;
    const decidedAt = ask?.timerEventId ?? call.result?.closedEventId ?? lastDispatch ?? LAST;
    const ids = { toolUseId: call.toolUseId, toolName: call.toolName };
    const out: Anchored[] = [];
    const permission = call.permission;
    if (permission) {
      out.push({
        at: decidedAt,
        body: compact({
          kind: 'permission',
          ...ids,
          policy: permission.policy,
          answer: permission.answer,
          toolKind: permission.kind,
          ...this.#text('message', permission.message),
          ...this.#text('inputDiff', permission.inputDiff),
          durationMs: permission.durationMs,
        }),
      });
    }
    if (ask) {
      out.push({
        at: decidedAt,
        body: compact({
          kind: 'approval',
          ...ids,
          requestId: ask.requestId,
          outcome: ask.outcome,
          by: ask.by,
          askedAt: ask.askedAt,
          deadline: ask.deadline,
          answeredAt: ask.waitedMs === undefined ? undefined : ask.askedAt + ask.waitedMs,
          waitedMs: ask.waitedMs,
          // `advanced.approvals`' stages reached while it waited (absent without them).
          stages: ask.stages,
          // The call's approval digest, whether the answer named it, the edited call's.
          digest: ask.digest,
          bound: ask.bound,
          updatedInputDigest: ask.updatedInputDigest,
          updatedInputSha256: ask.updatedInput ? digestOf(ask.updatedInput) : undefined,
          updatedInput: this.#content ? ask.updatedInput : undefined,
          ...this.#text('inputDiff', ask.inputDiff),
          ...this.#text('message', ask.message),
          interrupt: ask.interrupt,
        }),
      });
    }
    if (call.result || call.executedInput || call.child) {
      out.push({ at: toolAt, body: this.#tool(call) });
    }
    return out;
  }

  #tool(call: HistoryToolCall): AuditEntryBody {
    const result = call.result;
    const output = this.#resultOf(result?.closedEventId);
    const model = isPlainObject(output) ? (output.model as JsonValue | undefined) : undefined;
    const child = call.child;
    return compact({
      kind: 'tool',
      toolUseId: call.toolUseId,
      toolName: call.toolName,
      inputSha256: call.input ? digestOf(call.input) : undefined,
      executedInputSha256: call.executedInput ? digestOf(call.executedInput) : undefined,
      input: this.#content ? call.input : undefined,
      executedInput: this.#content ? call.executedInput : undefined,
      status: result?.status,
      outputSha256: model === undefined ? undefined : digestOf(model),
      resultSha256: output === undefined ? undefined : digestOf(output),
      output: this.#content ? model : undefined,
      sizeBytes: result?.sizeBytes,
      truncated: result?.truncated,
      offloaded: result?.offloaded,
      outputRef: result?.outputRef,
      ...(result?.error
        ? {
            error: compact({
              type: result.error.type,
              code: result.error.code,
              ...this.#text('message', result.error.message),
            }),
          }
        : {}),
      durationMs: result?.durationMs,
      child: child
        ? {
            sessionId: child.sessionId,
            workflowId: child.workflowId,
            agentPath: child.agentPath,
            status: child.status,
          }
        : undefined,
    });
  }

  /** `{ [name]: value }` as text, or `{ [name + 'Sha256']: digest }` when texts are digests. */
  #text(name: string, value: JsonValue | object | undefined): JsonObject {
    if (value === undefined) return {};
    if (this.#plainText) return { [name]: value as JsonValue };
    return { [`${name}Sha256`]: digestOf(value) };
  }

  /** The result of the activity closed by event `eventId`, decoded; undefined when none. */
  #resultOf(eventId: number | undefined): unknown {
    if (eventId === undefined) return undefined;
    const event = this.#events[eventId - 1];
    if (!event || numberOf(event.eventId) !== eventId) return undefined;
    const result = event.activityTaskCompletedEventAttributes?.result;
    if (!result) return undefined;
    return decodeFirstPayload<unknown>(result, defaultPayloadConverter);
  }
}

/** `fields` without its undefined values (JSON drops them; hashing must not see them). */
function compact(fields: Record<string, unknown>): AuditEntryBody {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) out[key] = value;
  }
  return JSON.parse(JSON.stringify(out)) as AuditEntryBody;
}
