/**
 * Grep stall benchmark (issue 15, item 6): abort latency, from abort() in this process to a
 * UserPromptSubmit callback's abortSignal in a worker process, while another session on the
 * same worker
 *
 * 1. does nothing (idle);
 * 2. runs a Grep stuck in a catastrophic regex (`(a+)+$` over 40 a's and a b), in its thread;
 * 3. runs the same kind of regex on the event loop, 300 ms a "file" (the old Grep).
 *
 * The series are interleaved, BENCH_GREP_K aborts at a time, on one dev server.
 *
 *   npx tsx bench/grep-stall.ts    (BENCH_N=60 aborts per series by default;
 *                                   TEMPORAL_ADDRESS to use a running server)
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgentClient, HookEvent, type Session } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel } from '../src/testing/index.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 60);
const K = Number(process.env.BENCH_GREP_K ?? 10);
const now = () => performance.timeOrigin + performance.now();

installQuietRuntime();
const server = process.env.TEMPORAL_ADDRESS
  ? undefined
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const address = process.env.TEMPORAL_ADDRESS ?? server!.address;
console.log(`server ${address}; N=${N} aborts per series; ${new Date().toISOString()}`);

const ws = mkdtempSync(join(tmpdir(), 'bench-grep-stall-'));
writeFileSync(join(ws, 'evil.txt'), `${'a'.repeat(40)}b\n`);
const taskQueue = `bench-${randomUUID()}`;
const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'grep-stall-worker.ts')], {
  env: { ...process.env, BENCH_ADDRESS: address, BENCH_TASK_QUEUE: taskQueue, BENCH_WS: ws },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const lines: string[] = [];
let buffer = '';
child.stdout.on('data', (chunk: Buffer) => {
  buffer += chunk.toString();
  const parts = buffer.split('\n');
  buffer = parts.pop() ?? '';
  lines.push(...parts);
});
const next = async (prefix: string): Promise<string> => {
  for (;;) {
    const index = lines.findIndex((l) => l.startsWith(prefix));
    if (index >= 0) return lines.splice(index, 1)[0]!;
    await new Promise((r) => setTimeout(r, 1));
  }
};

type Series = 'idle' | 'grep' | 'sync';
const latencies: Record<Series, number[]> = { idle: [], grep: [], sync: [] };
try {
  const syncLength = Number((await next('ready')).split(' ')[1]);
  const client = await createAgentClient({
    model: scriptedModel(['unused']),
    workspaceRoots: [ws],
    advanced: {
      permission: 'bypass-permissions',
      // The worker has the real callback; the client must know the event has one.
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      temporal: { address, taskQueue },
    },
  });
  const waiting = await client.createSession();
  const busy = await client.createSession();

  /** One abort of a `wait` prompt; its latency, ms. */
  const abortOnce = async (session: Session): Promise<number> => {
    const pending = session.send('wait');
    await next('entered');
    // Let the dispatch settle into its heartbeat rhythm, at a random phase.
    await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
    const t0 = now();
    await session.abort(new Error('bench abort'));
    const t1 = Number((await next('aborted')).split(' ')[1]);
    await pending;
    return t1 - t0;
  };

  /** K aborts while `busy` runs `prompt` (none for idle); the first round is warm-up. */
  const phase = async (series: Series, record: boolean): Promise<void> => {
    const background =
      series === 'idle' ? undefined : busy.send(series === 'grep' ? 'grep' : 'sync');
    if (background) await next(series === 'grep' ? 'started Grep' : 'started SyncGrep');
    for (let i = 0; i < K; i++) {
      const latency = await abortOnce(waiting);
      if (record) latencies[series].push(latency);
    }
    if (background) {
      await busy.abort(new Error('end of phase'));
      await background;
    }
  };

  for (const series of ['idle', 'grep', 'sync'] as const) await phase(series, false);
  for (let round = 0; round < Math.ceil(N / K); round++) {
    for (const series of ['idle', 'grep', 'sync'] as const) await phase(series, true);
  }
  await Promise.all([waiting.close(), busy.close()]);
  await client.close();

  const row = (label: string, values: number[]) => [
    label,
    String(values.length),
    fmt(percentile(values, 50)),
    fmt(percentile(values, 99)),
    fmt(Math.max(...values)),
    '<= 100',
  ];
  printTable(
    "Abort latency while another session on the worker greps: abort() here to the callback's abortSignal in the worker process (ms)",
    ['the other session', 'aborts', 'p50', 'p99', 'max', 'target p99'],
    [
      row('idle', latencies.idle),
      row('Grep stuck in (a+)+$ (40 a, b), in its thread', latencies.grep),
      row(
        `the same regex on the event loop, ~300 ms a file (${syncLength} a, b; the old Grep)`,
        latencies.sync,
      ),
    ],
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await server?.stop();
}
