/**
 * A sub-agent's spend counts against its parent's session budget, end to end: worker processes
 * run an agent with a sub-agent against real OpenAI-compatible HTTP servers that report usage
 * (120 tokens a step); this process is the client. The child runs under the parent's
 * remaining, the parent's spend is its own plus its children's exactly (as `describe()` and
 * the history recount say), and parallel children together stay within what was left.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient } from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../fixtures/openai-server.js';
import {
  budgetSubagentOptions,
  type BudgetSubagentEnv,
} from '../../fixtures/budget-subagent-agent.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { startReadyProcess } from '../../helpers/processes.js';
import { SPEND_USD_KEY, SPENT_TOKENS_KEY } from '../../../src/common/search-attributes.js';
import { createSessionUi } from '../../../src/ui/index.js';
import { launchChromium } from '../../helpers/chromium.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';

const workerScript = fileURLToPath(
  new URL('../../fixtures/budget-subagent-worker.ts', import.meta.url),
);
const usage = { prompt: 100, completion: 20 };
const task = (n: number) => ({
  name: 'Task',
  arguments: { description: `count ${n}`, prompt: `count ${n}`, subagent_type: 'counter' },
});
const echo = (n: number): FakeReply => ({ toolCalls: [{ name: 'Echo', arguments: { n } }], usage });

interface Setup {
  server: FakeOpenAI;
  worker: ChildProcess;
  client: Awaited<ReturnType<typeof createAgentClient>>;
}
const setups: Setup[] = [];

/** A fake server with `script`, a worker process on its own task queue, and a client. */
async function start(script: FakeReply[]): Promise<Setup> {
  const server = await startFakeOpenAI(script);
  const env: BudgetSubagentEnv = {
    address: temporalAddress(),
    taskQueue: uniqueTaskQueue('budget-subagents'),
    baseUrl: server.baseUrl,
  };
  const worker = await startReadyProcess(workerScript, 'BUDGET_SUBAGENT_ENV', env);
  const setup = { server, worker, client: await createAgentClient(budgetSubagentOptions(env)) };
  setups.push(setup);
  return setup;
}

let sequential: Setup;
let parallel: Setup;
/** The session of the first test, whose page the last one opens. */
let delegated: string | undefined;

beforeAll(async () => {
  [sequential, parallel] = await Promise.all([
    // The parent delegates once; the child would count on and on, the parent answer after.
    start([
      { toolCalls: [task(1)], usage },
      echo(1),
      echo(2),
      echo(3),
      echo(4),
      { text: 'parent done', usage },
    ]),
    // Two Task calls in one step; each child would count on and on.
    start([{ toolCalls: [task(1), task(2)], usage }, ...[1, 2, 3, 4, 5, 6].map(echo)]),
  ]);
}, 90_000);

afterAll(async () => {
  for (const { client, worker, server } of setups) {
    await client.close();
    if (worker.exitCode === null) {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.kill('SIGKILL');
      await exited;
    }
    await server.close();
  }
});

/** The session's history, and each sub-agent's, in start order. */
async function histories(sessionId: string) {
  const temporal = await rawClient();
  try {
    const parent = await temporal.workflow.getHandle(sessionWorkflowId(sessionId)).fetchHistory();
    const childIds = (parent.events ?? [])
      .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
      .filter((id): id is string => typeof id === 'string');
    const children = await Promise.all(
      childIds.map((id) => temporal.workflow.getHandle(id).fetchHistory()),
    );
    return { parent, children };
  } finally {
    await temporal.connection.close();
  }
}

/** What a visibility query finds: spent tokens and dollars by workflow id. */
async function listSpend(query: string): Promise<Map<string, [number?, number?]>> {
  const temporal = await rawClient();
  try {
    const found = new Map<string, [number?, number?]>();
    for await (const execution of temporal.workflow.list({ query })) {
      const held = execution.typedSearchAttributes;
      found.set(execution.workflowId, [held.get(SPENT_TOKENS_KEY), held.get(SPEND_USD_KEY)]);
    }
    return found;
  } finally {
    await temporal.connection.close();
  }
}

