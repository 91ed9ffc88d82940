/**
 * Throughput and per-send latency under load, ours against hand-written Temporal code doing
 * the same activities, on a real multi-process cluster (scripts/cluster.ts: PostgreSQL, four
 * service processes) and on the dev server, in one table.
 *
 * Each series: BENCH_SESSIONS concurrent sessions (default 100), each sending BENCH_SENDS
 * prompts one after another (default 10), with one UserPromptSubmit hook (a no-op callback)
 * and a model that answers at once. Ours: `createAgent` sessions. Baseline:
 * `handWrittenSessionWorkflow` (bench/workflows), an Update per send that runs a hook activity
 * and a model activity. Both run their worker in this process, with Temporal's default worker
 * settings; series alternate, ours first, BENCH_ROUNDS times (default 2) per server. The
 * cluster's frontend requires mTLS (both implementations connect with its client
 * certificate), as a production cluster's does; BENCH_CLUSTER_TLS=0 runs it plain.
 *
 *   npm run bench:cluster
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import {
  createAgent,
  HookEvent,
  type HookCallback,
  type TemporalTlsOptions,
} from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel } from '../src/testing/index.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import {
  clientTlsConfig,
  freeClusterPort,
  startCluster,
  stopCluster,
  type ClusterTls,
} from '../scripts/cluster.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const SENDS = Number(process.env.BENCH_SENDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CLUSTER_TLS = process.env.BENCH_CLUSTER_TLS !== '0';

/** How both implementations reach one server: its address, and its TLS (none: plain). */
interface Target {
  address: string;
  /** `@temporalio/client`'s and `NativeConnection`'s TLS option. */
  tls?: TLSConfig;
  /** The same, as `advanced.temporal.tls`. */
  sdkTls?: TemporalTlsOptions;
}

function clusterTarget(address: string, tls: ClusterTls | undefined): Target {
  if (!tls) return { address };
  return {
    address,
    tls: clientTlsConfig(tls),
    sdkTls: {
      serverCaCertPath: tls.caFile,
      serverName: tls.serverName,
      clientCertPath: tls.clientCertFile,
      clientKeyPath: tls.clientKeyFile,
    },
  };
}

/** `Connection.connect`'s and `NativeConnection.connect`'s options for `target`. */
function connectOptions(target: Target): { address: string; tls?: TLSConfig } {
  return { address: target.address, ...(target.tls ? { tls: target.tls } : {}) };
}
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
installQuietRuntime();

// Seen here under heavy load: @temporalio/client's retry timer (grpc-retry.ts) fires after its
// connection was closed and throws "Channel has been shut down" from the timer, which would end
// the process. Counted and reported instead; any other uncaught error still ends the run.
const clusterDir = mkdtempSync(join(tmpdir(), 'durable-agent-bench-cluster-'));
chmodSync(clusterDir, 0o755);
let channelShutDownErrors = 0;
let phase = 'start';
process.on('uncaughtException', (error) => {
  if (error instanceof Error && error.message === 'Channel has been shut down') {
    channelShutDownErrors++;
    console.log(`  (${phase}) uncaught from a client retry timer: ${error.message}`);
    return;
  }
  console.error(error);
  // Stop the cluster this run started (its processes outlive this one otherwise).
  void stopCluster(clusterDir, { clean: true }).finally(() => process.exit(1));
});

interface Sample {
  /** Per-send latency, ms. */
  latencies: number[];
  /** From the first send to the last reply, ms. */
  wallMs: number;
}

const allow: HookCallback = async () => ({ action: 'continue' });

/** Every session sends its prompts one after another; all sessions at once. */
async function drive(send: (session: number, prompt: string) => Promise<void>): Promise<Sample> {
  const latencies: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      for (let i = 0; i < SENDS; i++) {
        const a = performance.now();
        await send(s, `prompt ${i}`);
        latencies.push(performance.now() - a);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - t0 };
}

async function ours(target: Target): Promise<Sample & { activities: string[] }> {
  const agent = await createAgent({
    model: scriptedModel(() => 'ok', { keepRequests: 0 }),
    tools: [],
    advanced: {
      hooks: { [HookEvent.UserPromptSubmit]: [allow] },
      // 30 s, not the default 5 s: on this shared 2-core machine (load 15 to 25) a no-op
      // dispatch's first heartbeat came later than 5 s under this load, and the dispatch
      // failed as HOOK_WORKER_LOST; the hand-written baseline sets no heartbeat timeout.
      temporal: {
        address: target.address,
        ...(target.sdkTls ? { tls: target.sdkTls } : {}),
        taskQueue: `bench-cluster-${randomUUID()}`,
        dispatchHeartbeatTimeoutMs: 30_000,
      },
    },
  });
  try {
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, () => agent.createSession()),
    );
    const sample = await drive(async (s, prompt) => {
      const reply = await sessions[s]!.send(prompt);
      if (reply.text() !== 'ok') throw new Error(`unexpected reply ${reply.text()}`);
    });
    const activities = await activityTypes(target, sessions[0]!.workflowId);
    await Promise.all(sessions.map((s) => s.close()));
    return { ...sample, activities };
  } finally {
    await agent.shutdown();
  }
}

