/**
 * Adversarial: two agents (workers) on one task queue, payload sizes that add up, abort
 * races, and the README's Quick start run verbatim.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentSdkError } from '../../../src/index.js';
import {
  createAgent,
  createAgentClient,
  HookEvent,
  type Agent,
  type AgentModel,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

describe('two workers on one task queue', () => {
  it('session-level hooks are not silently dropped when the session is handed off to another worker', async () => {
    const taskQueue = uniqueTaskQueue('adv-fleet');
    const agentHook = async () => ({ action: 'continue' as const });
    const options = (tag: string) => ({
      model: scriptedModel(() => `echo:${tag}`),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [agentHook] },
        temporal: { address: temporalAddress(), taskQueue },
      },
    });
    const a = await createAgent(options('A'));
    agents.push(a);
    const b = await createAgent(options('B'));
    agents.push(b);
    // A third worker of the same agent definition on another queue, reached by handoff.
    const otherQueue = `${taskQueue}-other`;
    const c = await createAgent({
      ...options('C'),
      advanced: {
        ...options('C').advanced,
        temporal: { address: temporalAddress(), taskQueue: otherQueue },
      },
    });
    agents.push(c);
    let sessionHookCalls = 0;
    const session = await a.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async () => {
            sessionHookCalls++;
            return { action: 'continue' };
          },
        ],
      },
    });
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      outcomes.push(
        await session.send(`p${i}`).then(
          (r) => `ok:${r.text()}`,
          (e: unknown) => `err:${(e as AgentSdkError).code}`,
        ),
      );
    }
    await session.handoff({ taskQueue: otherQueue });
    for (let i = 0; i < 3; i++) {
      outcomes.push(
        await session.send(`h${i}`).then(
          (r) => `ok:${r.text()}`,
          (e: unknown) => `err:${(e as AgentSdkError).code}`,
        ),
      );
    }
    const timeline = await session.timeline();
    await session.close();
    // No dispatch quietly ran fewer callbacks than the session has.
    for (const entry of timeline.filter(
      (e) => e.event === 'UserPromptSubmit' && e.outcome === 'continue',
    )) {
      expect(entry.callbackCount).toBe(2);
    }
    // Every prompt that succeeded must have run the session's callback (or failed loudly).
    const succeeded = outcomes.filter((o) => o.startsWith('ok:')).length;
    expect(sessionHookCalls).toBe(succeeded);
  }, 60_000);
});

describe('payload sizes that add up', () => {
  it('a 1.1 MB prompt with a 1.1 MB answer and a TaskCompleted hook: send() settles and the session survives', async () => {
    const big = 'p'.repeat(1_100_000);
    const model: AgentModel = {
      name: 'big',
      async step() {
        return { text: 'a'.repeat(1_100_000), finishReason: 'stop' };
      },
    };
    const agent = await createAgent({
      model,
      advanced: {
        hooks: { [HookEvent.TaskCompleted]: [async () => ({ action: 'continue' })] },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('adv-size') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    const outcome = await Promise.race([
      session.send(big).then(
        (r) => `ok:${r.status}`,
        (e: unknown) => e,
      ),
      new Promise((r) => setTimeout(() => r('send pending after 15s'), 15_000)),
    ]);
    const closed = await Promise.race([
      session.close().then(
        (r) => r,
        (e: unknown) => e,
      ),
      new Promise((r) => setTimeout(() => r('close pending after 10s'), 10_000)),
    ]);
    const c = await rawClient();
    await c.workflow
      .getHandle(session.workflowId)
      .terminate('adversarial cleanup')
      .catch(() => 0);
    await c.connection.close();
    expect(outcome).not.toBe('send pending after 15s');
    expect(closed).toMatchObject({ closedNow: true });
  }, 60_000);
});

const status0 = (r: unknown) => (r as { status?: string }).status;

describe('abort racing the end of a prompt', () => {
  it('abort() never answers true for a prompt that then resolves completed', async () => {
    const agent = await createAgent({
      model: scriptedModel(() => 'done'),
      advanced: {
        hooks: { [HookEvent.TaskCompleted]: [async () => ({ action: 'continue' })] },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('adv-race') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    const inconsistent: string[] = [];
    for (let i = 0; i < 25; i++) {
      const pending = session.send(`r${i}`);
      pending.catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5 + ((i * 7) % 40)));
      const aborted = await session.abort(new Error(`abort ${i}`));
      const response = await pending.catch((e: unknown) => e);
      if (aborted && status0(response) === 'completed') console.log('race', i, response);
      const status = (response as { status?: string }).status ?? String(response);
      if (aborted && status === 'completed') inconsistent.push(`#${i}`);
      if (!aborted && status === 'aborted') inconsistent.push(`#${i}(false/aborted)`);
    }
    const closeError = await session.close().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (closeError) {
      const c = await rawClient();
      const history = await c.workflow.getHandle(session.workflowId).fetchHistory();
      const evs = history.events ?? [];
      console.log(
        'last events:',
        evs
          .slice(-14)
          .map(
            (e) =>
              `${e.eventId}:${e.eventType}:${e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''}`,
          )
          .join(' '),
      );
      for (const e of evs) {
        const f = e.workflowTaskFailedEventAttributes;
        if (f)
          console.log(
            'WFT failed:',
            f.cause,
            f.failure?.message,
            f.failure?.stackTrace?.slice(0, 800),
          );
      }
      await c.connection.close();
    }
    expect(closeError).toBeUndefined();
    expect(inconsistent).toEqual([]);
  }, 60_000);
});

describe('a worker without the agent definition the session names', () => {
  it("the dispatch error says what is wrong (no agent named ...), not just 'Activity task failed'", async () => {
    const taskQueue = uniqueTaskQueue('adv-name');
    const worker = await createAgent({
      model: scriptedModel(() => 'x'),
      advanced: { temporal: { address: temporalAddress(), taskQueue } },
    });
    agents.push(worker);
    const client = await createAgentClient({
      name: 'billing',
      model: scriptedModel(() => 'x'),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
        temporal: { address: temporalAddress(), taskQueue },
      },
    });
    try {
      const session = await client.createSession();
      const error = await session.send('x').catch((e: unknown) => e);
      console.log('agent-name mismatch:', error);
      await session.close().catch(() => undefined);
      expect((error as Error).message).toMatch(/billing/);
    } finally {
      await client.close();
    }
  }, 30_000);
});
