/**
 * Approval deadlines in stages (issue 37, item 2), on the test run's Temporal server with real
 * worker processes: while an ask waits, the reminder, then the escalation, then the deadline's
 * deny, each a durable timer of the session and one `notify` call (an activity) — once each,
 * across a worker killed between stages; an answer before the escalation cancels its timer,
 * and a notify that fails is retried.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { createAgentClient, type AgentClient, type Session } from '../../../src/index.js';
import { crashAgentOptions, type CrashAgentEnv } from '../../fixtures/crash-agent.js';
import {
  count,
  crashEnv,
  killAll,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import { pendingAsk, rawClient, waitFor } from '../../helpers/common.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { renderTimeline } from '../../../src/cli/render.js';
import { sessionAuditEntries } from '../../../src/audit/index.js';

const clients: AgentClient[] = [];
let raw: Client | undefined;
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await raw?.connection.close();
  raw = undefined;
});

async function clientFor(env: CrashAgentEnv): Promise<AgentClient> {
  const client = await createAgentClient(crashAgentOptions(env));
  clients.push(client);
  return client;
}

/** The stage timers of the session's history (summary and how each ended), and its notifications. */
async function stagesOf(session: Session) {
  raw ??= await rawClient();
  const history = await raw.workflow.getHandle(session.workflowId).fetchHistory();
  const timers = new Map<number, { summary: string; ended: 'running' | 'fired' | 'canceled' }>();
  const notified: string[] = [];
  const completed = new Set<number>();
  const scheduled = new Map<number, string>();
  for (const event of history.events ?? []) {
    const id = Number(event.eventId);
    const summary = event.userMetadata?.summary;
    if (event.timerStartedEventAttributes) {
      timers.set(id, {
        summary: summary ? String(defaultPayloadConverter.fromPayload(summary)) : '',
        ended: 'running',
      });
    }
    const fired = event.timerFiredEventAttributes?.startedEventId;
    if (fired != null) timers.get(Number(fired))!.ended = 'fired';
    const canceled = event.timerCanceledEventAttributes?.startedEventId;
    if (canceled != null) timers.get(Number(canceled))!.ended = 'canceled';
    const activity = event.activityTaskScheduledEventAttributes;
    if (activity?.activityType?.name === 'notifyApproval') {
      const input = defaultPayloadConverter.fromPayload<{ stage: string }>(
        activity.input!.payloads![0]!,
      );
      scheduled.set(id, input.stage);
      notified.push(input.stage);
    }
    const done = event.activityTaskCompletedEventAttributes?.scheduledEventId;
    if (done != null && scheduled.has(Number(done))) completed.add(Number(done));
  }
  return {
    timers: [...timers.values()].filter((t) => !t.summary.startsWith('approval deadline')),
    notified,
    completed: [...completed].map((id) => scheduled.get(id)!),
  };
}

const approvals = {
  remindAfterMs: 1_000,
  escalateAfterMs: 4_000,
  escalateTo: 'security-oncall',
  permissionTimeoutMs: 7_000,
};

