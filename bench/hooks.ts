/**
 * Hook benchmarks (issue 4), side by side in one run on one embedded dev server:
 *
 * 1. hook dispatch vs a bare no-op activity, through identical workflow plumbing;
 * 2. an event with no callbacks: no activity, no added time;
 * 3. abort latency, from abort() in this process to the abortSignal in a worker process;
 * 4. budget precision: how late HOOK_TIMEOUT fires after the budget;
 * 5. model abort latency: from abort() to the provider's HTTP request closing.
 *
 *   npm run bench            (BENCH_N=300 by default)
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createHookActivities } from '../activities/hook-dispatch.js';
import { DEFAULTS } from '../src/common/defaults.js';
import { sessionWorkflowId } from '../src/common/workflow-io.js';
import type { DispatchHookInput } from '../src/common/activity-io.js';
import { createAgent, createAgentClient, HookEvent, type HookMap } from '../src/index.js';
import { AgentRegistry } from '../src/definition/registry.js';
import { startDevServer } from '../src/server/dev-server.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { benchAgentOptions } from './bench-agent.js';
import { fmt, percentile, printTable } from './stats.js';
import { testIdentity } from '../test/helpers/registry-identity.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 300);
// The budget series times hooks out on purpose, and each timeout is a WARN line of the SDK's
// (here and in the worker processes, which inherit it): keep the tables readable.
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
const now = () => performance.timeOrigin + performance.now();

installQuietRuntime();
const server = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
console.log(`dev server ${server.address}; N=${N} per series; ${new Date().toISOString()}`);
try {
  await dispatchVsNoop();
  await noCallbackCost();
  const aborts = [await abortLatency(25), await abortLatency(50)];
  printTable(
    `Abort latency: abort() here to the callback's abortSignal in a worker process (ms)`,
    ['heartbeat interval and throttle', 'aborts', 'p50', 'p99', 'max', 'target p99'],
    aborts.map((a) => [
      `${a.heartbeatMs} ms`,
      String(a.latencies.length),
      fmt(percentile(a.latencies, 50)),
      fmt(percentile(a.latencies, 99)),
      fmt(Math.max(...a.latencies)),
      '<= 100',
    ]),
  );
  await budgetPrecision();
  await modelAbortLatency();
} finally {
  await server.stop();
}

async function dispatchVsNoop(): Promise<void> {
  const registry = new AgentRegistry();
  registry.register({
    name: 'bench',
    hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
    model: { name: 'none', step: async () => ({ text: '', finishReason: 'stop' }) },
    tools: [],
    workspaceRoots: [],
    maxToolOutputBytes: 65_536,
    ...testIdentity,
  });
  const hooks = createHookActivities({
    registry,
    cleanupQueue: 'unused',
    heartbeatIntervalMs: DEFAULTS.heartbeatIntervalMs,
  });
  const connection = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-${randomUUID()}`;
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: join(here, 'workflows', 'index.ts'),
    activities: { noop: async () => undefined, dispatchHook: hooks.dispatchHook },
    maxHeartbeatThrottleInterval: DEFAULTS.heartbeatIntervalMs,
    defaultHeartbeatThrottleInterval: DEFAULTS.heartbeatIntervalMs,
  });
  const running = worker.run();
  const clientConnection = await Connection.connect({ address: server.address });
  const client = new Client({ connection: clientConnection });
  const start = () =>
    client.workflow.start('benchWorkflow', { taskQueue, workflowId: `bench-${randomUUID()}` });
  // A new workflow every 99 Updates: an Update's latency grows with the Updates in its run.
  let handle = await start();
  let updates = 0;
  const input = (): DispatchHookInput => ({
    dispatchId: randomUUID(),
    sessionId: 's',
    agentName: 'bench',
    event: HookEvent.UserPromptSubmit,
    payload: { userPrompt: 'x', hasImages: false, imageCount: 0 },
    budgetMs: 600_000,
    callbackCount: 1,
  });
  const series: Record<'none' | 'noop' | 'hook', number[]> = { none: [], noop: [], hook: [] };
  const step = async (kind: 'none' | 'noop' | 'hook', record: boolean) => {
    const t0 = now();
    await handle.executeUpdate('step', {
      args: [{ kind, ...(kind === 'hook' ? { input: input() } : {}) }],
    });
    if (record) series[kind].push(now() - t0);
    if (++updates % 99 === 0) {
      await handle.executeUpdate('stop');
      handle = await start();
    }
  };
  for (let i = 0; i < 30; i++)
    for (const kind of ['none', 'noop', 'hook'] as const) await step(kind, false);
  for (let i = 0; i < N; i++)
    for (const kind of ['none', 'noop', 'hook'] as const) await step(kind, true);
  await handle.executeUpdate('stop');
  worker.shutdown();
  await running;
  await clientConnection.close();
  await connection.close();

  const row = (name: string, values: number[]) => [
    name,
    fmt(percentile(values, 50)),
    fmt(percentile(values, 99)),
  ];
  const ratio = (p: number) => percentile(series.hook, p) / percentile(series.noop, p);
  printTable(
    'Hook dispatch vs bare no-op activity (one Update each, ms)',
    ['series', 'p50', 'p99'],
    [
      row('update, no activity', series.none),
      row('update + no-op activity', series.noop),
      row('update + hook dispatch (1 no-op callback)', series.hook),
      [
        'ratio dispatch / no-op (target p50 <= 1.2, p99 <= 1.5)',
        fmt(ratio(50), 2),
        fmt(ratio(99), 2),
      ],
    ],
  );
}

async function noCallbackCost(): Promise<void> {
  const taskQueue = `bench-${randomUUID()}`;
  // Hooks only on SessionEnd: UserPromptSubmit and TaskCompleted have none.
  const agent = await createAgent(
    benchAgentOptions(server.address, taskQueue, {
      [HookEvent.SessionEnd]: [async () => ({ action: 'continue' })],
    }),
  );
  const plain = await agent.createSession();
  const withPromptHook = await agent.createSession({
    hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
  });
  const noHooksAgent = await createAgent(
    benchAgentOptions(server.address, `${taskQueue}-bare`, {}),
  );
  const bare = await noHooksAgent.createSession();
  const series: Record<string, number[]> = { bare: [], plain: [], hooked: [] };
  const sessions = { bare, plain, hooked: withPromptHook };
  const rounds = Math.max(50, Math.floor(N / 3));
  for (let i = 0; i < rounds + 10; i++) {
    for (const [name, session] of Object.entries(sessions)) {
      const t0 = now();
      await session.send('x');
      if (i >= 10) series[name]!.push(now() - t0);
    }
  }
  const raw = new Client({ connection: await Connection.connect({ address: server.address }) });
  const dispatches = async (sessionId: string) => {
    const history = await raw.workflow.getHandle(sessionWorkflowId(sessionId)).fetchHistory();
    return (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dispatchHook',
    ).length;
  };
  const counts = {
    bare: await dispatches(bare.id),
    plain: await dispatches(plain.id),
    hooked: await dispatches(withPromptHook.id),
  };
  await raw.connection.close();
  await Promise.all([plain.close(), withPromptHook.close(), bare.close()]);
  await agent.shutdown();
  await noHooksAgent.shutdown();
  const row = (label: string, name: string) => [
    label,
    fmt(percentile(series[name]!, 50)),
    fmt(percentile(series[name]!, 99)),
    String(counts[name as keyof typeof counts]),
  ];
  printTable(
    `Events with no callbacks (send() round trip, ms; ${rounds} sends each)`,
    ['session', 'p50', 'p99', 'dispatch activities in history'],
    [
      row('agent with no hooks at all', 'bare'),
      row('hooks on SessionEnd only (UserPromptSubmit, TaskCompleted: none)', 'plain'),
      row('plus one UserPromptSubmit callback', 'hooked'),
      [
        'ratio no-callback / no-hooks (target 1.0)',
        fmt(percentile(series.plain!, 50) / percentile(series.bare!, 50), 2),
        fmt(percentile(series.plain!, 99) / percentile(series.bare!, 99), 2),
        '',
      ],
    ],
  );
}

async function abortLatency(
  heartbeatMs: number,
): Promise<{ heartbeatMs: number; latencies: number[] }> {
  const taskQueue = `bench-${randomUUID()}`;
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'abort-worker.ts')], {
    env: {
      ...process.env,
      BENCH_ADDRESS: server.address,
      BENCH_TASK_QUEUE: taskQueue,
      BENCH_HEARTBEAT_MS: String(heartbeatMs),
    },
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
  const next = async (prefix: string) => {
    for (;;) {
      const index = lines.findIndex((l) => l.startsWith(prefix));
      if (index >= 0) return lines.splice(index, 1)[0]!;
      await new Promise((r) => setTimeout(r, 1));
    }
  };
  await next('ready');
  const hooks: HookMap = { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] };
  const client = await createAgentClient(benchAgentOptions(server.address, taskQueue, hooks));
  const session = await client.createSession();
  const latencies: number[] = [];
  const rounds = Math.max(30, Math.floor(N / 5));
  for (let i = 0; i < rounds + 5; i++) {
    const pending = session.send('wait');
    await next('entered');
    // Let the dispatch settle into its heartbeat rhythm, at a random phase.
    await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
    const t0 = now();
    await session.abort(new Error('bench abort'));
    const t1 = Number((await next('aborted')).split(' ')[1]);
    await pending;
    if (i >= 5) latencies.push(t1 - t0);
  }
  await session.close();
  await client.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { heartbeatMs, latencies };
}

async function budgetPrecision(): Promise<void> {
  const budgetMs = 100;
  let startedAt = 0;
  let abortedAt = 0;
  const agent = await createAgent({
    ...benchAgentOptions(server.address, `bench-${randomUUID()}`, {
      [HookEvent.UserPromptSubmit]: [
        async (input) => {
          startedAt = now();
          const signal = input.abortSignal!;
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          abortedAt = now();
          return { action: 'continue' };
        },
      ],
    }),
  });
  const session = await agent.createSession({ hookTimeoutMs: budgetMs });
  const inside: number[] = [];
  const atCaller: number[] = [];
  const rounds = Math.max(30, Math.floor(N / 5));
  for (let i = 0; i < rounds + 5; i++) {
    const error = await session.send('x').then(
      () => undefined,
      (e: unknown) => e,
    );
    const rejectedAt = now();
    if ((error as { code?: string })?.code !== 'HOOK_TIMEOUT')
      throw new Error(`expected HOOK_TIMEOUT, got ${String(error)}`);
    if (i >= 5) {
      inside.push(abortedAt - startedAt - budgetMs);
      atCaller.push(rejectedAt - startedAt - budgetMs);
    }
  }
  await session.close();
  await agent.shutdown();
  printTable(
    `Budget precision: lateness after a ${budgetMs} ms budget (ms; ${rounds} timeouts)`,
    ['measured at', 'p50', 'p99', 'target p99'],
    [
      [
        "callback's abortSignal (in the worker)",
        fmt(percentile(inside, 50)),
        fmt(percentile(inside, 99)),
        '<= 50',
      ],
      [
        "caller's send() rejects with HOOK_TIMEOUT",
        fmt(percentile(atCaller, 50)),
        fmt(percentile(atCaller, 99)),
        '',
      ],
    ],
  );
}

/**
 * abort() during a model step, to the moment the provider's HTTP request closes. The model
 * step heartbeats every 250 ms and cancellation arrives with a heartbeat response, so this
 * is bounded by about a third of a second (README, Models).
 */
