/**
 * Adversarial: several workers on one task queue (session hooks, callback counts, agent
 * names), payload sizes that add up, and abort racing the end of a prompt.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentSdkError, HookInput } from '../../../src/index.js';
import {
  createAgent,
  createAgentClient,
  createAgentWorker,
  HookError,
  HookEvent,
  type Agent,
  type AgentModel,
} from '../../../src/index.js';
import { MAX_PROMPT_BYTES } from '../../../src/client/send-response.js';
import { scriptedModel } from '../../../src/testing/index.js';
import proto from '@temporalio/proto';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

const { temporal } = proto;

/** Wait until a worker polls the activities of `taskQueue` (as the server sees it). */
async function waitForPoller(taskQueue: string): Promise<void> {
  const client = await rawClient();
  try {
    await waitFor(
      async () => {
        const { pollers } = await client.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: taskQueue },
          taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        });
        return (pollers?.length ?? 0) > 0;
      },
      15_000,
      `a worker polling ${taskQueue}`,
    );
  } finally {
    await client.connection.close();
  }
}

const outcomeOf = (promise: Promise<{ text(): string }>) =>
  promise.then(
    (r) => `ok:${r.text()}`,
    (e: unknown) => `err:${(e as AgentSdkError).code}`,
  );

describe('two workers on one task queue', () => {
  it('session-level hooks run on the worker of the process that created the session, and fail loudly (HOOK_CALLBACKS_MISSING) on another worker of the queue and after a handoff', async () => {
    const taskQueue = uniqueTaskQueue('adv-fleet');
    const agentHook = async () => ({ action: 'continue' as const });
    const options = (tag: string, queue = taskQueue) => ({
      model: scriptedModel(() => `echo:${tag}`),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [agentHook] },
        temporal: { address: temporalAddress(), taskQueue: queue },
      },
    });
    const a = await createAgent(options('A'));
    agents.push(a);
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
    // Only A's worker polls: both callbacks run, on A.
    for (let i = 0; i < 2; i++) outcomes.push(await outcomeOf(session.send(`a${i}`)));
    expect(outcomes).toEqual(['ok:echo:A', 'ok:echo:A']);
    expect(sessionHookCalls).toBe(2);

    // B (same agent definition, no session hooks) joins the queue and A's worker stops:
    // the dispatches reach B, which refuses rather than running one callback of two.
    const b = await createAgent(options('B'));
    agents.push(b);
    await a.worker.shutdown();
    for (let i = 0; i < 2; i++) outcomes.push(await outcomeOf(session.send(`b${i}`)));

    // Handed off to the workers of another queue: refused there too.
    const otherQueue = `${taskQueue}-other`;
    const c = await createAgent(options('C', otherQueue));
    agents.push(c);
    // createAgent resolves before its worker's first poll reaches the server; handoff
    // refuses a queue nobody polls yet.
    await waitForPoller(otherQueue);
    await session.handoff({ taskQueue: otherQueue });
    for (let i = 0; i < 2; i++) outcomes.push(await outcomeOf(session.send(`c${i}`)));

    expect(outcomes.slice(2)).toEqual(Array(4).fill('err:HOOK_CALLBACKS_MISSING'));
    expect(sessionHookCalls).toBe(2);
    const timeline = await session.timeline();
    await session.close();
    const dispatches = timeline.filter((e) => e.event === 'UserPromptSubmit');
    expect(dispatches.map((e) => e.outcome)).toEqual([
      'continue',
      'continue',
      'error',
      'error',
      'error',
      'error',
    ]);
    expect(dispatches.slice(0, 2).map((e) => e.callbackCount)).toEqual([2, 2]);
    for (const refused of dispatches.slice(2)) {
      expect(refused.reason).toMatch(
        /This worker has 1 UserPromptSubmit callback\(s\) for session .*; the session expects 2/,
      );
    }
  }, 60_000);

  it('a worker whose agent definition has another number of callbacks for an event refuses its dispatches: another version, never its own callbacks', async () => {
    const taskQueue = uniqueTaskQueue('adv-count');
    let workerCalls = 0;
    const worker = await createAgentWorker({
      model: scriptedModel(() => 'from the worker'),
      advanced: {
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async () => {
              workerCalls++;
              return { action: 'continue' };
            },
          ],
        },
        // Unversioned on both sides: the refusal by the worker itself (routing by Worker
        // Deployments would not start a session of a version no worker polls as).
        temporal: { address: temporalAddress(), taskQueue, versioning: 'off' },
      },
    });
    const cont = async () => ({ action: 'continue' as const });
    const client = await createAgentClient({
      model: scriptedModel(() => 'unused'),
      // Two callbacks where the worker has one: another definition, so another version. A short
      // budget: the refused dispatch is scheduled again until it is spent.
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [cont, cont] },
        hookTimeoutMs: 3_000,
        temporal: { address: temporalAddress(), taskQueue, versioning: 'off' },
      },
    });
    try {
      const session = await client.createSession();
      const error = await session.send('x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HookError);
      expect(error).toMatchObject({
        code: 'WORKER_VERSION_MISMATCH',
        event: HookEvent.UserPromptSubmit,
      });
      // Both versions named: the session's (its client's fingerprint) and the worker's.
      const sessionVersion = /version '([0-9a-f]{16})'/.exec((error as Error).message)?.[1];
      expect(sessionVersion).toBeDefined();
      expect(sessionVersion).not.toBe(worker.version);
      expect((error as Error).message).toContain(`'${worker.version}'`);
      expect(workerCalls).toBe(0);
      await session.close();
    } finally {
      await client.close();
      await worker.shutdown();
    }
  }, 30_000);
});

