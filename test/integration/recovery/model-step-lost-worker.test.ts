/**
 * A model step whose worker dies mid-call (issue 19, item 4): the step is retried on another
 * worker after its heartbeat timeout, reads the whole conversation by query (its cache never
 * saw the session), and the session goes on there, with no workflow task timed out on the
 * dead worker's sticky queue. That last check holds with Temporal's own query fallback too
 * (a sticky query that times out clears stickiness); how much sooner the step's own reset
 * (`leaveStickyQueue`) gets the retry to its model is a latency, measured by `bench:chaos`
 * (`BENCH_CHAOS_MODEL_MS`, `BENCH_CHAOS_TRACE`), not asserted here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { crashAgentOptions } from '../../fixtures/crash-agent.js';
import {
  count,
  crashEnv,
  effects,
  killAll,
  openGate,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import { historyOf, startedAttempt } from '../../helpers/history.js';

const { EventType, TimeoutType } = temporal.api.enums.v1;

const clients: AgentClient[] = [];
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('a model step lost with its worker', () => {
  it('is retried on the other worker, which reads the context by query; no workflow task waits on the dead sticky queue', async () => {
    const env = crashEnv({
      recordModel: true,
      sessionHooksOnly: true,
      modelHeartbeatTimeoutMs: 1_000,
    });
    const workers = {
      A: await startWorkerProcess(env, 'A'),
      B: await startWorkerProcess(env, 'B'),
    };
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const session = await client.createSession();
    expect((await session.send('first')).text()).toBe('echo:first');
    const pending = session.send('model-block second');
    await waitForEffect(env, 'model model-block second');
    const holder = count(env, 'A model model-block second') > 0 ? 'A' : 'B';
    const other = holder === 'A' ? 'B' : 'A';
    await workers[holder].kill();
    openGate(env);
    expect((await pending).text()).toBe('echo:model-block second');
    expect((await session.send('third')).text()).toBe('echo:third');
    const models = effects(env).filter((line) => line.includes(' model model-block'));
    // The holder's attempt, then the other worker's, which queried (a miss) and got it all.
    expect(models).toHaveLength(2);
    expect(models[0]).toMatch(new RegExp(`^${holder} model model-block second messages=3`));
    expect(models[1]).toMatch(
      new RegExp(`^${other} model model-block second messages=3 hits=\\d+ misses=1$`),
    );

    const history = await historyOf(session.workflowId);
    // The retry is attempt 2, after attempt 1's heartbeat timed out (no attempt 3).
    const retried = startedAttempt(history, 2);
    expect(retried?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    expect(startedAttempt(history, 3)).toBeUndefined();
    const stickyTimeouts = (history.events ?? []).filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT &&
        e.workflowTaskTimedOutEventAttributes?.timeoutType ===
          TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START,
    );
    expect(stickyTimeouts).toEqual([]);
    expect(await session.conversation()).toHaveLength(6);
    await session.close();
  }, 120_000);
});