/** The budget a history's session started with (its input's caps). */
const capsOf = (history: Parameters<typeof timelineFromHistory>[0]) =>
  timelineFromHistory(history).budget?.caps;

describe("a sub-agent under its parent's budget", () => {
  it("stops at the parent's remaining; the parent's spend is its own plus the child's exactly", async () => {
    const { client, server } = sequential;
    const session = await client.createSession();
    delegated = session.id;
    const response = await session.send('delegate');
    // Parent step (120), then the child's two steps (240): its third would pass the 380 it got.
    expect(server.chatBodies).toHaveLength(3);
    expect(response.status).toBe('budget_exceeded');
    const [call] = response.toolCalls;
    expect(call).toMatchObject({ toolName: 'Task', status: 'error' });
    const spent = (await session.describe()).budget!.spent;
    expect(spent).toMatchObject({
      inputTokens: 300,
      outputTokens: 60,
      totalTokens: 360,
      modelCalls: 3,
      costUsd: 0.000081,
    });
    const { parent, children } = await histories(session.id);
    expect(children).toHaveLength(1);
    expect(capsOf(children[0]!)).toEqual({ totalTokens: 380 });
    const child = timelineFromHistory(children[0]!).budget!;
    expect(child.spent).toMatchObject({ totalTokens: 240, modelCalls: 2 });
    // The recount from the parent's history agrees with the workflow's ledger.
    const recounted = timelineFromHistory(parent).budget!;
    expect(recounted.spent).toMatchObject({
      inputTokens: spent.inputTokens,
      outputTokens: spent.outputTokens,
      totalTokens: spent.totalTokens,
      modelCalls: spent.modelCalls,
      costUsd: spent.costUsd,
    });
    // The spend search attributes, before the close: a visibility query finds the session and
    // its sub-agent by what they spent.
    const parentId = sessionWorkflowId(session.id);
    const query = `DurableAgentName = 'budgets-subagents' AND DurableAgentSpentTokens >= 240`;
    let found = new Map<string, [number?, number?]>();
    await waitFor(
      async () => {
        found = await listSpend(query);
        return found.get(parentId)?.[0] === 360 && [...found.values()].some(([t]) => t === 240);
      },
      20_000,
      'the spend search attributes',
    );
    expect(found.get(parentId)).toEqual([360, 0.000081]);
    expect([...found.values()]).toContainEqual([240, 0.000054]);
    await session.close();
  }, 90_000);

  it('parallel sub-agents share what is left and never together pass the cap', async () => {
    const { client, server } = parallel;
    const session = await client.createSession();
    const response = await session.send('delegate twice');
    expect(response.status).toBe('budget_exceeded');
    expect(response.toolCalls.map((c) => c.status)).toEqual(['error', 'error']);
    const { parent, children } = await histories(session.id);
    // 500 - 120 left, halved.
    expect(children.map(capsOf)).toEqual([{ totalTokens: 190 }, { totalTokens: 190 }]);
    const spent = (await session.describe()).budget!.spent;
    // Every step of the tree reported 120 tokens, and every one is counted, once.
    expect(spent.totalTokens).toBe(120 * server.chatBodies.length);
    expect(spent.totalTokens).toBeLessThanOrEqual(500);
    for (const child of children) {
      expect(timelineFromHistory(child).budget!.spent.totalTokens).toBeLessThanOrEqual(190);
    }
    expect(timelineFromHistory(parent).budget!.spent.totalTokens).toBe(spent.totalTokens);
    await session.close();
  }, 90_000);

  it('the session page shows the budget: cap, spent (the child included) and left', async () => {
    expect(delegated).toBeDefined();
    const ui = await createSessionUi({ client: sequential.client.temporal, timeoutMs: 10_000 });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(ui.loginUrl);
      const response = await page.goto(`${ui.url}/sessions/${encodeURIComponent(delegated!)}`);
      expect(response?.status()).toBe(200);
      const cells = await page.getByTestId('budget-totalTokens').locator('td').allInnerTexts();
      expect(cells).toEqual(['totalTokens', '500', '360', '140']);
      await expect(page.getByTestId('budget-modelCalls').innerText()).resolves.toContain('3');
    } finally {
      await browser.close();
      await ui.close();
    }
  }, 90_000);
});
