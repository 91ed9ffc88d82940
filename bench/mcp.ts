/**
 * MCP tools (issue 35): a send of ours whose model calls one MCP tool, against the same work
 * written by hand on Temporal, side by side in one run on one dev server.
 *
 * - latency, interleaved series, each send timed end to end: ours, an agent with one stdio
 *   MCP server (`@modelcontextprotocol/server-everything`, its read-only `echo` tool, allowed
 *   by the default preset), one PreToolUse and one PostToolUse callback, a scripted model
 *   whose first step calls the tool and second answers; against `benchMcpSession`
 *   (bench/workflows/): one Update per send running a model step, the real `dispatchHook`
 *   for PreToolUse, an activity calling the same server's tool through its own
 *   `@modelcontextprotocol/sdk` client (kept open across sends, heartbeating), `dispatchHook`
 *   for PostToolUse and a second model step. Target: p50 ratio <= 1.1.
 * - one more series (`BENCH_MCP_LIST=0` leaves it out): the hand-written side listing the
 *   server's tools before each call (what our `executeTool` does to check the recorded digest
 *   against a server that does not announce list changes; this one does, so ours lists once
 *   per connection); and the two MCP requests alone, outside Temporal (`tools/list` through our `McpConnections`
 *   and through a bare client, `tools/call` through a bare client): where the time goes.
 * - history events and bytes per send on each side.
 *
 *   npm run bench:mcp     (BENCH_N=100 sends per series after BENCH_WARMUP=20; BENCH_ADDRESS
 *                          to reuse a server; BENCH_MCP_SAVE=<dir> saves each side's last
 *                          session history there, for bench/mcp-replay.ts)
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createHookActivities } from '../activities/hook-dispatch.js';
import type { ConversationMessage } from '../src/common/conversation.js';
import { DEFAULTS } from '../src/common/defaults.js';
import type { JsonObject } from '../src/common/json.js';
import { AgentRegistry } from '../src/definition/registry.js';
import { createAgent, HookEvent } from '../src/index.js';
import { handSender, historySize, oursSender, sendInterleaved } from './senders.js';
import { McpConnections } from '../src/mcp/connections.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel, toolCall, type RecordedModelRequest } from '../src/testing/index.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { testIdentity } from '../test/helpers/registry-identity.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 100);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const ROTATE = Number(process.env.BENCH_ROTATE ?? 50);
const WITH_LIST = process.env.BENCH_MCP_LIST !== '0';
/** Sends per side, after the timed ones, whose history events are broken down. */
const BREAKDOWN = Number(process.env.BENCH_BREAKDOWN ?? 20);
/** A folder to save each side's last session history in (for bench/mcp-replay.ts). */
const SAVE = process.env.BENCH_MCP_SAVE;
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
const now = () => performance.now();
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const continueHook = async () => ({ action: 'continue' as const });

/** The MCP server both sides call: server-everything over stdio. */
const SERVER = 'everything';
const TOOL = 'echo';
const serverCommand = {
  command: process.execPath,
  args: [
    join(
      here,
      '..',
      'node_modules',
      '@modelcontextprotocol',
      'server-everything',
      'dist',
      'index.js',
    ),
    'stdio',
  ],
};

/** Both sides' model: the first step calls the MCP tool with the prompt, the second answers. */
const script = (request: RecordedModelRequest) =>
  request.messages.at(-1)?.role === 'tool'
    ? 'ok'
    : toolCall(`mcp__${SERVER}__${TOOL}`, { message: String(request.prompt ?? '') });

installQuietRuntime('ERROR');
const server = process.env.BENCH_ADDRESS
  ? { address: process.env.BENCH_ADDRESS, pid: -1, stop: async () => undefined }
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
console.log(
  `server ${server.address}; ${N} sends per series after ${WARMUP} warm-up, sessions ` +
    `rotated every ${ROTATE}; load ${load()}; ${new Date().toISOString()}`,
);

const agent = await createAgent({
  name: 'bench-mcp',
  model: scriptedModel(script, { keepRequests: 1 }),
  tools: [],
  mcpServers: { [SERVER]: serverCommand },
  advanced: {
    hooks: { [HookEvent.PreToolUse]: [continueHook], [HookEvent.PostToolUse]: [continueHook] },
    temporal: { address: server.address, taskQueue: `bench-mcp-${randomUUID()}` },
  },
});

