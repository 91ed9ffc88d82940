/**
 * What the approval digest costs a send with an ask (issue 37, item 1): the digest is
 * computed in workflow code when the session asks a person, so the target is no extra
 * activity and no extra history event. For each send (a `Write` the `default` preset asks
 * about, approved by the client), it counts the history's events by kind, its activities
 * and markers, and its bytes, and times the workflow task that asks.
 *
 * Run it before and after a change to the ask and compare the rows.
 *
 *   npx tsx bench/approval-digest.ts   (BENCH_N=10; TEMPORAL_ADDRESS to use a running server)
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { approvalDigest } from '../src/common/approval-digest.js';
import { createAgent } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';
import { historySize } from './senders.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 10);
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
Runtime.install({ logger: new DefaultLogger('WARN') });

const server = process.env.TEMPORAL_ADDRESS
  ? undefined
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const address = process.env.TEMPORAL_ADDRESS ?? server!.address;
console.log(`server ${address}; N=${N} sends with an ask; ${new Date().toISOString()}`);

/** A send's history, counted. */
interface Figures {
  /** All events. */
  events: number;
  /** Events but the workflow tasks' own (their count follows Update timing). */
  nonTask: number;
  activities: number;
  markers: number;
  timers: number;
  bytes: number;
}

async function figuresOf(client: Client, workflowId: string): Promise<Figures> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const taskEvent = (type: unknown) => Number(type) >= 5 && Number(type) <= 9;
  return {
    events: events.length,
    nonTask: events.filter((e) => !taskEvent(e.eventType)).length,
    activities: events.filter((e) => e.activityTaskScheduledEventAttributes).length,
    markers: events.filter((e) => e.markerRecordedEventAttributes).length,
    timers: events.filter((e) => e.timerStartedEventAttributes).length,
    bytes: (await historySize(client, workflowId)).bytes,
  };
}

const workspace = join(here, '..', 'build', 'bench-approval');
mkdirSync(workspace, { recursive: true });
const agent = await createAgent({
  model: scriptedModel([toolCall('Write', { file_path: 'x.txt', content: 'x' }), 'done']),
  workspaceRoots: [workspace],
  advanced: {
    permission: 'default',
    temporal: { address, taskQueue: `bench-approval-digest-${randomUUID()}` },
  },
});
const connection = await Connection.connect({ address });
const client = new Client({ connection });
try {
  const figures: Figures[] = [];
  const sends: number[] = [];
  for (let i = 0; i < N; i++) {
    const session = await agent.createSession();
    const started = performance.now();
    const call = session.send('write');
    let pending = await session.pendingPermissions();
    while (pending.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pending = await session.pendingPermissions();
    }
    const asked = pending[0]!;
    const digest = (asked as { digest?: string }).digest;
    await session.approve(asked.requestId, digest !== undefined ? ({ digest } as never) : {});
    await call;
    sends.push(performance.now() - started);
    await session.close();
    figures.push(await figuresOf(client, session.workflowId));
  }
  const row = (name: string, pick: (f: Figures) => number, digits = 0) => [
    name,
    fmt(percentile(figures.map(pick), 50), digits),
    fmt(Math.min(...figures.map(pick)), digits),
    fmt(Math.max(...figures.map(pick)), digits),
  ];
  printTable(
    'A send with an ask (Write, preset default, approved), whole session history',
    ['figure', 'p50', 'min', 'max'],
    [
      row('history events', (f) => f.events),
      row('events but workflow tasks', (f) => f.nonTask),
      row('activities scheduled', (f) => f.activities),
      row('markers (local activities)', (f) => f.markers),
      row('timers', (f) => f.timers),
      row('history bytes', (f) => f.bytes),
      [
        'send ms (the ask and its answer included)',
        fmt(percentile(sends, 50)),
        fmt(Math.min(...sends)),
        fmt(Math.max(...sends)),
      ],
    ],
  );
  // The digest's own time in the workflow task, by input size (pure sha256, no activity).
  printTable(
    'approvalDigest() time by input size (this process, the workflow code)',
    ['input', 'ms per digest'],
    [100, 10_000, 1_000_000].map((bytes) => {
      const parts = {
        sessionId: 's',
        toolUseId: 'call-1',
        toolName: 'Write',
        input: { file_path: 'x.txt', content: 'x'.repeat(bytes) },
        version: '1.0',
        fingerprint: '0123456789abcdef',
      };
      const runs = bytes >= 1_000_000 ? 5 : 200;
      const started = performance.now();
      for (let i = 0; i < runs; i++) approvalDigest(parts);
      return [`${bytes} B`, fmt((performance.now() - started) / runs, 3)];
    }),
  );
} finally {
  await agent.shutdown();
  await connection.close();
  await server?.stop();
}
