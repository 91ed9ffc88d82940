/**
 * The CLI's history → timeline rebuild, on the committed replay fixtures (real session
 * histories) and on fixtures edited to show what no recorded session did (a lost worker, a
 * failed activity, several callbacks, a tool event, an open session).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import type { HistoryDispatch, HistoryTimeline } from '../../../src/history/timeline-types.js';
import { describeNondeterminism } from '../../../src/history/nondeterminism.js';
import { renderTimeline } from '../../../src/cli/render.js';
import type { SessionWorkflowResult, TimelineEntry } from '../../../src/common/workflow-io.js';

const dir = fileURLToPath(new URL('../../fixtures/histories/', import.meta.url));
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.json'));

interface JsonEvent {
  eventId: string;
  eventType: string;
  [attributes: string]: unknown;
}
interface JsonHistory {
  events: JsonEvent[];
}

function readJson(name: string): JsonHistory {
  return JSON.parse(readFileSync(join(dir, name), 'utf8')) as JsonHistory;
}

function timelineOf(name: string): HistoryTimeline {
  return timelineFromHistory(historyFromJSON(readJson(name)));
}

/** A payload in proto JSON, as the default converter writes JSON values. */
function jsonPayload(value: unknown) {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return { metadata: { encoding: b64('json/plain') }, data: b64(JSON.stringify(value)) };
}

function decodeJsonPayload(payload: { data: string }): unknown {
  return JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
}

/**
 * The workflow's own timeline, from its completion result (completed sessions only; not a
 * sub-agent's, whose result leaves it out: it stays in the sub-agent's history).
 */
function workflowTimeline(json: JsonHistory): TimelineEntry[] | undefined {
  const history = historyFromJSON(json);
  const result = history.events?.at(-1)?.workflowExecutionCompletedEventAttributes?.result;
  const payload = result?.payloads?.[0];
  if (!payload) return undefined;
  const completed = defaultPayloadConverter.fromPayload<SessionWorkflowResult>(payload);
  return completed.task ? undefined : completed.timeline;
}

/** Events the session dispatched as local activities (`hookDispatch: 'local'`). */
function localEvents(json: JsonHistory): Set<string> {
  const history = historyFromJSON(json);
  const payload =
    history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = payload
    ? defaultPayloadConverter.fromPayload<{ localDispatch?: string[] }>(payload)
    : undefined;
  return new Set(input?.localDispatch ?? []);
}

/** The markers of local dispatches: local activities of type `dispatchHook`. */
function localDispatchMarkers(json: JsonHistory): JsonEvent[] {
  return json.events.filter((e) => {
    const marker = e.markerRecordedEventAttributes as
      { markerName?: string; details?: { data?: { payloads?: { data: string }[] } } } | undefined;
    const data = marker?.details?.data?.payloads?.[0];
    if (marker?.markerName !== 'core_local_activity' || !data) return false;
    return (
      (decodeJsonPayload(data) as { activity_type?: unknown }).activity_type === 'dispatchHook'
    );
  });
}

/** The first scheduling of each dispatch (one scheduled again after a version refusal is one). */
function dispatchScheduledEvents(json: JsonHistory): JsonEvent[] {
  const seen = new Set<string>();
  return json.events.filter((e) => {
    const attributes = e.activityTaskScheduledEventAttributes as
      { activityType: { name: string }; input?: { payloads?: { data?: string }[] } } | undefined;
    if (attributes?.activityType.name !== 'dispatchHook') return false;
    const data = attributes.input?.payloads?.[0]?.data;
    const dispatchId = data
      ? String(
          (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { dispatchId?: unknown })
            .dispatchId,
        )
      : `event-${String(e.eventId)}`;
    if (seen.has(dispatchId)) return false;
    seen.add(dispatchId);
    return true;
  });
}

/** The event that closed the activity scheduled as `scheduledEventId`. */
function closingEventIndex(json: JsonHistory, scheduledEventId: string): number {
  return json.events.findIndex((e) =>
    Object.entries(e).some(
      ([key, value]) =>
        /^activityTask(Completed|Failed|TimedOut|Canceled)EventAttributes$/.test(key) &&
        (value as { scheduledEventId?: string }).scheduledEventId === scheduledEventId,
    ),
  );
}

function decisions(timeline: HistoryTimeline): string[] {
  return timeline.dispatches.map((d) => `${d.event}:${d.decision}`);
}

