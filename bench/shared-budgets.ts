/**
 * Budgets shared per tenant (issue 36): 100 sessions of one tenant sharing one budget, on three
 * worker processes, against the same 100 sessions of an agent without a budget, side by side in
 * one run on one dev server (rounds alternate, so a change of load falls on both). Every
 * session sends BENCH_SENDS prompts one after the other, the sessions all at once; each send is
 * one model step on a real OpenAI-compatible HTTP server on loopback. Prints sends per second
 * (target: shared / none >= 0.9) and the Updates the budget's workflow took per send.
 *
 *   npm run bench:shared-budgets   (BENCH_SESSIONS=100, BENCH_SENDS=8, BENCH_ROUNDS=2;
 *                                   BENCH_ADDRESS to reuse a server)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { createAgentClient } from '../src/index.js';
import { sharedBudgetWorkflowId } from '../src/common/shared-budgets.js';
import { startDevServer } from '../src/server/dev-server.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { startFakeOpenAI } from '../test/fixtures/openai-server.js';
import {
  sharedBudgetAgentOptions,
  type SharedBudgetEnv,
} from '../test/fixtures/shared-budget-agent.js';
import { fmt, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const SENDS = Number(process.env.BENCH_SENDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WORKERS = 3;
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

installQuietRuntime('ERROR');
const server = process.env.BENCH_ADDRESS
  ? { address: process.env.BENCH_ADDRESS, pid: -1, stop: async () => undefined }
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const openai = await startFakeOpenAI(
  Array.from({ length: SESSIONS * SENDS * ROUNDS * 2 + 10 }, () => ({
    text: 'ok',
    usage: { prompt: 10, completion: 5 },
  })),
);
console.log(
  `server ${server.address}; ${SESSIONS} sessions x ${SENDS} sends, ${ROUNDS} round(s) a side, ` +
    `${WORKERS} worker processes a side; load ${load()}; ${new Date().toISOString()}`,
);

const workerScript = join(here, '..', 'test', 'fixtures', 'shared-budget-worker.ts');
const children: ChildProcess[] = [];
// However the run ends (a failed send included), no worker process outlives it.
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));
async function startWorker(env: SharedBudgetEnv): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', workerScript], {
    env: { ...process.env, SHARED_BUDGET_ENV: JSON.stringify(env) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited (${code})`)));
  });
}

const tenant = `bench-${randomUUID().slice(0, 8)}`;
const key = `tenant:${tenant}`;
const sides = [
  {
    name: 'shared',
    shared: [{ scope: 'tenant' as const, totalTokens: 1_000_000_000, modelCalls: 1_000_000 }],
  },
  { name: 'none', shared: [] },
].map((side) => {
  const env: SharedBudgetEnv = {
    address: server.address,
    taskQueue: `bench-${side.name}-${randomUUID()}`,
    baseUrl: openai.baseUrl,
    name: `bench-shared-${side.name}`,
    shared: side.shared,
  };
  return { ...side, env, rates: [] as number[], sends: 0 };
});
for (const side of sides) {
  await Promise.all(Array.from({ length: WORKERS }, () => startWorker(side.env)));
}
const clients = await Promise.all(
  sides.map((side) => createAgentClient(sharedBudgetAgentOptions(side.env))),
);

/** One round of a side: its sessions opened, then timed from the first send to the last. */
async function round(i: number): Promise<number> {
  const client = clients[i]!;
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, () => client.createSession({ tenant })),
  );
  const started = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      for (let n = 0; n < SENDS; n++) {
        const response = await session.send(`send ${n}`);
        if (response.status !== 'completed') throw new Error(`send: ${response.status}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(sessions.map((session) => session.close()));
  return (SESSIONS * SENDS) / seconds;
}

for (let r = 0; r < ROUNDS; r++) {
  for (const [i, side] of sides.entries()) {
    side.rates.push(await round(i));
    side.sends += SESSIONS * SENDS;
  }
}

// The budget's Updates, over every run of its workflow.
const connection = await Connection.connect({ address: server.address });
const temporal = new Client({ connection });
let updates = 0;
let runs = 0;
for await (const execution of temporal.workflow.list({
  query: `WorkflowId = '${sharedBudgetWorkflowId(key)}'`,
})) {
  runs++;
  const history = await temporal.workflow
    .getHandle(execution.workflowId, execution.runId)
    .fetchHistory();
  updates += (history.events ?? []).filter(
    (e) => e.workflowExecutionUpdateAcceptedEventAttributes,
  ).length;
}
const status = (await clients[0]!.sharedBudget(key))!;

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const [shared, none] = sides as [(typeof sides)[0], (typeof sides)[0]];
printTable(
  `Shared tenant budget: ${SESSIONS} sessions on ${WORKERS} workers (load at the end ${load()})`,
  ['series', 'shared', 'none', 'ratio', 'target'],
  [
    [
      'sends per second, each round',
      shared.rates.map((r) => fmt(r)).join(', '),
      none.rates.map((r) => fmt(r)).join(', '),
      fmt(mean(shared.rates) / mean(none.rates), 2),
      '>= 0.9',
    ],
    [
      'budget Updates per send (leases and returns)',
      `${updates} / ${shared.sends} = ${fmt(updates / shared.sends, 3)}`,
      '',
      '',
      '',
    ],
    [
      'budget workflow',
      `${runs} run(s); spent ${status.spent.modelCalls} steps, ${status.leases} leases out`,
      '',
      '',
      '',
    ],
  ],
);

await Promise.all(clients.map((c) => c.close()));
// The workers stop while their server still runs (SIGKILL after 10 s if one hangs).
await Promise.all(
  children.map(
    (child) =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
        child.once('exit', resolve);
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  ),
);
await connection.close();
await openai.close();
await server.stop();
process.exit(0);
