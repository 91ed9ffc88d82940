/**
 * Recovery after a worker dies (issue 19, item 4): three worker processes, one SIGKILLed
 * (and replaced) every BENCH_KILL_MS (default 4000), while 30 sessions send 4 prompts each
 * (one UserPromptSubmit hook, one model step; 1 to 2 s apart). Prints the send
 * latencies (p50, p99, max), the kills, the sends in flight at a kill (on any worker; from
 * the kill to their end: the p99 is how soon the dead worker's sessions resumed, at most)
 * against the p99 of the other sends (the load alone), and how the sends ended, for each
 * series of settings below, interleaved per round.
 *
 *   npm run bench:chaos      (BENCH_ADDRESS to reuse a server; BENCH_CHAOS_ROUNDS=1;
 *                             BENCH_CHAOS_SLOW_MS=4000 prints each kill and each send slower
 *                             than that, with its workflow id, to read its history after;
 *                             BENCH_CHAOS_TRACE=<file> has each worker write a line there for
 *                             each model step attempt it ran: time, pid, workflow id, attempt;
 *                             BENCH_CHAOS_MODEL_MS=500 makes each model step take that long,
 *                             as a provider would, so that kills catch model calls too)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { build } from 'esbuild';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgentClient } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { bundleWorkflowSources, workflowsPath } from '../src/worker/workflow-code.js';
import { chaosAgentOptions, type ChaosSettings } from './chaos-agent.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const SESSIONS = Number(process.env.BENCH_CHAOS_SESSIONS ?? 30);
const PROMPTS = Number(process.env.BENCH_CHAOS_PROMPTS ?? 4);
const KILL_MS = Number(process.env.BENCH_KILL_MS ?? 4000);
const ROUNDS = Number(process.env.BENCH_CHAOS_ROUNDS ?? 1);
/** Indices of the series to run (all by default), e.g. `0,3`. */
const ONLY = process.env.BENCH_CHAOS_SERIES?.split(',').map(Number);
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/**
 * The series, one setting changed at a time: the settings before issue 19 (the model step's
 * heartbeat timeout, 30 s before, is the package's constant in every series), then the
 * sticky queue's timeout, the workflow task timeout and the dispatch heartbeat timeout
 * brought down in turn; then the package's defaults now (the workflow task timeout back at
 * 10 s: see `workflowTaskTimeoutMs`), the 2 s settings with the model step's heartbeat
 * timeout too, those with 1 s more for a workflow task and a sticky queue, those with both
 * heartbeats at 1 s, and those with the sticky queue's timeout at 500 ms.
 */
const SERIES: Array<{ name: string; settings: Omit<ChaosSettings, 'address' | 'taskQueue'> }> = [
  {
    name: 'sticky 3 s, workflow task 10 s, dispatch heartbeat 5 s (before)',
    settings: { stickyMs: 3_000, workflowTaskTimeoutMs: 10_000, dispatchHeartbeatTimeoutMs: 5_000 },
  },
  {
    name: 'sticky 1 s',
    settings: { stickyMs: 1_000, workflowTaskTimeoutMs: 10_000, dispatchHeartbeatTimeoutMs: 5_000 },
  },
  {
    name: 'sticky 1 s, workflow task 2 s',
    settings: { stickyMs: 1_000, workflowTaskTimeoutMs: 2_000, dispatchHeartbeatTimeoutMs: 5_000 },
  },
  {
    name: 'sticky 1 s, workflow task 2 s, dispatch heartbeat 2 s',
    settings: { stickyMs: 1_000, workflowTaskTimeoutMs: 2_000, dispatchHeartbeatTimeoutMs: 2_000 },
  },
  { name: 'defaults now: sticky 1 s, workflow task 10 s, dispatch heartbeat 5 s', settings: {} },
  {
    name: 'sticky 1 s, workflow task 2 s, dispatch and model-step heartbeats 2 s',
    settings: {
      stickyMs: 1_000,
      workflowTaskTimeoutMs: 2_000,
      dispatchHeartbeatTimeoutMs: 2_000,
      modelHeartbeatTimeoutMs: 2_000,
    },
  },
  {
    // The 2 s series with a little more room for a slow workflow task on a loaded machine.
    name: 'sticky 2 s, workflow task 3 s, dispatch and model-step heartbeats 2 s',
    settings: {
      stickyMs: 2_000,
      workflowTaskTimeoutMs: 3_000,
      dispatchHeartbeatTimeoutMs: 2_000,
      modelHeartbeatTimeoutMs: 2_000,
    },
  },
  {
    // The 2 s settings with the heartbeats at 1 s: a lost dispatch or model step is noticed
    // in 1 s (and a step retried 100 ms later).
    name: 'sticky 1 s, workflow task 2 s, dispatch and model-step heartbeats 1 s',
    settings: {
      stickyMs: 1_000,
      workflowTaskTimeoutMs: 2_000,
      dispatchHeartbeatTimeoutMs: 1_000,
      modelHeartbeatTimeoutMs: 1_000,
    },
  },
  {
    // And a session whose worker died between two sends waits half as long for its sticky queue.
    name: 'sticky 500 ms, workflow task 2 s, dispatch and model-step heartbeats 1 s',
    settings: {
      stickyMs: 500,
      workflowTaskTimeoutMs: 2_000,
      dispatchHeartbeatTimeoutMs: 1_000,
      modelHeartbeatTimeoutMs: 1_000,
    },
  },
];

