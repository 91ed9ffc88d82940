/**
 * A per-session budget end to end: a worker process runs the budget agent against a real
 * OpenAI-compatible HTTP server that reports usage; this process is the client. The session
 * stops at its token cap with the exact count, a raise lets the next send go on, and the spend
 * is carried over continue-as-new (the agent rolls over after every prompt).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createAgentClient } from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../fixtures/openai-server.js';
import { budgetAgentOptions, type BudgetAgentEnv } from '../../fixtures/budget-agent.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { startReadyProcess } from '../../helpers/processes.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { budgetLine } from '../../../src/history/timeline-budget.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workerScript = fileURLToPath(new URL('../../fixtures/budget-worker.ts', import.meta.url));
const usage = { prompt: 100, completion: 20 };

let server: FakeOpenAI;
let worker: ChildProcess;
let client: Awaited<ReturnType<typeof createAgentClient>>;
let env: BudgetAgentEnv;

beforeAll(async () => {
  server = await startFakeOpenAI([
    // The first session: two tool steps of 120 tokens each, then the cap (400) refuses a third.
    { toolCalls: [{ name: 'Echo', arguments: { n: 1 } }], usage },
    { toolCalls: [{ name: 'Echo', arguments: { n: 2 } }], usage },
    // Reached only after the raise.
    { text: 'after the raise', usage: { prompt: 200, completion: 10 } },
    // The second session: a server that reports no usage.
    { text: 'no usage here', usage: null },
    // The third: two tool calls in one step under a toolCalls cap of 1.
    {
      toolCalls: [
        { name: 'Echo', arguments: { n: 1 } },
        { name: 'Echo', arguments: { n: 2 } },
      ],
      usage: { prompt: 10, completion: 5 },
    },
  ]);
  const hookFile = join(tempDir('budgets'), 'hook.log');
  writeFileSync(hookFile, '');
  env = {
    address: temporalAddress(),
    taskQueue: uniqueTaskQueue('budgets'),
    baseUrl: server.baseUrl,
    hookFile,
  };
  worker = await startReadyProcess(workerScript, 'BUDGET_AGENT_ENV', env);
  client = await createAgentClient(budgetAgentOptions(env));
}, 60_000);

afterAll(async () => {
  await client?.close();
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGKILL');
    await exited;
  }
  await server?.close();
});

/** What the session's UserPromptSubmit and PreToolUse callbacks got of the budget, in order. */
const hookLines = (sessionId: string) =>
  readFileSync(env.hookFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; sessionId: string; budget: unknown })
    .filter((line) => line.sessionId === sessionId)
    .map(({ event, budget }) => ({ event, ...(budget as object) }));