// The baseline's worker: the same dispatch activity and callbacks, the same scripted model,
// and its own client of the same server, connected once and kept open.
const registry = new AgentRegistry();
registry.register({
  name: 'mcp-hand',
  hooks: { [HookEvent.PreToolUse]: [continueHook], [HookEvent.PostToolUse]: [continueHook] },
  model: scriptedModel(script, { keepRequests: 1 }),
  tools: [],
  workspaceRoots: [],
  maxToolOutputBytes: 65_536,
  ...testIdentity,
});
const hookActivities = createHookActivities({
  registry,
  cleanupQueue: 'unused',
  heartbeatIntervalMs: DEFAULTS.heartbeatIntervalMs,
});

async function connectMcp(): Promise<McpClient> {
  const client = new McpClient({ name: 'bench-hand', version: '0.0.0' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ ...serverCommand, stderr: 'ignore' }));
  return client;
}
const mcpClient = await connectMcp();

const handDeployment =
  agent.worker.versioning === 'deployments'
    ? { deploymentName: `bench-mcp-${randomUUID().slice(0, 8)}`, buildId: 'v1' }
    : undefined;
const handQueue = `bench-mcp-hand-${randomUUID()}`;
const nativeConnection = await NativeConnection.connect({ address: server.address });
const handWorker = await Worker.create({
  connection: nativeConnection,
  taskQueue: handQueue,
  workflowsPath: join(here, 'workflows', 'index.ts'),
  activities: {
    dispatchHook: hookActivities.dispatchHook,
    async mcpModelStep(input: { agentName: string; messages: ConversationMessage[] }) {
      const first = input.messages[0];
      const output = await registry.agent(input.agentName).model.step({
        sessionId: 'hand',
        requestId: 'r',
        step: 0,
        promptIndex: 0,
        modelStepIndex: input.messages.length === 1 ? 0 : 1,
        ...(input.messages.length === 1 && first?.role === 'user' ? { prompt: first.content } : {}),
        messages: input.messages,
        tools: [],
        signal: Context.current().cancellationSignal,
      });
      return { text: output.text, ...(output.toolCalls ? { toolCalls: output.toolCalls } : {}) };
    },
    async mcpCall(input: { server: string; tool: string; args: JsonObject; list: boolean }) {
      const ctx = Context.current();
      ctx.heartbeat();
      if (input.list) {
        const { tools } = await mcpClient.listTools(undefined, { signal: ctx.cancellationSignal });
        if (!tools.some((t) => t.name === input.tool)) throw new Error(`no tool ${input.tool}`);
      }
      const result = await mcpClient.callTool(
        { name: input.tool, arguments: input.args },
        undefined,
        {
          signal: ctx.cancellationSignal,
          onprogress: (progress) => ctx.heartbeat(progress),
          resetTimeoutOnProgress: true,
        },
      );
      const content = (result.content ?? []) as Array<{ type: string; text?: string }>;
      const text = content.map((part) => part.text ?? '').join('');
      return { status: result.isError ? ('error' as const) : ('success' as const), model: text };
    },
  },
  maxHeartbeatThrottleInterval: DEFAULTS.heartbeatIntervalMs,
  defaultHeartbeatThrottleInterval: DEFAULTS.heartbeatIntervalMs,
  ...(handDeployment
    ? {
        workerDeploymentOptions: {
          version: handDeployment,
          useWorkerVersioning: true,
          defaultVersioningBehavior: 'PINNED',
        } as const,
      }
    : {}),
});
const handRunning = handWorker.run();
const clientConnection = await Connection.connect({ address: server.address });
const client = new Client({ connection: clientConnection });

const sendOurs = () =>
  oursSender(agent, ROTATE, (response) => {
    if (response.text() !== 'ok' || response.toolCalls[0]?.status !== 'success') {
      throw new Error(`send: ${response.status} ${response.text()}`);
    }
  });
