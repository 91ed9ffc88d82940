/**
 * What the "began" record costs (`activities/attempt-record.ts`): before its first callback a
 * hook dispatch, and before its tool a tool execution, has the server confirm, with a
 * heartbeat RPC of its own, that it begins (so a retried attempt knows whether it may run
 * them). Paired, interleaved, on one dev server: the same `dispatchHook` and `executeTool`
 * activities through the same workflow plumbing (one Update, one activity), once as they run,
 * once with the record skipped (the activity sees no client, as in a MockActivityEnvironment).
 * Prints p50/p99 of each and their ratios.
 *
 *   npx tsx bench/dispatch-began.ts     (BENCH_N=200 pairs by default)
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asyncLocalStorage, Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createHookActivities } from '../activities/hook-dispatch.js';
import { createToolActivities } from '../activities/tool-exec.js';
import { DEFAULTS } from '../src/common/defaults.js';
import type { DispatchHookInput, ExecuteToolInput } from '../src/common/activity-io.js';
import { defineTool, HookEvent } from '../src/index.js';
import { AgentRegistry } from '../src/definition/registry.js';
import { startDevServer } from '../src/server/dev-server.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { fmt, percentile, printTable } from './stats.js';
import { testIdentity } from '../test/helpers/registry-identity.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 200);
const now = () => performance.timeOrigin + performance.now();

installQuietRuntime();
const server = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
console.log(`dev server ${server.address}; N=${N} pairs; ${new Date().toISOString()}`);
try {
  const registry = new AgentRegistry();
  registry.register({
    name: 'bench',
    hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
    model: { name: 'none', step: async () => ({ text: '', finishReason: 'stop' }) },
    tools: [
      defineTool({
        name: 'Nothing',
        description: 'Does nothing',
        kind: 'readonly',
        inputSchema: z.object({}),
        execute: async () => 'done',
      }),
    ],
    workspaceRoots: [],
    maxToolOutputBytes: 65_536,
    ...testIdentity,
  });
  const hooks = createHookActivities({
    registry,
    cleanupQueue: 'unused',
    heartbeatIntervalMs: DEFAULTS.heartbeatIntervalMs,
  });
  const tools = createToolActivities({
    registry,
    heartbeatIntervalMs: DEFAULTS.heartbeatIntervalMs,
  });
  // The same activities in a context without a client: they record nothing (the baseline).
  const withoutClient =
    <I, O>(activity: (input: I) => Promise<O>) =>
    (input: I) => {
      const ctx = Context.current();
      const bare = new Proxy(ctx, {
        get(target, key) {
          if (key === 'client') throw new Error('no client');
          return Reflect.get(target, key, target) as unknown;
        },
      });
      return asyncLocalStorage.run(bare, () => activity(input));
    };
  const connection = await NativeConnection.connect({ address: server.address });
  const queues = { recorded: `bench-${randomUUID()}`, unrecorded: `bench-${randomUUID()}` };
  const workers = await Promise.all(
    (['recorded', 'unrecorded'] as const).map((kind) =>
      Worker.create({
        connection,
        taskQueue: queues[kind],
        workflowsPath: join(here, 'workflows', 'index.ts'),
        activities: {
          noop: async () => undefined,
          dispatchHook:
            kind === 'recorded' ? hooks.dispatchHook : withoutClient(hooks.dispatchHook),
          executeTool: kind === 'recorded' ? tools.executeTool : withoutClient(tools.executeTool),
        },
        maxHeartbeatThrottleInterval: DEFAULTS.heartbeatIntervalMs,
        defaultHeartbeatThrottleInterval: DEFAULTS.heartbeatIntervalMs,
      }),
    ),
  );
  const running = workers.map((w) => w.run());
  const clientConnection = await Connection.connect({ address: server.address });
  const client = new Client({ connection: clientConnection });
  const start = (kind: 'recorded' | 'unrecorded') =>
    client.workflow.start('benchWorkflow', {
      taskQueue: queues[kind],
      workflowId: `bench-${randomUUID()}`,
    });
  const handles = { recorded: await start('recorded'), unrecorded: await start('unrecorded') };
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
  const toolInput = (): ExecuteToolInput => ({
    sessionId: 's',
    agentName: 'bench',
    toolUseId: randomUUID(),
    toolName: 'Nothing',
    input: {},
    timeoutMs: 60_000,
  });
  type Activity = 'hook' | 'tool';
  const series: Record<Activity, Record<'recorded' | 'unrecorded', number[]>> = {
    hook: { recorded: [], unrecorded: [] },
    tool: { recorded: [], unrecorded: [] },
  };
  const step = async (activity: Activity, kind: 'recorded' | 'unrecorded', record: boolean) => {
    const t0 = now();
    const arg =
      activity === 'hook' ? { kind: 'hook', input: input() } : { kind: 'tool', input: toolInput() };
    await handles[kind].executeUpdate('step', { args: [arg] });
    if (record) series[activity][kind].push(now() - t0);
    // A new workflow every 99 Updates: an Update's latency grows with the Updates in its run.
    if (++updates % 198 === 0) {
      for (const k of ['recorded', 'unrecorded'] as const) {
        await handles[k].executeUpdate('stop');
        handles[k] = await start(k);
      }
    }
  };
  for (let i = 0; i < N + 20; i++) {
    // Alternate which goes first, so neither always follows the other.
    const order =
      i % 2 ? (['recorded', 'unrecorded'] as const) : (['unrecorded', 'recorded'] as const);
    for (const activity of ['hook', 'tool'] as const) {
      for (const kind of order) await step(activity, kind, i >= 20);
    }
  }
  for (const k of ['recorded', 'unrecorded'] as const) await handles[k].executeUpdate('stop');
  for (const w of workers) w.shutdown();
  await Promise.all(running);
  await clientConnection.close();
  await connection.close();
  const row = (name: string, values: number[]) => [
    name,
    fmt(percentile(values, 50)),
    fmt(percentile(values, 99)),
  ];
  const ratio = (activity: Activity, p: number) =>
    percentile(series[activity].recorded, p) / percentile(series[activity].unrecorded, p);
  printTable(
    `With and without the began record (one Update + one activity, ms; ${N} pairs each)`,
    ['series', 'p50', 'p99'],
    [
      row('hook dispatch, no record', series.hook.unrecorded),
      row('hook dispatch, began record confirmed first', series.hook.recorded),
      ['hook dispatch: ratio with / without', fmt(ratio('hook', 50), 2), fmt(ratio('hook', 99), 2)],
      row('tool execution, no record', series.tool.unrecorded),
      row('tool execution, began record confirmed first', series.tool.recorded),
      [
        'tool execution: ratio with / without',
        fmt(ratio('tool', 50), 2),
        fmt(ratio('tool', 99), 2),
      ],
    ],
  );
} finally {
  await server.stop();
}