describe('timelineFromHistory on every committed fixture', () => {
  it('has fixtures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(12);
  });

  it.each(fixtures)(
    "%s: agrees with the workflow's own timeline (refused dispatches aside)",
    (name) => {
      const json = readJson(name);
      const timeline = timelineFromHistory(historyFromJSON(json));
      expect(timeline.workflowType).toBe('sessionWorkflow');
      expect(timeline.sessionId).toEqual(expect.any(String));
      expect(timeline.workflowId).toBe(`session-${timeline.sessionId}`);
      expect(timeline.status).not.toBe('RUNNING');
      expect(timeline.closedAt).toBeGreaterThanOrEqual(timeline.startedAt!);
      expect(timeline.eventCount).toBe(json.events.length);
      expect(timeline.dispatches).toHaveLength(
        dispatchScheduledEvents(json).length + localDispatchMarkers(json).length,
      );
      expect(timeline.dispatches.map((d) => d.seq)).toEqual(timeline.dispatches.map((_, i) => i));
      // A run that continued as new hands the session on: SessionEnd comes in a later run.
      if (timeline.status === 'CONTINUED_AS_NEW') expect(timeline.sessionEndMarker).toBeUndefined();
      else expect(timeline.sessionEndMarker).toBeDefined();

      // Local dispatches are rows as the others are, marked local.
      const local = localEvents(json);
      timeline.dispatches.forEach((dispatch) => {
        expect(dispatch.local).toBe(local.has(dispatch.event) ? true : undefined);
      });
      const own = workflowTimeline(json)?.filter((entry) => entry.outcome !== 'refused');
      if (!own) return; // cancelled, or a sub-agent: no timeline in its result to compare with
      expect(timeline.dispatches).toHaveLength(own.length);
      timeline.dispatches.forEach((dispatch, i) => {
        const entry = own[i]!;
        expect(dispatch.event).toBe(entry.event);
        expect(dispatch.toolName).toBe(entry.toolName);
        expect(dispatch.version).toBe(entry.version);
        expect(dispatch.decision).toBe(entry.outcome);
        expect(dispatch.callbackCount).toBe(entry.callbackCount);
        expect(dispatch.reason).toBe(entry.reason);
        expect(dispatch.decidedBy).toBe(entry.decidedBy);
        expect(dispatch.cleanup).toBe(entry.cleanup);
        // Cancelled dispatches are timed by events; the workflow timed them by its clock.
        if (dispatch.decision !== 'cancelled') expect(dispatch.durationMs).toBe(entry.durationMs);
      });
      expect(timeline.endReason).toBe(timeline.sessionEndMarker!.reason);
    },
  );
});

