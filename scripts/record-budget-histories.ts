/**
 * The budget fixtures of scripts/record-histories.ts: a session with a per-session budget
 * against the fake OpenAI-compatible server (usage reported), whose first prompt stops at its
 * token cap after two tool steps (`budget_exceeded`), raised by a person (`raiseBudget`), whose
 * second prompt completes; it continues as new after every prompt (the ledger carried to the
 * next run). Saved as `budget-session-run1.json` and `budget-session-run2.json`.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { z } from 'zod';
import { createAgent, defineTool, HookEvent } from '../src/index.js';
import { startFakeOpenAI } from '../test/fixtures/openai-server.js';

/** What the recording needs from the script: the server, a client of it, where to write. */
export interface BudgetRecording {
  address: string;
  client: Client;
  /** test/fixtures/histories/ */
  out: string;
  want: (name: string) => boolean;
}

/** Record the wanted budget scenarios. */
export async function recordBudgetHistories(rec: BudgetRecording): Promise<void> {
  if (!rec.want('budget-session')) return;
  const usage = { prompt: 100, completion: 20 };
  const openai = await startFakeOpenAI([
    { toolCalls: [{ name: 'Echo', arguments: { n: 1 } }], usage },
    { toolCalls: [{ name: 'Echo', arguments: { n: 2 } }], usage },
    { text: 'after the raise', usage: { prompt: 200, completion: 10 } },
  ]);
  const echo = defineTool({
    name: 'Echo',
    description: 'Echo a number',
    kind: 'readonly',
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => `echo ${n}`,
  });
  const agent = await createAgent({
    name: 'record-budget',
    model: 'gpt-4o-mini',
    baseUrl: openai.baseUrl,
    apiKey: 'sk-record',
    tools: [echo],
    advanced: {
      budgets: {
        totalTokens: 400,
        maxOutputTokens: 20,
        prices: { 'gpt-4o-mini': { inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 } },
      },
      continueAsNewAfterPrompts: 1,
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      temporal: { address: rec.address, taskQueue: 'record-histories-budget' },
    },
  });
  try {
    const s = await agent.createSession({ sessionId: 'fixture-budget-session' });
    const handle = () => rec.client.workflow.getHandle(s.workflowId);
    const first = (await handle().describe()).runId;
    const stopped = await s.send('count twice');
    if (stopped.status !== 'budget_exceeded') throw new Error(`first send: ${stopped.status}`);
    while ((await handle().describe()).runId === first) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await s.raiseBudget({ totalTokens: 1000 }, { identity: 'alice@ops' });
    const next = await s.send('go on');
    if (next.text() !== 'after the raise') throw new Error(`second send: ${next.status}`);
    await s.close();
    await save(rec, 'budget-session-run1', s.workflowId, first);
    await save(rec, 'budget-session-run2', s.workflowId);
  } finally {
    await agent.shutdown();
    await openai.close();
  }
}

async function save(rec: BudgetRecording, name: string, workflowId: string, runId?: string) {
  const history = await rec.client.workflow.getHandle(workflowId, runId).fetchHistory();
  writeFileSync(join(rec.out, `${name}.json`), historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length ?? 0} events`);
}