describe('a per-session budget', () => {
  it('stops the session at its token cap with the exact count; a raise lets the next send go on', async () => {
    const session = await client.createSession();
    const first = await session.send('count twice');
    expect(first.status).toBe('budget_exceeded');
    // The third step was never called: 120 + 120 spent, its worst case would pass 400.
    expect(server.chatBodies).toHaveLength(2);
    expect(first.budgetExceeded).toMatchObject({
      budget: 'totalTokens',
      limit: 400,
      spent: 240,
    });
    // Each step asked the provider for at most maxOutputTokens.
    expect(JSON.stringify(server.chatBodies[0])).toMatch(/"max_(completion_)?tokens":20/);
    const stopped = await session.describe();
    expect(stopped.budget?.spent).toEqual({
      inputTokens: 200,
      outputTokens: 40,
      totalTokens: 240,
      modelCalls: 2,
      toolCalls: 2,
      costUsd: 0.000054,
      estimatedSteps: 0,
    });
    expect(stopped.budget?.remaining.totalTokens).toBe(160);

    const raised = await session.raiseBudget({ totalTokens: 1000 }, { identity: 'alice@ops' });
    expect(raised.caps.totalTokens).toBe(1000);
    expect(raised.raises).toMatchObject([{ identity: 'alice@ops', caps: { totalTokens: 1000 } }]);
    const next = await session.send('go on');
    expect(next.status).toBe('completed');
    expect(next.text()).toBe('after the raise');
    const after = await session.describe();
    // Counted over both runs (the agent continues as new after every prompt).
    expect(after.budget?.spent.totalTokens).toBe(450);
    expect(after.budget?.raises[0]?.identity).toBe('alice@ops');
    // inspect's line, recounted from the last run's history and the ledger carried into it.
    const temporal = await rawClient();
    const history = await temporal.workflow.getHandle(sessionWorkflowId(session.id)).fetchHistory();
    await temporal.connection.close();
    const recounted = timelineFromHistory(history).budget!;
    expect(recounted.spent.totalTokens).toBe(450);
    expect(budgetLine(recounted)).toContain('totalTokens 450 of 1000 (550 left)');
    // UserPromptSubmit and PreToolUse got what was left each time.
    expect(hookLines(session.id)).toEqual([
      { event: 'UserPromptSubmit', remaining: { totalTokens: 400 } },
      { event: 'PreToolUse', remaining: { totalTokens: 280 } },
      { event: 'PreToolUse', remaining: { totalTokens: 160 } },
      { event: 'UserPromptSubmit', remaining: { totalTokens: 760 } },
    ]);
    await session.close();
  }, 60_000);

  it('a provider that reports no usage is counted by the estimate, and the record says so', async () => {
    const session = await client.createSession({ budgets: { modelCalls: 5 } });
    const response = await session.send('hi');
    expect(response.text()).toBe('no usage here');
    const budget = (await session.describe()).budget!;
    expect(budget.spent.estimatedSteps).toBe(1);
    expect(budget.spent.modelCalls).toBe(1);
    expect(budget.spent.outputTokens).toBeGreaterThan(0);
    expect(budget.caps).toEqual({ totalTokens: 400, modelCalls: 5 });
    await session.close();
  }, 60_000);

  it('a tool call past toolCalls does not start; the prompt ends budget_exceeded after the step', async () => {
    const session = await client.createSession({ budgets: { toolCalls: 1 } });
    const requests = server.chatBodies.length;
    const response = await session.send('echo twice');
    expect(response.status).toBe('budget_exceeded');
    expect(response.budgetExceeded).toMatchObject({ budget: 'toolCalls', limit: 1, spent: 1 });
    expect(response.toolCalls.map((call) => call.status)).toEqual(['success', 'cancelled']);
    // No model step after the refused call.
    expect(server.chatBodies.length).toBe(requests + 1);
    const conversation = JSON.stringify(await session.conversation());
    expect(conversation).toContain("the session's toolCalls budget (1) is spent");
    expect((await session.describe()).budget?.spent.toolCalls).toBe(1);
    // The refused call never reached PreToolUse; the one that ran saw itself counted.
    const pre = hookLines(session.id).filter((line) => line.event === 'PreToolUse');
    expect(pre).toMatchObject([{ remaining: { toolCalls: 0 } }]);
    await session.close();
  }, 60_000);

  it('bad budgets are ConfigErrors naming the field, before anything starts', async () => {
    await expect(client.createSession({ budgets: { totalTokens: -1 } })).rejects.toThrow(
      /budgets\.totalTokens must be a non-negative integer, got -1/,
    );
    await expect(client.createSession({ budgets: { modelCalls: 1.5 } })).rejects.toBeInstanceOf(
      ConfigError,
    );
    const session = await client.createSession();
    await expect(session.raiseBudget({ totalTokens: -5 })).rejects.toThrow(
      /caps\.totalTokens must be a non-negative integer/,
    );
    await session.close();
    await expect(
      createAgentClient({
        ...budgetAgentOptions(env),
        advanced: {
          budgets: { prices: { 'gpt-5': { inputUsdPerMillion: 1, outputUsdPerMillion: 1 } } },
        },
      }),
    ).rejects.toThrow(/advanced\.budgets\.prices\['gpt-5'\]/);
  }, 60_000);
});