const server = process.env.BENCH_ADDRESS
  ? { address: process.env.BENCH_ADDRESS, stop: async () => undefined }
  : await startDevServer({
      cacheDir: join(here, '..', '.temporal'),
      // BENCH_TIMER_SHIFT='"1s"' runs the server at Temporal's default timer shift (late
      // short timers) instead of the embedded server's 100 ms.
      ...(process.env.BENCH_TIMER_SHIFT
        ? { dynamicConfig: { 'history.timerProcessorMaxTimeShift': process.env.BENCH_TIMER_SHIFT } }
        : {}),
    });
console.log(
  `server ${server.address}; ${SESSIONS} sessions x ${PROMPTS} prompts, 3 workers, one killed every ${KILL_MS} ms; load ${load()}`,
);

/**
 * The worker process's code, built once to JavaScript (packages left to node_modules): a
 * worker restarted after each kill loads it as a deployed worker would, instead of compiling
 * TypeScript as it starts (with tsx a start took about 4 s of CPU here, half the machine at a
 * kill every 4 s; built, about 2 s).
 */
const workerDir = join(here, '..', 'node_modules', '.cache', 'durable-agent-bench');
const workerPath = join(workerDir, `chaos-worker-${process.pid}.mjs`);
await build({
  entryPoints: [join(here, 'chaos-worker.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  outfile: workerPath,
  logLevel: 'warning',
});

function startWorker(settings: ChaosSettings): Promise<ChildProcess> {
  const child = spawn(process.execPath, [workerPath], {
    // The quiet runtime: Temporal's INFO lines of every start would go to the console.
    env: {
      ...process.env,
      BENCH_CHAOS: JSON.stringify(settings),
      DURABLE_AGENT_TEMPORAL_RUNTIME: 'if-absent',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (!chunk.toString().includes('ready')) return;
      if (process.env.BENCH_CHAOS_SLOW_MS)
        console.log(`READY ${new Date().toISOString()} pid ${child.pid}`);
      resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`chaos worker exited (${code}) before ready`)));
  });
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

const bundleDir = mkdtempSync(join(tmpdir(), 'chaos-'));
const bundlePath = join(bundleDir, 'workflow-bundle.js');
writeFileSync(bundlePath, (await bundleWorkflowSources(workflowsPath())).code);

async function chaosRun(partial: Omit<ChaosSettings, 'address' | 'taskQueue'>) {
  const settings: ChaosSettings = {
    ...partial,
    address: server.address,
    taskQueue: `chaos-${randomUUID()}`,
    bundlePath,
  };
  const workers = await Promise.all([0, 1, 2].map(() => startWorker(settings)));
  const starting: Array<Promise<unknown>> = [];
  const client = await createAgentClient(chaosAgentOptions(settings));
  // Sessions are created before the first kill; a start that fails is tried again.
  const create = async (): Promise<Awaited<ReturnType<typeof client.createSession>>> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await client.createSession();
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  };
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, create));
  let kills = 0;
  /** When each kill happened (performance.now()). */
  const killedAt: number[] = [];
  let running = true;
  const chaos = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, KILL_MS));
      // Never the last one standing: a replacement may still be starting.
      if (!running || workers.length < 2) continue;
      const victim = workers.shift()!;
      killedAt.push(performance.now());
      if (process.env.BENCH_CHAOS_SLOW_MS)
        console.log(`KILL ${new Date().toISOString()} pid ${victim.pid}`);
      await kill(victim);
      kills++;
      starting.push(startWorker(settings).then((w) => workers.push(w)));
    }
    await Promise.all(starting);
  })();
  const latencies: number[] = [];
  /** Each send's start and end (performance.now()). */
  const spans: Array<[number, number]> = [];
  const outcomes = new Map<string, number>();
  const messages = new Map<string, string>();
  const note = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
  const t0 = performance.now();
  await Promise.all(
    sessions.map(async (session, s) => {
      for (let p = 0; p < PROMPTS; p++) {
        await new Promise((r) => setTimeout(r, 1000 + Math.random() * 1000));
        const start = performance.now();
        try {
          const response = await session.send(`s${s}p${p}`);
          note(response.text() === `echo:s${s}p${p}` ? response.status : 'wrong text');
        } catch (error) {
          const code = (error as { code?: string }).code ?? 'error';
          note(code);
          if (!messages.has(code))
            messages.set(code, String((error as Error).message).slice(0, 300));
        }
        latencies.push(performance.now() - start);
        spans.push([start, performance.now()]);
        if (
          process.env.BENCH_CHAOS_SLOW_MS &&
          performance.now() - start > Number(process.env.BENCH_CHAOS_SLOW_MS)
        )
          console.log(
            `SLOW ${session.workflowId} s${s}p${p} ${new Date(Date.now() - (performance.now() - start)).toISOString()} ${(performance.now() - start).toFixed(0)} ms`,
          );
      }
    }),
  );
  const wall = performance.now() - t0;
  running = false;
  await chaos;
  // Every prompt of every session is in its transcript once (none lost, none run twice).
  let misplaced = 0;
  for (const [s, session] of sessions.entries()) {
    const users = (await session.conversation())
      .filter((m) => m.role === 'user')
      .map((m) => (m as { content: unknown }).content);
    const rejected = users.length < PROMPTS;
    const expected = Array.from({ length: PROMPTS }, (_, p) => `s${s}p${p}`);
    if (!rejected && JSON.stringify(users) !== JSON.stringify(expected)) misplaced++;
    if (users.length > PROMPTS || new Set(users).size !== users.length) misplaced++;
  }
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await client.close();
  await Promise.all(workers.map(kill));
  for (const [code, message] of messages) console.log(`  ${code}: ${message}`);
  // The sends a kill caught in flight, and how long after it each ended (at most this long
  // to resume, the rest of the send's own work included); the others show the load alone.
  const afterKill: number[] = [];
  const untouched: number[] = [];
  for (const [start, end] of spans) {
    const caught = killedAt.filter((k) => start <= k && k <= end);
    if (caught.length > 0) afterKill.push(end - Math.min(...caught));
    else untouched.push(end - start);
  }
  return { latencies, outcomes, kills, wall, misplaced, afterKill, untouched };
}