describe('what the fixtures show', () => {
  it('timeout-fail-closed: a timeout whose callback settled, then a continue; the refused dispatch is not in history', () => {
    const timeline = timelineOf('timeout-fail-closed.json');
    expect(decisions(timeline)).toEqual([
      'SessionStart:continue',
      'UserPromptSubmit:timeout',
      'UserPromptSubmit:continue',
      'TaskCompleted:continue',
      'SessionEnd:continue',
    ]);
    const timeout = timeline.dispatches[1]!;
    expect(timeout).toMatchObject({
      reason: 'Hook UserPromptSubmit exceeded 100ms',
      budgetMs: 100,
      callbackCount: 1,
      cleanup: 'settled',
    });
    expect(timeout.durationMs).toBeGreaterThanOrEqual(90);
    // The workflow's timeline has one more entry: the refused dispatch, which scheduled nothing.
    expect(workflowTimeline(readJson('timeout-fail-closed.json'))).toHaveLength(6);
    expect(timeline.status).toBe('COMPLETED');
    expect(timeline.promptsHandled).toBe(3);
  });

  it.each(['abort.json'])(
    '%s: the aborted prompt is a cancelled dispatch, timed by its events; the next prompt continues',
    (name) => {
      const timeline = timelineOf(name);
      expect(decisions(timeline)).toEqual([
        'SessionStart:continue',
        'UserPromptSubmit:cancelled',
        'UserPromptSubmit:continue',
        'TaskCompleted:continue',
        'SessionEnd:continue',
      ]);
      const cancelled = timeline.dispatches[1]!;
      expect(cancelled.cancelRequested).toBe(true);
      expect(cancelled.reason).toBeUndefined();
      // The callback waited ~300 ms for the abort.
      expect(cancelled.durationMs).toBeGreaterThan(200);
      expect(cancelled.durationMs).toBeLessThan(5000);
      expect(cancelled.closedEventId).toBeGreaterThan(cancelled.scheduledEventId);
      expect(cancelled.cleanup).toBeUndefined(); // the callback settled when it was cancelled
    },
  );

  it.each(['session-end-failed-then-closed.json'])(
    '%s: SessionEnd failed once, after the marker, and was never called again',
    (name) => {
      const timeline = timelineOf(name);
      expect(decisions(timeline)).toEqual(['SessionStart:continue', 'SessionEnd:error']);
      const sessionEnd = timeline.dispatches[1]!;
      expect(sessionEnd).toMatchObject({ reason: 'flush failed', decidedBy: 0 });
      const marker = timeline.sessionEndMarker!;
      expect(marker.reason).toBe('other');
      expect(marker.eventId).toBeLessThan(sessionEnd.scheduledEventId);
      expect(marker.at).toBeGreaterThanOrEqual(timeline.startedAt!);
      expect(timeline).toMatchObject({ status: 'COMPLETED', endReason: 'other' });
    },
  );

  it('prompts-and-close: a UserPromptSubmit abort carries its reason and deciding callback', () => {
    const timeline = timelineOf('prompts-and-close.json');
    const aborted = timeline.dispatches.filter((d) => d.decision === 'abort');
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toMatchObject({
      event: 'UserPromptSubmit',
      reason: 'rejected by policy',
      decidedBy: 0,
    });
    expect(timeline.promptsHandled).toBe(3);
  });

  it('idle-timeout: the marker and the result say idle_timeout', () => {
    const timeline = timelineOf('idle-timeout.json');
    expect(timeline.sessionEndMarker?.reason).toBe('idle_timeout');
    expect(timeline.endReason).toBe('idle_timeout');
    expect(decisions(timeline)).toEqual(['SessionStart:continue', 'SessionEnd:continue']);
  });

  it('cancelled-from-outside: status CANCELLED, SessionEnd ran once with reason cancelled', () => {
    const timeline = timelineOf('cancelled-from-outside.json');
    expect(timeline.status).toBe('CANCELLED');
    expect(timeline.sessionEndMarker?.reason).toBe('cancelled');
    expect(timeline.endReason).toBeUndefined();
    expect(decisions(timeline)).toEqual(['SessionStart:continue', 'SessionEnd:continue']);
  });
});

