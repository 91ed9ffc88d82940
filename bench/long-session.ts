/**
 * Long sessions: how much history each turn adds as a session grows, ours against a
 * baseline that passes the whole conversation to every model activity (the way other
 * Temporal agent integrations do), side by side on one dev server; then one session of
 * BENCH_LONG_TURNS turns (default 10,000) run to the end.
 *
 *   npm run bench:long                       # 1,000-turn table + a 10,000-turn session
 *   BENCH_LONG_TURNS=0 npm run bench:long    # the table only
 *
 * Prompts are 2,000 characters and replies 500, as in the issue's measurement.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createAgent, fileStore, type Agent, type Session } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel } from '../src/testing/index.js';
import { fmt, printTable } from './stats.js';

const { temporal } = proto;
const here = dirname(fileURLToPath(import.meta.url));
const LONG_TURNS = Number(process.env.BENCH_LONG_TURNS ?? 10_000);
const CHECKPOINTS = [10, 100, 1000];
const PROMPT_CHARS = 2000;
const REPLY_CHARS = 500;
const prompt = (turn: number) => `${turn}:`.padEnd(PROMPT_CHARS, 'p');
const reply = 'r'.repeat(REPLY_CHARS);

const server = process.env.TEMPORAL_ADDRESS
  ? undefined
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const address = process.env.TEMPORAL_ADDRESS ?? server!.address;
console.log(`Temporal at ${address}; ${new Date().toISOString()}`);
// A baseline history page holds megabytes of conversation: past gRPC's 4 MB default.
const connection = await Connection.connect({
  address,
  channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
});
const raw = new Client({ connection });

/** Bytes of every run's history of a workflow id (protobuf, as the server stores them). */
async function historyBytes(
  workflowId: string,
): Promise<{ total: number; largest: number; runs: number }> {
  let total = 0;
  let largest = 0;
  let runs = 0;
  for await (const execution of raw.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs++;
    const history = await raw.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    total += temporal.api.history.v1.History.encode(history).finish().length;
    for (const event of history.events ?? []) {
      largest = Math.max(
        largest,
        temporal.api.history.v1.HistoryEvent.encode(event).finish().length,
      );
    }
  }
  return { total, largest, runs };
}

interface Series {
  name: string;
  /** Bytes the turn added to history, by checkpoint turn. */
  added: Map<number, number>;
  /** Mean wall time of the 10 turns ending at the checkpoint, ms. */
  wall: Map<number, number>;
  largest: number;
  runs: number;
  /** Turn at which it stopped, and why, when it did not reach the last checkpoint. */
  failed?: { turn: number; why: string };
  totalBytes: number;
}

async function measure(
  name: string,
  workflowId: string,
  turn: (n: number) => Promise<void>,
): Promise<Series> {
  const series: Series = {
    name,
    added: new Map(),
    wall: new Map(),
    largest: 0,
    runs: 0,
    totalBytes: 0,
  };
  const last = CHECKPOINTS.at(-1)!;
  const durations: number[] = [];
  for (let n = 1; n <= last; n++) {
    const checkpoint = CHECKPOINTS.includes(n);
    const before = checkpoint ? (await historyBytes(workflowId)).total : 0;
    const t0 = performance.now();
    try {
      await turn(n);
    } catch (error) {
      series.failed = { turn: n, why: (error as Error).message.split('\n')[0]!.slice(0, 120) };
      break;
    }
    durations.push(performance.now() - t0);
    if (n % 100 === 0) console.log(`  ${name}: turn ${n}`);
    if (checkpoint) {
      // Workflow tasks that follow the update (e.g. a continue-as-new) land a moment later.
      await new Promise((r) => setTimeout(r, 300));
      const after = await historyBytes(workflowId);
      series.added.set(n, after.total - before);
      series.wall.set(
        n,
        durations.slice(-10).reduce((a, b) => a + b, 0) / Math.min(10, durations.length),
      );
    }
  }
  const final = await historyBytes(workflowId);
  series.largest = final.largest;
  series.runs = final.runs;
  series.totalBytes = final.total;
  return series;
}