const sendHand = (list: boolean) =>
  handSender({
    client,
    taskQueue: handQueue,
    deployment: handDeployment,
    workflowType: 'benchMcpSession',
    workflowIdPrefix: 'hand-mcp',
    args: [{ agentName: 'mcp-hand', server: SERVER, list }],
    update: 'mcpSend',
    expect: 'ok',
    rotateEvery: ROTATE,
  });

const p = percentile;
const row = (label: string, a: number[], b: number[], target = ''): string[] => [
  label,
  `${fmt(p(a, 50))} / ${fmt(p(b, 50))}`,
  `${fmt(p(a, 95))} / ${fmt(p(b, 95))}`,
  `${fmt(p(a, 50) / p(b, 50), 2)} / ${fmt(p(a, 95) / p(b, 95), 2)}`,
  target,
];

async function latency(): Promise<string[][]> {
  const series = [
    { name: 'ours', sender: await sendOurs(), times: [] as number[] },
    { name: 'hand', sender: await sendHand(false), times: [] as number[] },
    ...(WITH_LIST
      ? [{ name: 'hand+list', sender: await sendHand(true), times: [] as number[] }]
      : []),
  ];
  await sendInterleaved(series, N, WARMUP);
  // History per send: one more send on each side, its events and bytes; then BREAKDOWN
  // more, interleaved, whose events say where each side's time went.
  const sizes: string[] = [];
  const from: number[] = [];
  for (const s of series) {
    const before = await historySize(client, s.sender.workflowId());
    await s.sender.send('history');
    const after = await historySize(client, s.sender.workflowId());
    sizes.push(`${after.events - before.events} / ${after.bytes - before.bytes}`);
    from.push(after.events);
  }
  // The wall clock (this machine's, the server's too) around each of those sends.
  const spans = series.map(() => [] as Array<[number, number]>);
  for (let i = 0; i < BREAKDOWN; i++) {
    for (const [k, s] of series.entries()) {
      const t0 = Date.now();
      await s.sender.send(`b${i}`);
      spans[k]!.push([t0, Date.now()]);
    }
  }
  const breakdown: string[][] = [];
  for (const [k, s] of series.entries()) {
    const events = (await client.workflow.getHandle(s.sender.workflowId()).fetchHistory()).events;
    breakdown.push(...where(s.name, (events ?? []).slice(from[k]), spans[k]!));
  }
  await Promise.all(series.map((s) => s.sender.close()));
  if (SAVE) {
    // The last session of each side, for bench/mcp-replay.ts.
    mkdirSync(SAVE, { recursive: true });
    for (const s of series) {
      const history = await client.workflow.getHandle(s.sender.workflowId()).fetchHistory();
      writeFileSync(join(SAVE, `${s.name}.json`), historyToJSON(history) + '\n');
    }
    console.log(`histories saved in ${SAVE}`);
  }
  const [ours, hand, listed] = series.map((s) => s.times);
  latencyBreakdown = breakdown;
  return [
    row('send with one MCP call (ms): ours / hand-written', ours!, hand!, 'p50 <= 1.10'),
    ...(listed ? [row('ours / hand-written listing before each call', ours!, listed)] : []),
    ...(listed ? [row('hand-written listing / not listing', listed, hand!)] : []),
    [
      'history per send, events / bytes: ' + series.map((s) => s.name).join('; '),
      sizes.join('; '),
      '',
      '',
      '',
    ],
  ];
}

type HistoryEvent = NonNullable<proto.temporal.api.history.v1.IHistory['events']>[number];
const { EventType } = proto.temporal.api.enums.v1;
const millis = (event: HistoryEvent): number =>
  Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
let latencyBreakdown: string[][] = [];

/**
 * Where a side's sends spent their time, from `sends` sends' events (server timestamps):
 * per activity type, how many a send ran, p50 from scheduled to started (the queue) and from
 * started to completed (the worker); per send, its workflow tasks (scheduled to completed)
 * and the time from the send's start to the Update's acceptance (the first workflow task), to
 * its completion, and from there to the send's return (this machine's clock is the server's).
 */