async function baseline(target: Target): Promise<Sample & { activities: string[] }> {
  const taskQueue = `bench-baseline-${randomUUID()}`;
  const connection = await NativeConnection.connect(connectOptions(target));
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: join(here, 'workflows', 'index.ts'),
    activities: {
      // The same no-op decision the hook callback of ours returns.
      benchHook: async () => ({ action: 'continue' }),
      benchModel: async () => 'ok',
    },
  });
  const running = worker.run();
  const clientConnection = await Connection.connect(connectOptions(target));
  const client = new Client({ connection: clientConnection });
  try {
    const handles = await Promise.all(
      Array.from({ length: SESSIONS }, () =>
        client.workflow.start('handWrittenSessionWorkflow', {
          taskQueue,
          workflowId: `baseline-${randomUUID()}`,
        }),
      ),
    );
    const sample = await drive(async (s, prompt) => {
      const reply = await handles[s]!.executeUpdate('send', { args: [prompt] });
      if (reply !== 'ok') throw new Error(`unexpected reply ${String(reply)}`);
    });
    const activities = await activityTypes(target, handles[0]!.workflowId);
    await Promise.all(handles.map((h) => h.executeUpdate('stop')));
    return { ...sample, activities };
  } finally {
    worker.shutdown();
    await running;
    await clientConnection.close();
    await connection.close();
  }
}

/** The activity types a workflow ran, with counts (`name xN`), from its history. */
async function activityTypes(target: Target, workflowId: string): Promise<string[]> {
  const connection = await Connection.connect(connectOptions(target));
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    const counts = new Map<string, number>();
    for (const event of history.events ?? []) {
      const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return [...counts].map(([name, n]) => `${name} x${n}`);
  } finally {
    await connection.close();
  }
}

interface Row {
  server: string;
  name: string;
  samples: Sample[];
}

async function series(server: string, target: Target, rows: Row[]): Promise<void> {
  const mine: Row = { server, name: 'durable-agent-sdk', samples: [] };
  const theirs: Row = { server, name: 'hand-written Temporal', samples: [] };
  for (let round = 0; round < ROUNDS; round++) {
    phase = `${server} round ${round + 1}, ours`;
    const a = await ours(target);
    mine.samples.push(a);
    phase = `${server} round ${round + 1}, hand-written`;
    const b = await baseline(target);
    theirs.samples.push(b);
    console.log(
      `  ${server} round ${round + 1}: ours ${fmt(throughput([a]))}/s, baseline ${fmt(throughput([b]))}/s`,
    );
    if (round === 0) {
      console.log(`  activities of one session, ours: ${a.activities.join(', ')}`);
      console.log(`  activities of one session, baseline: ${b.activities.join(', ')}`);
    }
  }
  rows.push(mine, theirs);
}

function throughput(samples: Sample[]): number {
  const sends = samples.reduce((n, s) => n + s.latencies.length, 0);
  const seconds = samples.reduce((t, s) => t + s.wallMs, 0) / 1000;
  return sends / seconds;
}

const rows: Row[] = [];
console.log(
  `${SESSIONS} sessions x ${SENDS} sends, one hook each; ${ROUNDS} rounds per server; ${new Date().toISOString()}`,
);
try {
  const t0 = performance.now();
  const cluster = await startCluster({
    dir: clusterDir,
    tls: CLUSTER_TLS,
    frontendPort: await freeClusterPort(),
  });
  console.log(
    `cluster at ${cluster.address}${cluster.tls ? ' (mTLS)' : ''}, up in ${fmt((performance.now() - t0) / 1000)} s`,
  );
  await series(
    `cluster (PostgreSQL, 4 processes${cluster.tls ? ', mTLS' : ''})`,
    clusterTarget(cluster.address, cluster.tls),
    rows,
  );
} finally {
  await stopCluster(clusterDir, { clean: true });
}
const dev = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
try {
  console.log(`dev server at ${dev.address}`);
  await series('dev server', { address: dev.address }, rows);
} finally {
  await dev.stop();
}

if (channelShutDownErrors > 0) {
  console.log(
    `\n${channelShutDownErrors} uncaught "Channel has been shut down" error(s) (see above)`,
  );
}
printTable(
  `${SESSIONS} concurrent sessions x ${SENDS} sends, one hook each: ours against hand-written Temporal code`,
  [
    'server',
    'implementation',
    'sends',
    'sends/s',
    'ratio (ours / hand-written)',
    'p50 ms',
    'p99 ms',
  ],
  rows.map((row, i) => {
    const latencies = row.samples.flatMap((s) => s.latencies);
    const pair = rows[i % 2 === 0 ? i + 1 : i - 1]!;
    const ratio = i % 2 === 0 ? fmt(throughput(row.samples) / throughput(pair.samples), 2) : '';
    return [
      row.server,
      row.name,
      String(latencies.length),
      fmt(throughput(row.samples)),
      ratio,
      fmt(percentile(latencies, 50)),
      fmt(percentile(latencies, 99)),
    ];
  }),
);
