/**
 * Budgets shared per tenant, end to end: three worker processes run the agent against a real
 * OpenAI-compatible HTTP server that reports usage; this process is the client. Twenty sessions
 * of one tenant never spend past the tenant's cap together, the budget's own count equals the
 * sessions' spend recounted from their histories (also after SIGKILLs of workers mid-step), a
 * window rolls over, and a person's raise lets refused sessions go on.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, createAgentClient, type AgentClient } from '../../../src/index.js';
import type { SharedBudgetOptions, SendResponse, Session } from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../fixtures/openai-server.js';
import {
  sharedBudgetAgentOptions,
  type SharedBudgetEnv,
} from '../../fixtures/shared-budget-agent.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { killAll, killProcess, startReadyProcess } from '../../helpers/processes.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';

const workerScript = fileURLToPath(
  new URL('../../fixtures/shared-budget-worker.ts', import.meta.url),
);
// 21 tokens a step: the provider counts fewer input tokens than the session estimates, so a
// step's reservation is its true worst case and the token caps hold exactly too.
const usage = { prompt: 1, completion: 20 };

const servers: FakeOpenAI[] = [];
const clients: AgentClient[] = [];

/** A fake provider answering `count` text replies, `delayMs` each. */
async function provider(count: number, delayMs = 0): Promise<FakeOpenAI> {
  const reply: FakeReply = { text: 'ok', usage, ...(delayMs ? { delayMs } : {}) };
  const server = await startFakeOpenAI(Array.from({ length: count }, () => reply));
  servers.push(server);
  return server;
}

/** Start a worker process of the agent `env` describes (killed by `killAll`); once it polls. */
const startWorker = (env: SharedBudgetEnv): Promise<ChildProcess> =>
  startReadyProcess(workerScript, 'SHARED_BUDGET_ENV', env);

/** An agent of `shared` budgets on its own task queue, and its client. */
async function agentOf(
  name: string,
  shared: SharedBudgetOptions[],
  server: FakeOpenAI,
  subagent = false,
): Promise<{ env: SharedBudgetEnv; client: AgentClient }> {
  const env: SharedBudgetEnv = {
    address: temporalAddress(),
    taskQueue: uniqueTaskQueue(name),
    baseUrl: server.baseUrl,
    name,
    shared,
    subagent,
  };
  const client = await createAgentClient(sharedBudgetAgentOptions(env));
  clients.push(client);
  return { env, client };
}

/** The spend of `session` recounted from its recorded history (as `inspect` does). */
async function recounted(session: Session) {
  const temporal = await rawClient();
  try {
    const history = await temporal.workflow.getHandle(sessionWorkflowId(session.id)).fetchHistory();
    return timelineFromHistory(history).budget!.spent;
  } finally {
    await temporal.connection.close();
  }
}

/** A tenant key no other test (or earlier run on the same server) has used. */
const tenantOf = (name: string) => `${name}-${Date.now().toString(36)}`;

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await killAll();
  await Promise.all(servers.map((s) => s.close()));
});

