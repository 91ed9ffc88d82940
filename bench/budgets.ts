/**
 * Per-session budgets (issue 36): a send of a session with a budget against the same send of a
 * session without one, side by side in one run on one dev server. Both agents call a real
 * OpenAI-compatible HTTP server on loopback (test/fixtures/openai-server.ts, reporting usage)
 * and run one UserPromptSubmit callback; the budgeted one reserves each step's worst case,
 * settles its usage, and hands the callback what is left. Interleaved series, each send timed
 * end to end, sessions rotated every BENCH_ROTATE sends. Target: p50 ratio <= 1.05.
 *
 *   npm run bench:budgets   (BENCH_N=200 sends per series after BENCH_WARMUP=20;
 *                            BENCH_ADDRESS to reuse a server)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { createAgent, HookEvent, type AgentOptions } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { startFakeOpenAI } from '../test/fixtures/openai-server.js';
import { historySize, oursSender, sendInterleaved } from './senders.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 200);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const ROTATE = Number(process.env.BENCH_ROTATE ?? 50);
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

installQuietRuntime('ERROR');
const server = process.env.BENCH_ADDRESS
  ? { address: process.env.BENCH_ADDRESS, pid: -1, stop: async () => undefined }
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
// One answer per send on each side, and the history sends: enough for the whole run.
const openai = await startFakeOpenAI(
  Array.from({ length: (N + WARMUP + 10) * 2 }, () => ({ text: 'ok' })),
);
console.log(
  `server ${server.address}; ${N} sends per series after ${WARMUP} warm-up, sessions ` +
    `rotated every ${ROTATE}; load ${load()}; ${new Date().toISOString()}`,
);

const agentOptions = (name: string, budgets?: AgentOptions['advanced']): AgentOptions => ({
  name,
  model: 'gpt-4o-mini',
  baseUrl: openai.baseUrl,
  apiKey: 'sk-bench',
  tools: [],
  advanced: {
    hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' as const })] },
    ...budgets,
    temporal: { address: server.address, taskQueue: `${name}-${randomUUID()}` },
  },
});
const budgeted = await createAgent(
  agentOptions('bench-budget', {
    budgets: {
      totalTokens: 1_000_000_000,
      modelCalls: 1_000_000,
      costUsd: 1_000_000,
      prices: { 'gpt-4o-mini': { inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 } },
    },
  }),
);
const plain = await createAgent(agentOptions('bench-nobudget'));
const connection = await Connection.connect({ address: server.address });
const client = new Client({ connection });

const check = (response: { status: string; text(): string }) => {
  if (response.status !== 'completed' || response.text() !== 'ok') {
    throw new Error(`send: ${response.status} ${response.text()}`);
  }
};
const series = [
  { name: 'budget', sender: await oursSender(budgeted, ROTATE, check), times: [] as number[] },
  { name: 'none', sender: await oursSender(plain, ROTATE, check), times: [] as number[] },
];
await sendInterleaved(series, N, WARMUP);
const sizes: string[] = [];
for (const s of series) {
  const before = await historySize(client, s.sender.workflowId());
  await s.sender.send('history');
  const after = await historySize(client, s.sender.workflowId());
  sizes.push(`${s.name} ${after.events - before.events} / ${after.bytes - before.bytes}`);
}
await Promise.all(series.map((s) => s.sender.close()));

const [withBudget, without] = series.map((s) => s.times) as [number[], number[]];
const p = percentile;
printTable(
  'Per-session budget: send latency (ms), budget / none',
  ['series', 'p50', 'p95', 'ratio p50 / p95', 'target'],
  [
    [
      'send, one model step over HTTP, one UserPromptSubmit callback',
      `${fmt(p(withBudget, 50))} / ${fmt(p(without, 50))}`,
      `${fmt(p(withBudget, 95))} / ${fmt(p(without, 95))}`,
      `${fmt(p(withBudget, 50) / p(without, 50), 2)} / ${fmt(p(withBudget, 95) / p(without, 95), 2)}`,
      'p50 <= 1.05',
    ],
    ['history per send, events / bytes', sizes.join('; '), '', '', ''],
  ],
);

await budgeted.shutdown();
await plain.shutdown();
await connection.close();
await openai.close();
await server.stop();