function where(
  side: string,
  events: HistoryEvent[],
  spans: ReadonlyArray<[start: number, end: number]>,
): string[][] {
  const sends = spans.length;
  const before: number[] = [];
  const after: number[] = [];
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const activities = new Map<string, { queue: number[]; run: number[] }>();
  const tasks: number[] = [];
  const updates: number[] = [];
  let accepted: number | undefined;
  for (const event of events) {
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const a = event.activityTaskCompletedEventAttributes!;
      const scheduled = byId.get(Number(a.scheduledEventId));
      const started = byId.get(Number(a.startedEventId));
      if (!scheduled || !started) continue;
      const name = scheduled.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
      const entry = activities.get(name) ?? { queue: [], run: [] };
      entry.queue.push(millis(started) - millis(scheduled));
      entry.run.push(millis(event) - millis(started));
      activities.set(name, entry);
    } else if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      const scheduled = byId.get(
        Number(event.workflowTaskCompletedEventAttributes?.scheduledEventId),
      );
      if (scheduled) tasks.push(millis(event) - millis(scheduled));
    } else if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
      accepted = millis(event);
    } else if (
      event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED &&
      accepted !== undefined
    ) {
      const span = spans[updates.length];
      if (span) {
        before.push(accepted - span[0]);
        after.push(span[1] - millis(event));
      }
      updates.push(millis(event) - accepted);
      accepted = undefined;
    }
  }
  const rows = [...activities].map(([name, { queue, run }]) => [
    `${side}: ${name} x${fmt(queue.length / sends, 1)} a send, queue / run (ms)`,
    `${fmt(p(queue, 50))} / ${fmt(p(run, 50))}`,
    `${fmt(p(queue, 95))} / ${fmt(p(run, 95))}`,
    '',
    '',
  ]);
  return [
    ...rows,
    [
      `${side}: workflow tasks x${fmt(tasks.length / sends, 1)} a send, scheduled to completed (ms)`,
      fmt(p(tasks, 50)),
      fmt(p(tasks, 95)),
      '',
      '',
    ],
    [
      `${side}: send's start to the Update accepted (ms)`,
      fmt(p(before, 50)),
      fmt(p(before, 95)),
      '',
      '',
    ],
    [
      `${side}: Update accepted to completed (ms)`,
      fmt(p(updates, 50)),
      fmt(p(updates, 95)),
      '',
      '',
    ],
    [
      `${side}: Update completed to the send's return (ms)`,
      fmt(p(after, 50)),
      fmt(p(after, 95)),
      '',
      '',
    ],
  ];
}

/** The MCP requests alone, outside Temporal, interleaved: what each costs on this machine. */
async function requests(): Promise<string[][]> {
  const ours = new McpConnections({ [SERVER]: serverCommand }, { env: {} });
  await ours.listTools(SERVER);
  const times = { ourList: [] as number[], bareList: [] as number[], call: [] as number[] };
  let count = 0;
  for (let i = 0; i < N + WARMUP; i++) {
    const t0 = now();
    count = (await ours.listTools(SERVER)).length;
    const t1 = now();
    await mcpClient.listTools();
    const t2 = now();
    await mcpClient.callTool({ name: TOOL, arguments: { message: `m${i}` } });
    const t3 = now();
    if (i < WARMUP) continue;
    times.ourList.push(t1 - t0);
    times.bareList.push(t2 - t1);
    times.call.push(t3 - t2);
  }
  await ours.close();
  const one = (label: string, values: number[]): string[] => [
    label,
    fmt(p(values, 50), 2),
    fmt(p(values, 95), 2),
    '',
    '',
  ];
  return [
    one(`tools/list (${count} tools) through McpConnections (ms)`, times.ourList),
    one('tools/list through a bare client (ms)', times.bareList),
    one(`tools/call ${TOOL} through a bare client (ms)`, times.call),
  ];
}

try {
  const header = ['measure', 'p50', 'p95', 'ratio p50 / p95', 'target'];
  printTable('MCP: a tool call of ours against a hand-written activity', header, await latency());
  printTable('Where the time went (server timestamps)', header, latencyBreakdown);
  printTable('MCP requests alone, outside Temporal', header, await requests());
  console.log(`\nload at the end ${load()}`);
} finally {
  await agent.shutdown();
  handWorker.shutdown();
  await handRunning;
  await mcpClient.close();
  await nativeConnection.close();
  await clientConnection.close();
  await server.stop();
}