describe('histories edited to show the other outcomes', () => {
  /** prompts-and-close with its first UserPromptSubmit dispatch's closing event replaced. */
  function withFirstPromptClosedBy(
    closing: (
      scheduledEventId: string,
      startedEventId: string,
    ) => {
      eventType: string;
      attributes: Record<string, unknown>;
    },
  ): HistoryDispatch {
    const json = readJson('prompts-and-close.json');
    const scheduled = dispatchScheduledEvents(json)[1]!;
    const index = closingEventIndex(json, scheduled.eventId);
    const old = json.events[index]!;
    const startedEventId = (old.activityTaskCompletedEventAttributes as { startedEventId: string })
      .startedEventId;
    const { eventType, attributes } = closing(scheduled.eventId, startedEventId);
    const key = Object.keys(old).find((k) => k.endsWith('EventAttributes'))!;
    const replaced: JsonEvent = { ...old, eventType };
    delete replaced[key];
    Object.assign(replaced, attributes);
    json.events[index] = replaced;
    const dispatch = timelineFromHistory(historyFromJSON(json)).dispatches[1]!;
    expect(dispatch.event).toBe('UserPromptSubmit');
    return dispatch;
  }

  it('an activity timed out on its heartbeat: worker_lost, timed by its events', () => {
    const dispatch = withFirstPromptClosedBy((scheduledEventId, startedEventId) => ({
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT',
      attributes: {
        activityTaskTimedOutEventAttributes: {
          failure: {
            message: 'activity Heartbeat timeout',
            timeoutFailureInfo: { timeoutType: 'TIMEOUT_TYPE_HEARTBEAT' },
          },
          scheduledEventId,
          startedEventId,
          retryState: 'RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED',
        },
      },
    }));
    expect(dispatch.decision).toBe('worker_lost');
    expect(dispatch.reason).toBe('the worker running the dispatch was lost (HEARTBEAT)');
    expect(dispatch.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('an activity timed out start-to-close: worker_lost (START_TO_CLOSE)', () => {
    const dispatch = withFirstPromptClosedBy((scheduledEventId, startedEventId) => ({
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT',
      attributes: {
        activityTaskTimedOutEventAttributes: {
          failure: {
            message: 'activity StartToClose timeout',
            timeoutFailureInfo: { timeoutType: 'TIMEOUT_TYPE_START_TO_CLOSE' },
          },
          scheduledEventId,
          startedEventId,
        },
      },
    }));
    expect(dispatch.reason).toBe('the worker running the dispatch was lost (START_TO_CLOSE)');
  });

  it('a failed activity: error, with the failure message as the reason', () => {
    const dispatch = withFirstPromptClosedBy((scheduledEventId, startedEventId) => ({
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_FAILED',
      attributes: {
        activityTaskFailedEventAttributes: {
          failure: { message: 'registry has no agent named x', applicationFailureInfo: {} },
          scheduledEventId,
          startedEventId,
        },
      },
    }));
    expect(dispatch).toMatchObject({
      decision: 'error',
      reason: 'registry has no agent named x',
    });
  });

  it('several callbacks: the first skip or abort decides, later ones do not', () => {
    const dispatch = withFirstPromptClosedBy((scheduledEventId, startedEventId) => ({
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
      attributes: {
        activityTaskCompletedEventAttributes: {
          result: {
            payloads: [
              jsonPayload({
                status: 'completed',
                outputs: [
                  { action: 'continue', modifiedInput: { userPrompt: 'x' } },
                  { action: 'skip', reason: 'cached answer' },
                  { action: 'abort', reason: 'too late to matter' },
                ],
                callbackCount: 3,
                durationMs: 4.5,
              }),
            ],
          },
          scheduledEventId,
          startedEventId,
        },
      },
    }));
    expect(dispatch).toMatchObject({
      decision: 'skip',
      decidedBy: 1,
      reason: 'cached answer',
      callbackCount: 3,
      durationMs: 4.5,
    });
  });

  it('a callback error reported by the dispatch names its callback', () => {
    const dispatch = withFirstPromptClosedBy((scheduledEventId, startedEventId) => ({
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
      attributes: {
        activityTaskCompletedEventAttributes: {
          result: {
            payloads: [
              jsonPayload({
                status: 'error',
                error: { name: 'Error', message: 'boom' },
                callbackIndex: 1,
                callbackCount: 2,
                durationMs: 2,
              }),
            ],
          },
          scheduledEventId,
          startedEventId,
        },
      },
    }));
    expect(dispatch).toMatchObject({ decision: 'error', decidedBy: 1, reason: 'boom' });
  });

  it('a callback error reported by the dispatch carries its error record: event, callback, code, name, message', () => {
    const dispatch = withFirstPromptClosedBy((scheduledEventId, startedEventId) => ({
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
      attributes: {
        activityTaskCompletedEventAttributes: {
          result: {
            payloads: [
              jsonPayload({
                status: 'error',
                error: {
                  name: 'HookError',
                  code: 'HOOK_OUTPUT_INVALID',
                  message: 'Hook UserPromptSubmit callback #1 returned a malformed output',
                },
                callbackIndex: 0,
                callbackCount: 1,
                durationMs: 2,
              }),
            ],
          },
          scheduledEventId,
          startedEventId,
        },
      },
    }));
    expect(dispatch.error).toEqual({
      event: 'UserPromptSubmit',
      callbackIndex: 0,
      code: 'HOOK_OUTPUT_INVALID',
      name: 'HookError',
      message: 'Hook UserPromptSubmit callback #1 returned a malformed output',
    });
  });

  it('a tool event shows payload.toolName and toolUseId', () => {
    const json = readJson('prompts-and-close.json');
    const scheduled = dispatchScheduledEvents(json)[1]!;
    const attributes = scheduled.activityTaskScheduledEventAttributes as {
      input: { payloads: Array<{ data: string }> };
    };
    const input = decodeJsonPayload(attributes.input.payloads[0]!) as Record<string, unknown>;
    attributes.input.payloads[0] = jsonPayload({
      ...input,
      event: 'PreToolUse',
      payload: { toolName: 'Write', toolInput: { file_path: 'a.txt' }, toolUseId: 'call_0_0' },
    });
    const dispatch = timelineFromHistory(historyFromJSON(json)).dispatches[1]!;
    expect(dispatch).toMatchObject({
      event: 'PreToolUse',
      toolName: 'Write',
      toolUseId: 'call_0_0',
    });
    expect(renderTimeline(timelineFromHistory(historyFromJSON(json)))).toMatch(
      /\n1 +PreToolUse +Write +1 +continue/,
    );
  });

  it('an open session: the running dispatch has no duration and the status is RUNNING', () => {
    const json = readJson('abort.json');
    const scheduled = dispatchScheduledEvents(json)[1]!;
    const cut = closingEventIndex(json, scheduled.eventId);
    json.events = json.events.slice(0, cut);
    const timeline = timelineFromHistory(historyFromJSON(json));
    expect(timeline.status).toBe('RUNNING');
    expect(timeline.closedAt).toBeUndefined();
    expect(timeline.sessionEndMarker).toBeUndefined();
    expect(decisions(timeline)).toEqual(['SessionStart:continue', 'UserPromptSubmit:running']);
    expect(timeline.dispatches[1]!.durationMs).toBeUndefined();
    expect(timeline.dispatches[1]!.cancelRequested).toBe(true);
    expect(renderTimeline(timeline)).toMatch(/status: RUNNING$/);
  });

  it('a timeout whose callback never settled and whose worker is gone: cleanup lost', () => {
    const json = readJson('timeout-fail-closed.json');
    const settle = json.events.find(
      (e) =>
        (e.activityTaskScheduledEventAttributes as { activityType?: { name: string } } | undefined)
          ?.activityType?.name === 'awaitHookSettled',
    )!;
    const index = closingEventIndex(json, settle.eventId);
    const old = json.events[index]!;
    json.events[index] = {
      eventId: old.eventId,
      eventTime: old.eventTime,
      eventType: 'EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT',
      activityTaskTimedOutEventAttributes: {
        failure: {
          message: 'timeout',
          timeoutFailureInfo: { timeoutType: 'TIMEOUT_TYPE_HEARTBEAT' },
        },
        scheduledEventId: settle.eventId,
      },
    };
    const timeline = timelineFromHistory(historyFromJSON(json));
    expect(timeline.dispatches[1]).toMatchObject({ decision: 'timeout', cleanup: 'lost' });

    json.events = json.events.slice(0, index);
    const open = timelineFromHistory(historyFromJSON(json));
    expect(open.dispatches[1]).toMatchObject({ decision: 'timeout', cleanup: 'pending' });
  });

  it('refuses what is not a workflow history', () => {
    expect(() => timelineFromHistory({ events: [] })).toThrow(/no events/);
    const json = readJson('abort.json');
    json.events = json.events.slice(1);
    expect(() => timelineFromHistory(historyFromJSON(json))).toThrow(
      /first event is not WorkflowExecutionStarted/,
    );
  });
});

describe('local-dispatch.json edited: how a local dispatch ended, from its marker', () => {
  /** The fixture with its first local dispatch's marker edited by `edit`. */
  function withFirstLocalMarker(edit: (marker: Record<string, unknown>) => void): HistoryTimeline {
    const json = readJson('local-dispatch.json');
    const event = json.events.find(
      (e) =>
        (e.markerRecordedEventAttributes as { markerName?: string } | undefined)?.markerName ===
        'core_local_activity',
    )!;
    edit(event.markerRecordedEventAttributes as Record<string, unknown>);
    return timelineFromHistory(historyFromJSON(json));
  }

  it('as recorded: a local row with the outcome, the session budget and version', () => {
    const timeline = timelineOf('local-dispatch.json');
    const local = timeline.dispatches.filter((d) => d.local);
    expect(local.map((d) => `${d.event}:${d.decision}`)).toEqual([
      'UserPromptSubmit:continue',
      'UserPromptSubmit:continue',
    ]);
    expect(local[0]!.callbacks?.[0]).toMatchObject({
      action: 'continue',
      modifiedInput: { userPrompt: '[tenant:acme]\nhello' },
      inputDiff: expect.anything() as unknown,
    });
    expect(local[0]!.budgetMs).toBeGreaterThan(0);
    expect(local[0]!.scheduledEventId).toBe(local[0]!.closedEventId);
  });

  it('its summary names the event, the tool and the callback count', () => {
    const json = readJson('local-dispatch.json');
    const event = json.events.find(
      (e) =>
        (e.markerRecordedEventAttributes as { markerName?: string } | undefined)?.markerName ===
        'core_local_activity',
    )!;
    event.userMetadata = { summary: jsonPayload('PostToolUse Read, 3 callbacks') };
    const [dispatch] = timelineFromHistory(historyFromJSON(json)).dispatches.filter((d) => d.local);
    expect(dispatch).toMatchObject({ event: 'PostToolUse', toolName: 'Read', callbackCount: 1 });
  });

  it('refused by a worker of another version: no row (the activity that follows is the row)', () => {
    const timeline = withFirstLocalMarker((marker) => {
      delete (marker.details as Record<string, unknown>).result;
      marker.failure = {
        message: 'refused',
        cause: { message: 'runs v1', applicationFailureInfo: { type: 'WorkerVersionMismatch' } },
      };
    });
    expect(timeline.dispatches.filter((d) => d.local)).toHaveLength(1);
  });

  it('timed out: worker_lost, naming the timeout', () => {
    const timeline = withFirstLocalMarker((marker) => {
      delete (marker.details as Record<string, unknown>).result;
      marker.failure = {
        message: 'local activity timed out',
        cause: {
          message: 'timeout',
          timeoutFailureInfo: { timeoutType: 'TIMEOUT_TYPE_START_TO_CLOSE' },
        },
      };
    });
    expect(timeline.dispatches.find((d) => d.local)).toMatchObject({
      decision: 'worker_lost',
      reason: 'the worker running the dispatch was lost (START_TO_CLOSE)',
    });
  });

  it('failed: error, with the failure message as the reason', () => {
    const timeline = withFirstLocalMarker((marker) => {
      delete (marker.details as Record<string, unknown>).result;
      marker.failure = {
        message: 'Activity task failed',
        cause: { message: 'registry has no agent named x', applicationFailureInfo: {} },
      };
    });
    expect(timeline.dispatches.find((d) => d.local)).toMatchObject({
      decision: 'error',
      reason: 'registry has no agent named x',
    });
  });
});

describe('upgrade-abandoned-then-moved.json: a move whose client never finished, then a move', () => {
  it('records the abandoned move (the memo upsert) and the finished one, and inspect shows both', () => {
    const timeline = timelineOf('upgrade-abandoned-then-moved.json');
    expect(timeline.abandonedUpgrades).toEqual([
      { version: 'v1', toVersion: 'v2', by: 'dead-client', at: expect.any(Number), heldMs: 500 },
    ]);
    expect(timeline.upgrades).toMatchObject([
      { fromVersion: 'v1', toVersion: 'v2', by: 'operator', afterPrompts: 2 },
    ]);
    // The fixture's agent has UserPromptSubmit callbacks only.
    expect(timeline.dispatches.map((d) => `${d.event} ${d.version}`)).toEqual([
      'UserPromptSubmit v1',
      'UserPromptSubmit v1',
      'UserPromptSubmit v2',
    ]);
    expect(renderTimeline(timeline)).toMatch(
      /^move to version v2 by dead-client abandoned .*: no finish or cancel within 500 ms, stayed on v1$/m,
    );
  });
});

describe('upgraded-session.json: a session moved from v1 to v2 by session.upgrade()', () => {
  it('records the move (from, to, by whom, after how many prompts) and which version decided each dispatch', () => {
    const timeline = timelineOf('upgraded-session.json');
    expect(timeline.version).toBe('v1');
    expect(timeline.upgrades).toHaveLength(1);
    expect(timeline.upgrades![0]).toMatchObject({
      fromVersion: 'v1',
      toVersion: 'v2',
      by: 'operator@deploy',
      afterPrompts: 1,
    });
    expect(timeline.upgrades![0]!.fromFingerprint).toMatch(/^[0-9a-f]{16}$/);
    // v1 and v2 differ by a captured value only (the fixture's definition): one fingerprint.
    expect(timeline.upgrades![0]!.toFingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(timeline.dispatches.map((d) => `${d.event} ${d.version}`)).toEqual([
      'SessionStart v1',
      'UserPromptSubmit v1',
      'UserPromptSubmit v2',
      'SessionEnd v2',
    ]);
    const text = renderTimeline(timeline);
    expect(text).toMatch(
      /^moved from version v1 \(fingerprint [0-9a-f]{16}\) to v2 \(fingerprint [0-9a-f]{16}\) .* by operator@deploy, after 1 prompt\(s\)$/m,
    );
    expect(text).toContain('dispatches also ran on version v2');
  });

  it('a session that never moved has no upgrades', () => {
    expect(timelineOf('demo-session.json').upgrades).toBeUndefined();
  });
});

describe('renderTimeline', () => {
  it('prints one row per dispatch, the marker before SessionEnd, and the final status', () => {
    const text = renderTimeline(timelineOf('session-end-failed-then-closed.json'));
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      'session fixture-session-end-retry (workflow session-fixture-session-end-retry): 37 history events',
    );
    const header = lines.findIndex((l) => l.startsWith('SEQ'));
    // The fixture's agent has no version: its fingerprint names it.
    expect(lines[header]).toMatch(
      /^SEQ +EVENT +TOOL +CALLBACKS +DECISION +REASON +DURATION +VERSION$/,
    );
    expect(lines[header + 1]).toMatch(/^0 +SessionStart +1 +continue +\d+\.\d ms +[0-9a-f]{16}$/);
    expect(lines[header + 2]).toMatch(
      /^-- +SessionEnd marker +reason=other +recorded .* \(event 21\)$/,
    );
    // A callback that failed: its error's code before the message (a plain Error has none).
    expect(lines[header + 3]).toMatch(
      /^1 +SessionEnd +1 +error +HOOK_CALLBACK_FAILED: flush failed +\d+\.\d ms +[0-9a-f]{16}$/,
    );
    expect(lines.at(-1)).toMatch(/^status: COMPLETED at \S+ \(end reason other, 0 prompts\)$/);
    // Aligned: every row's DECISION cell starts in the same column.
    const column = lines[header]!.indexOf('DECISION');
    expect(lines[header + 1]!.slice(column).startsWith('continue')).toBe(true);
    expect(lines[header + 3]!.slice(column).startsWith('error')).toBe(true);
  });
});

describe('describeNondeterminism', () => {
  const wrap = (core: string) =>
    'Replay failed with a nondeterminism error. This means that the workflow code as written is ' +
    'not compatible with the history that was fed in. Details: Workflow activation completion ' +
    `failed: Failure { failure: Some(Failure { message: "${core}", source: "" }) }`;

  it('takes the core message and the event it names', () => {
    const report = describeNondeterminism(
      wrap(
        '[TMPRL1100] Nondeterminism error: Activity machine does not handle this event: HistoryEvent(id: 20, TimerStarted)',
      ),
    );
    expect(report).toEqual({
      message:
        '[TMPRL1100] Nondeterminism error: Activity machine does not handle this event: HistoryEvent(id: 20, TimerStarted)',
      eventId: 20,
      eventType: 'TimerStarted',
    });
  });

  it('places a renamed activity by its unique scheduled event', () => {
    const json = readJson('prompts-and-close.json');
    const scheduled = dispatchScheduledEvents(json)[1]!;
    (
      scheduled.activityTaskScheduledEventAttributes as { activityType: { name: string } }
    ).activityType.name = 'renamedActivity';
    const report = describeNondeterminism(
      wrap(
        "[TMPRL1100] Nondeterminism error: Activity type of scheduled event 'renamedActivity' does not match activity type of activity command 'dispatchHook'",
      ),
      historyFromJSON(json),
    );
    expect(report.eventId).toBe(Number(scheduled.eventId));
    expect(report.eventType).toBe('ActivityTaskScheduled');
  });

  it('says nothing of where when nothing tells', () => {
    expect(describeNondeterminism('something odd')).toEqual({ message: 'something odd' });
  });
});

/** The Write approval recorded in demo-session.json: the demo's client identity (pid@host). */
const DEMO_APPROVAL = {
  by: '3602@vm',
  requestId: '0fe7459d-d982-4ccd-a8ce-7e693840ba4d',
  waitedMs: 4940,
};

describe('decisions, permissions and tool results (demo-session.json)', () => {
  const timeline = timelineOf('demo-session.json');

  it("each callback's own decision and reason; the deciding one marked", () => {
    const bash = timeline.dispatches.find((d) => d.toolName === 'Bash')!;
    expect(bash.callbacks?.map((c) => [c.action, c.reason, c.decided])).toEqual([
      ['continue', undefined, undefined],
      ['abort', '危险命令被阻止: rm -rf build && echo cleaned', true],
      ['continue', undefined, undefined],
    ]);
  });

  it('a redacting PostToolUse: its output as the changed line against the tool output', () => {
    const redaction = timeline.dispatches
      .filter((d) => d.event === 'PostToolUse')
      .flatMap((d) => d.callbacks ?? [])
      .find((c) => c.outputDiff);
    expect(redaction?.outputDiff).toEqual({
      kind: 'text',
      changes: [
        { op: '-', line: 1, text: 'SECRET_KEY=sk_live_demo_4f9a2c71b8e34d05' },
        { op: '+', line: 1, text: 'SECRET_KEY=***' },
      ],
    });
  });

  it("the permission function's answers, the person's approval with the client's identity, the results", () => {
    expect(
      timeline.toolCalls.map((c) => [
        c.toolName,
        c.permission?.policy,
        c.permission?.answer,
        c.permission?.ask?.outcome,
        c.permission?.ask?.by,
        c.result?.status,
      ]),
    ).toEqual([
      ['Read', 'permission function', 'allow', undefined, undefined, 'success'],
      ['Read', 'permission function', 'allow', undefined, undefined, 'success'],
      ['Bash', undefined, undefined, undefined, undefined, undefined],
      ['Grep', 'permission function', 'allow', undefined, undefined, 'success'],
      ['Write', 'permission function', 'ask', 'approved', DEMO_APPROVAL.by, 'success'],
    ]);
    const write = timeline.toolCalls.at(-1)!;
    expect(write.permission?.ask).toMatchObject({
      requestId: DEMO_APPROVAL.requestId,
      waitedMs: DEMO_APPROVAL.waitedMs,
    });
    // The PreToolUse edit reached the tool: the input it ran with, against the model's.
    expect(write.inputDiff).toMatchObject({
      kind: 'object',
      changes: [{ key: 'content', lines: [{ op: '+', line: 1, text: '// Generated' }] }],
    });
  });

  it('the text shows the tool calls table and the approval', () => {
    const text = renderTimeline(timeline);
    expect(text).toMatch(
      /\ncall_3_0 +Write +ask \(permission function, \S+ ms\) → approved +person 3602@vm +4\.9 s +success /,
    );
    expect(text).toMatch(/\ncall_1_0 +Bash +- +- +- +not run: PreToolUse abort +- +-\n/);
    expect(text).toContain('approved by 3602@vm after 4.9 s (request 0fe7459d-');
  });
});

describe('prompts (turns)', () => {
  it('each prompt with its text, status, answer, and the dispatches and tool calls that ran for it', () => {
    const timeline = timelineOf('demo-session.json');
    expect(
      timeline.prompts.map((p) => [p.prompt.slice(0, 20), p.status, p.dispatches, p.toolCalls]),
    ).toEqual([
      [
        'Audit this repositor',
        'completed',
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        ['call_0_0', 'call_0_1', 'call_1_0', 'call_2_0', 'call_3_0'],
      ],
      ['What did you change?', 'completed', [11], []],
    ]);
    expect(timeline.prompts[1]?.text).toBe(
      'I changed one file, NOTES.md, after your approval. The rm -rf was blocked.',
    );
  });

  it('sends queued behind another: each prompt has its own dispatches, local and remote, in turn', () => {
    for (const name of ['queued-sends.json']) {
      const timeline = timelineOf(name);
      const events = (p: HistoryTimeline['prompts'][number]) =>
        p.dispatches.map((seq) => timeline.dispatches[seq]!.event);
      // 'first' and 'second' were sent at once: the second waited for the first to answer.
      const first = timeline.prompts.find((p) => p.prompt === 'first')!;
      const second = timeline.prompts.find((p) => p.prompt === 'second')!;
      expect(events(first), name).toEqual(['UserPromptSubmit', 'TaskCompleted']);
      expect(events(second), name).toEqual(['UserPromptSubmit', 'TaskCompleted']);
      expect(Math.max(...first.dispatches), name).toBeLessThan(Math.min(...second.dispatches));
    }
    // The local UserPromptSubmit rows (markers, no request id) fall to the prompt running.
    const queued = timelineOf('queued-sends.json');
    const second = queued.prompts.find((p) => p.prompt === 'second')!;
    expect(queued.dispatches[second.dispatches[0]!]).toMatchObject({ local: true });
  });

  it('a prompt whose send failed: status failed with the failure message', () => {
    const timeline = timelineOf('prompts-and-close.json');
    expect(timeline.prompts.map((p) => [p.prompt, p.status, p.text])).toEqual([
      ['hello', 'completed', 'reply 0'],
      ['reject', 'failed', 'rejected by policy'],
      ['again', 'completed', 'reply 1'],
    ]);
  });

  it('an open prompt: no status, and every tool call no finished prompt claims', () => {
    const json = readJson('demo-session.json');
    // Cut the history right after the Write's approval timer started: the first prompt runs.
    const timer = json.events.findIndex((e) => e.eventType === 'EVENT_TYPE_TIMER_STARTED');
    const open = timelineFromHistory(historyFromJSON({ events: json.events.slice(0, timer + 1) }));
    expect(open.prompts).toHaveLength(1);
    expect(open.prompts[0]?.status).toBeUndefined();
    expect(open.prompts[0]?.toolCalls.at(-1)).toBe('call_3_0');
  });
});