describe('a budget shared per tenant', () => {
  it('twenty sessions on three workers never spend past the tenant cap together; the budget counts what their histories do', async () => {
    const server = await provider(80);
    const { env, client } = await agentOf(
      'shared-twenty',
      // modelCalls binds: totalTokens is set so that it never does (up to 20 leases of a
      // step's worst case, ~50 tokens, may be out at once).
      [{ scope: 'tenant', modelCalls: 25, totalTokens: 25 * 21 + 1000 }],
      server,
    );
    await Promise.all([startWorker(env), startWorker(env), startWorker(env)]);
    const tenant = tenantOf('acme');
    const sessions = await Promise.all(
      Array.from({ length: 20 }, () => client.createSession({ tenant })),
    );
    // Two sends each, all at once: 40 asked for, 25 allowed.
    const responses: SendResponse[] = (
      await Promise.all(
        sessions.map(async (session) => [await session.send('one'), await session.send('two')]),
      )
    ).flat();
    const completed = responses.filter((r) => r.status === 'completed').length;
    const refused = responses.filter((r) => r.status === 'budget_exceeded');
    expect(completed).toBe(25);
    expect(server.chatBodies).toHaveLength(25);
    expect(refused).toHaveLength(15);
    expect(refused[0]!.budgetExceeded).toMatchObject({
      shared: `tenant:${tenant}`,
      limit: expect.any(Number),
    });
    await Promise.all(sessions.map((s) => s.close()));
    // Every lease given back: the budget's count is the sessions' spend, recounted.
    const budget = (await client.sharedBudget(`tenant:${tenant}`))!;
    expect(budget.leases).toBe(0);
    const spends = await Promise.all(sessions.map(recounted));
    const sum = (name: 'modelCalls' | 'totalTokens') =>
      spends.reduce((total, spent) => total + spent[name], 0);
    expect(budget.spent.modelCalls).toBe(25);
    expect(sum('modelCalls')).toBe(25);
    expect(budget.spent.totalTokens).toBe(sum('totalTokens'));
    expect(budget.spent.totalTokens).toBe(25 * 21);
  }, 240_000);

  it('workers SIGKILLed during model steps: the budget still counts exactly what the histories do', async () => {
    const server = await provider(60, 400);
    const { env, client } = await agentOf(
      'shared-chaos',
      [{ scope: 'tenant', modelCalls: 1000 }],
      server,
    );
    const first = await Promise.all([startWorker(env), startWorker(env), startWorker(env)]);
    const tenant = tenantOf('chaos');
    const sessions = await Promise.all(
      Array.from({ length: 6 }, () => client.createSession({ tenant })),
    );
    const sends = Promise.all(
      sessions.map(async (session) => [await session.send('one'), await session.send('two')]),
    );
    // Kill two workers while steps are in flight, start two more.
    await waitFor(() => server.chatBodies.length >= 3, 60_000, 'model steps to start');
    await killProcess(first[0]!);
    await startWorker(env);
    await waitFor(() => server.chatBodies.length >= 8, 60_000, 'more model steps');
    await killProcess(first[1]!);
    await startWorker(env);
    const responses = (await sends).flat();
    expect(responses.every((r) => r.status === 'completed')).toBe(true);
    await Promise.all(sessions.map((s) => s.close()));
    const budget = (await client.sharedBudget(`tenant:${tenant}`))!;
    expect(budget.leases).toBe(0);
    const spends = await Promise.all(sessions.map(recounted));
    expect(budget.spent.modelCalls).toBe(spends.reduce((n, s) => n + s.modelCalls, 0));
    expect(budget.spent.totalTokens).toBe(spends.reduce((n, s) => n + s.totalTokens, 0));
    expect(budget.spent.modelCalls).toBe(12);
  }, 240_000);

  it('a window rolls over: a session refused in one window goes on in the next', async () => {
    const server = await provider(20);
    const { env, client } = await agentOf(
      'shared-window',
      [{ scope: 'tenant', modelCalls: 2, window: 3000 }],
      server,
    );
    await startWorker(env);
    const tenant = tenantOf('window');
    const key = `tenant:${tenant}:3000ms`;
    const session = await client.createSession({ tenant });
    // Send until the window's two steps are spent (a rollover in between just allows more).
    let refused: SendResponse | undefined;
    for (let i = 0; i < 10 && !refused; i++) {
      const response = await session.send(`send ${i}`);
      if (response.status === 'budget_exceeded') refused = response;
    }
    expect(refused?.budgetExceeded).toMatchObject({ budget: 'modelCalls', limit: 2, shared: key });
    const full = (await client.sharedBudget(key))!;
    // Then, once the window has ended, the next send runs.
    // (The budget's clock is its workflow's: it moves with the requests it answers.)
    await waitFor(() => Date.now() >= full.windowStart + 3000, 10_000, 'the window to end');
    const next = await session.send('next window');
    expect(next.status).toBe('completed');
    await session.close();
    const after = (await client.sharedBudget(key))!;
    // The full window counted its two steps; no window ever held more than two.
    const windows = [after, ...after.previous];
    expect(windows.find((w) => w.windowStart === full.windowStart)!.spent.modelCalls).toBe(2);
    for (const w of windows) expect(w.spent.modelCalls).toBeLessThanOrEqual(2);
  }, 120_000);

  it('a raise lets a refused session go on, recorded with who raised it', async () => {
    const server = await provider(10);
    const { env, client } = await agentOf(
      'shared-raise',
      [{ scope: 'tenant', modelCalls: 1 }],
      server,
    );
    await startWorker(env);
    const tenant = tenantOf('raise');
    const key = `tenant:${tenant}`;
    const session = await client.createSession({ tenant });
    expect((await session.send('one')).status).toBe('completed');
    const refused = await session.send('two');
    expect(refused.budgetExceeded).toMatchObject({
      budget: 'modelCalls',
      limit: 1,
      spent: 1,
      shared: key,
    });
    const raised = await client.raiseSharedBudget(key, { modelCalls: 3 }, { identity: 'bob@ops' });
    expect(raised.raises).toMatchObject([{ identity: 'bob@ops', caps: { modelCalls: 3 } }]);
    expect((await session.send('three')).status).toBe('completed');
    await session.close();
    expect((await client.sharedBudget(key))!.spent.modelCalls).toBe(2);
  }, 120_000);

  it("a sub-agent's steps count in the tenant's budget, leased by the sub-agent itself", async () => {
    const server = await startFakeOpenAI([
      {
        toolCalls: [
          { name: 'Task', arguments: { description: 'd', prompt: 'p', subagent_type: 'helper' } },
        ],
        usage,
      },
      { text: 'from the helper', usage },
      { text: 'parent done', usage },
    ]);
    servers.push(server);
    const { env, client } = await agentOf(
      'shared-subagent',
      [{ scope: 'tenant', modelCalls: 50 }],
      server,
      true,
    );
    await startWorker(env);
    const tenant = tenantOf('sub');
    const session = await client.createSession({ tenant });
    const response = await session.send('delegate');
    expect(response.text()).toBe('parent done');
    await session.close();
    const budget = (await client.sharedBudget(`tenant:${tenant}`))!;
    // Two steps of the parent, one of the sub-agent; every lease back.
    expect(budget.spent.modelCalls).toBe(3);
    expect(budget.leases).toBe(0);
    // The parent's own ledger counts the sub-agent's spend too.
    expect((await recounted(session)).modelCalls).toBe(3);
  }, 120_000);

  it('bad shared budgets and tenants are ConfigErrors naming the field', async () => {
    const server = await provider(0);
    const { client } = await agentOf('shared-bad', [{ scope: 'tenant', modelCalls: 1 }], server);
    await expect(client.createSession()).rejects.toThrow(/tenant is required/);
    await expect(client.createSession({ tenant: 42 as unknown as string })).rejects.toThrow(
      /tenant must be a string/,
    );
    await expect(client.createSession({ tenant: 'acme:day' })).rejects.toThrow(
      /tenant must not contain ':'/,
    );
    await expect(
      createAgentClient({
        ...sharedBudgetAgentOptions({
          address: temporalAddress(),
          taskQueue: uniqueTaskQueue('shared-bad3'),
          baseUrl: server.baseUrl,
          name: 'shared-bad3',
          shared: [{ scope: 'agent', costUsd: 1 }],
        }),
        advanced: { budgets: { shared: [{ scope: 'agent', costUsd: 1 }] } },
      }),
    ).rejects.toThrow(/advanced\.budgets\.shared\[0\]\.costUsd needs a price/);
    await expect(
      agentOf(
        'shared-bad2',
        [{ scope: 'team' as 'tenant', window: 'week' as 'day', modelCalls: -1 }],
        server,
      ),
    ).rejects.toThrow(
      /advanced\.budgets\.shared\[0\]\.modelCalls.*advanced\.budgets\.shared\[0\]\.scope must be 'agent' or 'tenant'.*shared\[0\]\.window must be/,
    );
    await expect(
      client.raiseSharedBudget('tenant:nobody', { modelCalls: 1 }),
    ).rejects.toBeInstanceOf(ConfigError);
  }, 60_000);
});
