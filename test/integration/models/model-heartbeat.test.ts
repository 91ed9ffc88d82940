/**
 * `advanced.temporal.modelHeartbeatTimeoutMs`: the model step's heartbeat timeout, which
 * bounds how long a session stalls when its worker dies during a model call (issue 19,
 * item 4). It reaches the step's activity options; a session started without it keeps the
 * 30 s default (and an input without the field).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

async function stepHeartbeatTimeouts(modelHeartbeatTimeoutMs?: number) {
  const agent = await createAgent({
    model: scriptedModel(() => 'ok'),
    advanced: {
      temporal: {
        address: temporalAddress(),
        taskQueue: uniqueTaskQueue('model-heartbeat'),
        ...(modelHeartbeatTimeoutMs ? { modelHeartbeatTimeoutMs } : {}),
      },
    },
  });
  agents.push(agent);
  const session = await agent.createSession();
  await session.send('one');
  await session.send('two');
  await session.close();
  const client = await rawClient();
  try {
    const history = await client.workflow.getHandle(session.workflowId).fetchHistory();
    const events = history.events ?? [];
    const steps = events
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === 'modelStep');
    const input = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    return {
      inInput: Buffer.from(input!).toString('utf8').includes('modelHeartbeatTimeoutMs'),
      timeouts: steps.map((a) => Number(a!.heartbeatTimeout?.seconds ?? 0)),
      retry: {
        initialMs: Number(steps[0]?.retryPolicy?.initialInterval?.nanos ?? 0) / 1e6,
        coefficient: steps[0]?.retryPolicy?.backoffCoefficient,
        attempts: steps[0]?.retryPolicy?.maximumAttempts,
      },
    };
  } finally {
    await client.connection.close();
  }
}

describe('advanced.temporal.modelHeartbeatTimeoutMs', () => {
  it("sets the model step's heartbeat timeout; 30 s when not set", async () => {
    // The policy's backoff paces only a step lost with its worker: retried 100 ms later, up
    // to 10 attempts (a step that failed sets its own wait, 1 s doubled, and its 5th failure
    // is final; model-retries.test.ts).
    const retry = { initialMs: 100, coefficient: 2, attempts: 10 };
    expect(await stepHeartbeatTimeouts(2_000)).toEqual({
      inInput: true,
      timeouts: [2, 2],
      retry,
    });
    expect(await stepHeartbeatTimeouts()).toEqual({ inInput: false, timeouts: [30, 30], retry });
  }, 60_000);
});