describe('approval stages (advanced.approvals)', () => {
  it('remind, escalate, then the deadline denies: each stage notifies once, across a worker restart', async () => {
    const env = crashEnv({ approvals });
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const reply = session.send('record:staged');
    reply.catch(() => undefined); // awaited below; a failed assertion first leaves it unhandled
    await pendingAsk(session, 15_000, 'the ask');
    // Asked, or reminded already when the first task was slow: the next stage follows it.
    const [asked] = await session.pendingPermissions();
    expect(asked!.nextStageAt).toBe(asked!.askedAt + (asked!.stage === 'asked' ? 1_000 : 4_000));

    await waitForEffect(env, 'A notify remind');
    // The reminder's activity recorded as completed, then the worker dies between stages.
    await waitFor(
      async () => (await stagesOf(session)).completed.includes('remind'),
      10_000,
      'the reminder recorded',
    );
    // Reminded (escalated already on a slow machine): the next stage follows the stage.
    const [reminded] = await session.pendingPermissions();
    expect(reminded).toMatchObject(
      reminded!.stage === 'escalated'
        ? { escalateTo: 'security-oncall', nextStageAt: asked!.deadline }
        : { stage: 'reminded', nextStageAt: asked!.askedAt + 4_000 },
    );
    await a.kill();
    // The escalation's timer fires on the server while no worker runs the session.
    await waitFor(
      async () =>
        (await stagesOf(session)).timers.some(
          (t) => t.ended === 'fired' && t.summary.startsWith('approval escalation'),
        ),
      15_000,
      'the escalation timer fired',
    );
    await startWorkerProcess(env, 'B');

    const response = await reply;
    expect(response.text()).toBe('done:error');
    expect(count(env, 'Record staged')).toBe(0);
    await waitFor(() => count(env, 'notify deadline') > 0, 15_000, 'the deadline notification');
    expect(count(env, 'notify remind')).toBe(1);
    expect(count(env, 'A notify remind') + count(env, 'B notify remind')).toBe(1);
    expect(count(env, 'notify escalate')).toBe(1);
    expect(count(env, 'B notify escalate')).toBe(1);
    // The escalation and the deadline name the group; the reminder does not.
    expect(count(env, 'to=security-oncall')).toBe(2);
    expect(count(env, 'B notify deadline')).toBe(1);
    const { timers, notified } = await stagesOf(session);
    expect(timers.map((t) => [t.summary.split(':')[0], t.ended])).toEqual([
      ['approval reminder', 'fired'],
      ['approval escalation', 'fired'],
    ]);
    expect(notified).toEqual(['remind', 'escalate', 'deadline']);
    // `inspect` (the timeline rebuilt from the history) shows the stages the ask reached.
    const history = await raw!.workflow.getHandle(session.workflowId).fetchHistory();
    const timeline = timelineFromHistory(history);
    const ask = timeline.toolCalls[0]!.permission!.ask!;
    expect(ask.outcome).toBe('expired');
    expect(ask.stages?.map((s) => [s.stage, s.escalateTo, s.at - ask.askedAt >= 0])).toEqual([
      ['reminded', undefined, true],
      ['escalated', 'security-oncall', true],
    ]);
    // The audit log's approval entry carries them too.
    const approval = sessionAuditEntries([{ history }], session.workflowId).entries.find(
      (entry) => entry.kind === 'approval',
    );
    expect(approval).toMatchObject({ outcome: 'expired', stages: ask.stages });
    expect(renderTimeline(timeline)).toMatch(
      /asked \S+, reminded \S+, escalated to security-oncall \S+, deadline \S+: no answer by the deadline: denied/,
    );
    await session.close();
  });

  it('an answer before the escalation cancels its timer: no escalation, no deadline notify', async () => {
    // The escalation far enough off that the answer comes first however slow the machine.
    const env = crashEnv({
      approvals: {
        ...approvals,
        escalateAfterMs: 20_000,
        permissionTimeoutMs: 30_000,
        notifyFailures: 1,
      },
    });
    await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const reply = session.send('record:answered');
    reply.catch(() => undefined); // awaited below; a failed assertion first leaves it unhandled
    await pendingAsk(session, 15_000, 'the ask');
    // The reminder's first attempt throws; its retry notifies.
    await waitForEffect(env, 'A notify remind');
    await waitFor(
      async () => (await session.pendingPermissions())[0]?.stage === 'reminded',
      10_000,
      'the reminder stage',
    );
    const [request] = await session.pendingPermissions();
    await session.approve(request!.requestId, { digest: request!.digest! });
    expect((await reply).text()).toBe('done:success');
    await waitFor(
      async () => (await stagesOf(session)).completed.includes('remind'),
      10_000,
      'the retried reminder recorded',
    );
    const { timers, notified } = await stagesOf(session);
    expect(timers.map((t) => [t.summary.split(':')[0], t.ended])).toEqual([
      ['approval reminder', 'fired'],
      ['approval escalation', 'canceled'],
    ]);
    expect(notified).toEqual(['remind']);
    const timeline = timelineFromHistory(
      await raw!.workflow.getHandle(session.workflowId).fetchHistory(),
    );
    expect(timeline.toolCalls[0]!.permission!.ask).toMatchObject({
      outcome: 'approved',
      stages: [{ stage: 'reminded' }],
    });
    expect(count(env, 'notify remind')).toBe(2);
    expect(count(env, 'notify remind')).toBe(count(env, 'attempt=1') + count(env, 'attempt=2'));
    expect(count(env, 'attempt=2')).toBe(1);
    expect(count(env, 'notify escalate')).toBe(0);
    expect(count(env, 'Record answered')).toBe(1);
    await session.close();
  });
});