describe('payload sizes that add up', () => {
  it('a prompt just under the 1 MiB limit with a 1.1 MB answer and a TaskCompleted hook: send() completes, texts are cut as documented, the session survives', async () => {
    const prompt = 'p'.repeat(1_000_000); // 1,000,002 bytes of JSON: under MAX_PROMPT_BYTES
    expect(JSON.stringify(prompt).length).toBeLessThan(MAX_PROMPT_BYTES);
    const answer = 'a'.repeat(1_100_000);
    const model: AgentModel = {
      name: 'big',
      async step() {
        return { text: answer, finishReason: 'stop' };
      },
    };
    const completed: HookInput[] = [];
    const agent = await createAgent({
      model,
      advanced: {
        hooks: {
          [HookEvent.TaskCompleted]: [
            async (input) => {
              completed.push(input);
              return { action: 'continue' };
            },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('adv-size') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    const response = await session.send(prompt);
    expect(response.status).toBe('completed');
    // Assistant text over 512 Ki characters is cut with a marker (README, Models).
    expect(response.text()).toBe(
      `${answer.slice(0, 524_288)}\n[... truncated: the model returned 1100000 characters ...]`,
    );
    // TaskCompleted's text fields are cut at 256 Ki characters with a marker.
    expect(completed).toHaveLength(1);
    expect(completed[0]!.taskDescription).toBe(
      `${prompt.slice(0, 262_144)}\n[... truncated: 1000000 characters in all, first 262144 shown ...]`,
    );
    expect(String(completed[0]!.resultSummary).startsWith(answer.slice(0, 262_144))).toBe(true);
    expect(String(completed[0]!.resultSummary)).toMatch(/first 262144 shown \.\.\.\]$/);
    // The session is still usable, and closes.
    expect((await session.send('small')).status).toBe('completed');
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: false });
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
      // Unversioned on both sides: the worker's own answer to a name it does not run.
      advanced: { temporal: { address: temporalAddress(), taskQueue, versioning: 'off' } },
    });
    agents.push(worker);
    const client = await createAgentClient({
      name: 'billing',
      model: scriptedModel(() => 'x'),
      advanced: {
        hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
        temporal: { address: temporalAddress(), taskQueue, versioning: 'off' },
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