async function ourAgent(): Promise<Agent> {
  return createAgent({
    model: scriptedModel(() => reply, { keepRequests: 0 }),
    tools: [],
    advanced: {
      payloadStore: fileStore(mkdtempSync(join(tmpdir(), 'bench-payloads-'))),
      temporal: { address, taskQueue: `bench-long-${randomUUID()}` },
    },
  });
}

async function baselineSeries(): Promise<Series> {
  const taskQueue = `bench-baseline-${randomUUID()}`;
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    taskQueue,
    workflowsPath: join(here, 'workflows', 'index.ts'),
    activities: { wholeConversationModel: async () => reply },
  });
  const running = worker.run();
  const workflowId = `baseline-${randomUUID()}`;
  const handle: WorkflowHandle = await raw.workflow.start('wholeConversationWorkflow', {
    taskQueue,
    workflowId,
  });
  try {
    return await measure('baseline: whole conversation per activity', workflowId, async (n) => {
      await handle.executeUpdate('turn', { args: [prompt(n)] });
    });
  } finally {
    await handle.terminate('bench done').catch(() => undefined);
    worker.shutdown();
    await running;
  }
}

async function oursSeries(agent: Agent): Promise<Series> {
  const session = await agent.createSession();
  try {
    return await measure('durable-agent-sdk', session.workflowId, async (n) => {
      await session.send(prompt(n));
    });
  } finally {
    await session.close();
  }
}

async function longRun(agent: Agent, turns: number): Promise<void> {
  const session: Session = await agent.createSession();
  const t0 = performance.now();
  for (let n = 1; n <= turns; n++) {
    await session.send(prompt(n));
    if (n % 1000 === 0) {
      const heapMb = process.memoryUsage().heapUsed / 1e6;
      console.log(
        `  turn ${n}: ${fmt((performance.now() - t0) / 1000)} s, heap ${fmt(heapMb, 0)} MB`,
      );
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const described = await session.describe();
  const bytes = await historyBytes(session.workflowId);
  await session.close();
  printTable(
    `A ${turns}-turn session`,
    [
      'turns handled',
      'wall time (s)',
      'ms per turn',
      'runs (continue-as-new)',
      'history MB (all runs)',
      'largest event (bytes)',
    ],
    [
      [
        String(described.promptsHandled),
        fmt(seconds),
        fmt((seconds * 1000) / turns),
        String(bytes.runs),
        fmt(bytes.total / 1e6, 2),
        String(bytes.largest),
      ],
    ],
  );
}

try {
  const agent = await ourAgent();
  try {
    const ours = await oursSeries(agent);
    const base = await baselineSeries();
    const cell = (s: Series, n: number) =>
      s.added.has(n)
        ? String(s.added.get(n))
        : `- (${s.failed ? `failed at turn ${s.failed.turn}` : 'n/a'})`;
    const ratio = (s: Series, n: number) =>
      s.added.has(n) && s.added.has(10) ? fmt(s.added.get(n)! / s.added.get(10)!, 2) : '-';
    printTable(
      'History bytes added by one turn (2,000-char prompt, 500-char reply)',
      [
        'series',
        'turn 10',
        'turn 100',
        'turn 1000',
        '100 / 10',
        '1000 / 10 (target <= 1.5)',
        'largest event (bytes)',
        'runs',
        'ms/turn @10',
        'ms/turn @1000',
      ],
      [ours, base].map((s) => [
        s.name,
        cell(s, 10),
        cell(s, 100),
        cell(s, 1000),
        ratio(s, 100),
        ratio(s, 1000),
        String(s.largest),
        String(s.runs),
        s.wall.has(10) ? fmt(s.wall.get(10)!) : '-',
        s.wall.has(1000) ? fmt(s.wall.get(1000)!) : '-',
      ]),
    );
    console.log(
      `ours: ${fmt(ours.totalBytes / 1e6, 2)} MB of history for 1,000 turns in ${ours.runs} runs (${fmt(ours.totalBytes / 1000)} bytes a turn on average, rollovers included)`,
    );
    if (base.failed)
      console.log(`baseline stopped at turn ${base.failed.turn}: ${base.failed.why}`);
    if (LONG_TURNS > 0) await longRun(agent, LONG_TURNS);
  } finally {
    await agent.shutdown();
  }
} finally {
  await connection.close();
  await server?.stop();
}
