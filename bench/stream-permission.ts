/**
 * What the permission events of the stream cost (issue 18, item 1). Two ways to publish a
 * decision the workflow makes:
 *
 * - **piggyback** (every preset decision, every answer followed by a tool or a model step):
 *   the next activity of the send carries the event in its input. Measured: the bytes it
 *   adds to that input, and the history events it adds (expected: none).
 * - **local activity** (a person is asked; a denial that ends the send): one
 *   `publishStreamEvents` marker. Measured: how much longer the workflow task that runs it
 *   takes than the other workflow tasks of the same sends (its start to its completion).
 *
 * Sends are timed too (a preset-allowed `Glob` call, and a permission function's denial with
 * `interrupt`), streaming on, scripted model, one worker in this process.
 *
 *   npx tsx bench/stream-permission.ts   (BENCH_N=40; TEMPORAL_ADDRESS to use a running server)
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createAgent, type Agent, type AgentOptions } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 40);
const WARMUP = 3;
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
Runtime.install({ logger: new DefaultLogger('WARN') });

const server = process.env.TEMPORAL_ADDRESS
  ? undefined
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const address = process.env.TEMPORAL_ADDRESS ?? server!.address;
console.log(`server ${address}; N=${N} sends per series; ${new Date().toISOString()}`);

const model = scriptedModel((request) => {
  if (request.step > 0) return 'done';
  const last = request.messages.filter((m) => m.role === 'user').at(-1);
  const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
  return text === 'glob'
    ? toolCall('Glob', { pattern: '*.md' })
    : toolCall('Write', { file_path: 'x.txt', content: 'x' });
});

function definition(permission: AgentOptions['advanced']): AgentOptions {
  return {
    model,
    workspaceRoots: [here],
    advanced: {
      ...permission,
      temporal: { address, taskQueue: `bench-stream-permission-${randomUUID()}` },
    },
  };
}

interface HistoryFigures {
  /** History events but the workflow tasks' own (their count follows Update timing). */
  events: number;
  /** JSON bytes of `streamEvents` in activity inputs. */
  carriedBytes: number;
  /** Durations of workflow tasks that ran the publish local activity, ms. */
  withMarker: number[];
  /** Durations of the other workflow tasks, ms. */
  without: number[];
}

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
const decode = (data: Uint8Array | null | undefined): unknown => {
  try {
    return data ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
};

async function figuresOf(client: Client, workflowId: string): Promise<HistoryFigures> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const taskEvent = (type: unknown) => Number(type) >= 5 && Number(type) <= 9;
  const out: HistoryFigures = {
    events: events.filter((e) => !taskEvent(e.eventType)).length,
    carriedBytes: 0,
    withMarker: [],
    without: [],
  };
  // A workflow task's commands (markers among them) follow its completion, up to the next
  // task's scheduling: the task ran the local activity when its commands hold the marker.
  let startedAt = 0;
  let duration: number | undefined;
  let ranPublish = false;
  const close = () => {
    if (duration !== undefined) (ranPublish ? out.withMarker : out.without).push(duration);
    duration = undefined;
    ranPublish = false;
  };
  for (const event of events) {
    const input = event.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
    const carried = (decode(input) as { streamEvents?: unknown } | undefined)?.streamEvents;
    if (carried) out.carriedBytes += JSON.stringify(carried).length;
    if (event.workflowTaskScheduledEventAttributes) close();
    if (event.workflowTaskStartedEventAttributes) startedAt = ms(event.eventTime);
    if (event.workflowTaskCompletedEventAttributes) duration = ms(event.eventTime) - startedAt;
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = decode(marker.details?.data?.payloads?.[0]?.data) as
        { activity_type?: string } | undefined;
      if (data?.activity_type === 'publishStreamEvents') ranPublish = true;
    }
  }
  close();
  return out;
}

const agents: Agent[] = [];
const connection = await Connection.connect({ address });
const client = new Client({ connection });
try {
  const allowing = await createAgent(definition({ permission: 'default' }));
  agents.push(allowing);
  const denying = await createAgent(
    definition({
      permission: async () => ({ behavior: 'deny', message: 'no', interrupt: true }),
    }),
  );
  agents.push(denying);
  const series = [
    { name: 'preset allow, Glob runs (piggyback)', agent: allowing, prompt: 'glob' },
    { name: 'function deny + interrupt (local activity)', agent: denying, prompt: 'write' },
  ].map((s) => ({ ...s, sends: [] as number[], figures: [] as HistoryFigures[] }));
  for (let i = 0; i < WARMUP + N; i++) {
    for (const s of i % 2 === 0 ? series : [...series].reverse()) {
      const session = await s.agent.createSession();
      const started = performance.now();
      const call = session.send(s.prompt);
      for await (const _event of call.stream()) {
        // drain: the stream is on, as a UI would read it
      }
      await call;
      const took = performance.now() - started;
      await session.close();
      if (i < WARMUP) continue;
      s.sends.push(took);
      s.figures.push(await figuresOf(client, session.workflowId));
    }
  }
  const rows = series.map((s) => {
    const withMarker = s.figures.flatMap((f) => f.withMarker);
    const without = s.figures.flatMap((f) => f.without);
    const carried = s.figures.map((f) => f.carriedBytes);
    return [
      s.name,
      fmt(percentile(s.sends, 50)),
      fmt(percentile(s.sends, 99)),
      fmt(
        percentile(
          s.figures.map((f) => f.events),
          50,
        ),
        0,
      ),
      fmt(percentile(carried, 50), 0),
      String(withMarker.length / s.figures.length),
      withMarker.length ? fmt(percentile(withMarker, 50)) : 'none',
      fmt(percentile(without, 50)),
    ];
  });
  printTable(
    'Permission events: piggybacked vs a local activity',
    [
      'series',
      'send p50 ms',
      'send p99 ms',
      'history events (no tasks)',
      'bytes carried',
      'LA tasks/send',
      'task with LA p50 ms',
      'other tasks p50 ms',
    ],
    rows,
  );
} finally {
  for (const agent of agents) await agent.shutdown();
  await connection.close();
  await server?.stop();
}