async function modelAbortLatency(): Promise<void> {
  let requested: () => void = () => undefined;
  let closed: (at: number) => void = () => undefined;
  // An OpenAI-compatible provider that never answers: a request stays open until cut.
  const provider = createServer((req, res) => {
    req.resume();
    res.on('close', () => closed(now()));
    requested();
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', () => resolve()));
  const port = (provider.address() as AddressInfo).port;
  const agent = await createAgent({
    model: 'bench-model',
    apiKey: 'bench',
    baseUrl: `http://127.0.0.1:${port}/v1`,
    advanced: { temporal: { address: server.address, taskQueue: `bench-${randomUUID()}` } },
  });
  const session = await agent.createSession();
  const latencies: number[] = [];
  const rounds = Math.max(30, Math.floor(N / 5));
  try {
    for (let i = 0; i < rounds + 5; i++) {
      const open = new Promise<void>((resolve) => (requested = resolve));
      const cut = new Promise<number>((resolve) => (closed = resolve));
      const pending = session.send('wait');
      await open;
      // At a random phase of the step's heartbeat rhythm.
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 250));
      const t0 = now();
      await session.abort(new Error('bench abort'));
      const t1 = await cut;
      const response = await pending;
      if (response.status !== 'aborted')
        throw new Error(`expected aborted, got ${response.status}`);
      if (i >= 5) latencies.push(t1 - t0);
    }
    await session.close();
  } finally {
    await agent.shutdown();
    provider.closeAllConnections();
    provider.close();
  }
  printTable(
    `Model abort latency: abort() here to the provider's HTTP request closing (ms; ${rounds} aborts)`,
    ['model step heartbeat', 'p50', 'p99', 'max', 'target p99'],
    [
      [
        '250 ms',
        fmt(percentile(latencies, 50)),
        fmt(percentile(latencies, 99)),
        fmt(Math.max(...latencies)),
        '<= 350',
      ],
    ],
  );
}