type RunResult = Awaited<ReturnType<typeof chaosRun>>;
/** One table row: a run, or a series' runs pooled. */
function row(name: string, r: RunResult): string[] {
  return [
    name,
    fmt(percentile(r.latencies, 50)),
    fmt(percentile(r.latencies, 99)),
    fmt(Math.max(...r.latencies)),
    String(r.kills),
    `${r.afterKill.length}: ${fmt(percentile(r.afterKill, 50))} / ${fmt(percentile(r.afterKill, 99))}`,
    fmt(percentile(r.untouched, 99)),
    [...r.outcomes].map(([k, v]) => `${k} ${v}`).join(', '),
    String(r.misplaced),
  ];
}

/** The runs of one series as one: their sends, kills and outcomes together. */
function pooled(runs: RunResult[]): RunResult {
  const outcomes = new Map<string, number>();
  for (const r of runs)
    for (const [k, v] of r.outcomes) outcomes.set(k, (outcomes.get(k) ?? 0) + v);
  return {
    latencies: runs.flatMap((r) => r.latencies),
    afterKill: runs.flatMap((r) => r.afterKill),
    untouched: runs.flatMap((r) => r.untouched),
    kills: runs.reduce((n, r) => n + r.kills, 0),
    wall: runs.reduce((n, r) => n + r.wall, 0),
    misplaced: runs.reduce((n, r) => n + r.misplaced, 0),
    outcomes,
  };
}

const columns = [
  'settings',
  'p50',
  'p99',
  'max',
  'kills',
  'sends a kill caught: n: kill to end p50 / p99',
  'p99 of the other sends',
  'sends ended',
  'sessions with a prompt lost or twice',
];
const rows: string[][] = [];
const bySeries = new Map<number, RunResult[]>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, series] of SERIES.entries()) {
      if (ONLY && !ONLY.includes(index)) continue;
      const r = await chaosRun(series.settings);
      bySeries.set(index, [...(bySeries.get(index) ?? []), r]);
      rows.push(row(series.name, r));
    }
  }
  printTable(`Sends under SIGKILL chaos, each run (ms; load at the end ${load()})`, columns, rows);
  if (ROUNDS > 1) {
    // A run has one to four kills: its p99 is its second-slowest send. Pooled, the p99 of a
    // series rests on every round's sends and kills.
    printTable(
      `The ${ROUNDS} rounds of each series pooled (ms)`,
      columns,
      [...bySeries].map(([index, runs]) => row(SERIES[index]!.name, pooled(runs))),
    );
  }
} finally {
  rmSync(bundleDir, { recursive: true, force: true });
  rmSync(workerPath, { force: true });
  await server.stop();
}
