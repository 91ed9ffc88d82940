/**
 * The hot path (issue 19): a send of ours against the same work written by hand on Temporal,
 * side by side in one run on one dev server started with the package's tuned flags.
 *
 * - per-send latency, interleaved series: no hooks, one hook (UserPromptSubmit), three hooks
 *   (two on UserPromptSubmit, one on TaskCompleted: two dispatch activities, since the
 *   callbacks of one event share one), each against `handWrittenSession`
 *   (bench/workflows/) running the same `dispatchHook` activity and the same model;
 * - throughput: 100 concurrent sessions x 10 sends (one hook), ours, ours with `turnStatus`
 *   (the status search attribute upserted at every turn's start and end), ours with a 10 s
 *   sticky timeout and the baseline, in turn, with the CPU this process (clients and
 *   workers) and the server used, and the workflow tasks that timed out on the sticky queue;
 * - a UserPromptSubmit hook dispatched inline (`hookDispatch: { UserPromptSubmit: 'inline' }`)
 *   and as a local activity (`hookDispatch: 'local'`) against the default;
 * - the same for a PostToolUse hook (part `tool`: each send makes one call of a tool that does
 *   nothing), inline (`{ PostToolUse: 'inline' }`: in the tool's activity), local and default;
 * - one session of 2,500 sends (BENCH_LONG_SENDS), left to roll over by itself: the median
 *   latency of its last 100 sends against its first 100 after warm-up, each send paired with
 *   one to a session rotated every BENCH_ROTATE sends, whose same ratio is the machine's
 *   drift over the part (the target is on the session's ratio over the drift).
 *
 * Every session is rotated after BENCH_ROTATE sends (default 100), so no run holds more
 * than a few hundred Updates (Update latency grows with their number in one run).
 *
 *   npm run bench:hotpath     (BENCH_SENDS=200 per series; BENCH_ADDRESS to reuse a server)
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { promiseHooks } from 'node:v8';
import proto from '@temporalio/proto';
import { Context } from '@temporalio/activity';
import { createHookActivities } from '../activities/hook-dispatch.js';
import { DEFAULTS } from '../src/common/defaults.js';
import {
  createAgent,
  defineTool,
  HookEvent,
  type HookDispatchMode,
  type HookMap,
  type Session,
} from '../src/index.js';
import { AgentRegistry } from '../src/definition/registry.js';
import { startDevServer } from '../src/server/dev-server.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { workflowBundle } from '../src/worker/workflow-code.js';
import { processCacheStats } from '../activities/conversation-cache.js';
import { scriptedModel } from '../src/testing/index.js';
import { z } from 'zod';
import type { ConversationMessage } from '../src/common/conversation.js';
import { benchAgentOptions } from './bench-agent.js';
import { fmt, percentile, printTable } from './stats.js';
import { testIdentity } from '../test/helpers/registry-identity.js';

const here = dirname(fileURLToPath(import.meta.url));
const SENDS = Number(process.env.BENCH_SENDS ?? 200);
const ROTATE = Number(process.env.BENCH_ROTATE ?? 100);
const TP_SESSIONS = Number(process.env.BENCH_TP_SESSIONS ?? 100);
const TP_SENDS = Number(process.env.BENCH_TP_SENDS ?? 10);
const TP_ROUNDS = Number(process.env.BENCH_TP_ROUNDS ?? 2);
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
/** The parts to run (`counts,promises,latency,throughput,local,tool,long`; all by default). */
const PARTS = process.env.BENCH_PARTS?.split(',');
const want = (part: string) => !PARTS || PARTS.includes(part);
const now = () => performance.now();
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const continueHook = async () => ({ action: 'continue' as const });
/** The hook sets of the series, as session hooks (ours) and callback counts (baseline). */
const HOOKS = {
  none: {} as HookMap,
  one: { [HookEvent.UserPromptSubmit]: [continueHook] } as HookMap,
  three: {
    [HookEvent.UserPromptSubmit]: [continueHook, continueHook],
    [HookEvent.TaskCompleted]: [continueHook],
  } as HookMap,
};
type HookSet = keyof typeof HOOKS;

installQuietRuntime('ERROR');
const quietLogger = new DefaultLogger('ERROR');
const server = process.env.BENCH_ADDRESS
  ? { address: process.env.BENCH_ADDRESS, pid: -1, stop: async () => undefined }
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
console.log(
  `server ${server.address}; ${SENDS} sends per series, rotated every ${ROTATE}; ` +
    `throughput ${TP_SESSIONS} sessions x ${TP_SENDS} sends x ${TP_ROUNDS} rounds; ` +
    `load ${load()}; ${new Date().toISOString()}`,
);

// The baseline's worker: the same dispatch activity and the same model.
const model = scriptedModel(() => 'ok', { keepRequests: 1 });
const registry = new AgentRegistry();
for (const [name, hooks] of Object.entries(HOOKS)) {
  registry.register({
    name,
    hooks,
    model,
    tools: [],
    workspaceRoots: [],
    maxToolOutputBytes: 65_536,
    ...testIdentity,
  });
}
const hookActivities = createHookActivities({
  registry,
  cleanupQueue: 'unused',
  heartbeatIntervalMs: DEFAULTS.heartbeatIntervalMs,
});
// Ours: one agent (client and worker in this process), hooks given per session.
const agent = await createAgent(
  benchAgentOptions(server.address, `bench-ours-${randomUUID()}`, {}),
);
/** Ours with the status search attribute following every turn (`turnStatus`), for throughput. */
const turnsAgent = want('throughput')
  ? await createAgent(
      benchAgentOptions(server.address, `bench-turns-${randomUUID()}`, {}, undefined, {
        turnStatus: true,
      }),
    )
  : undefined;
/**
 * Ours with 200 workflow task slots instead of Temporal's 40, for throughput: whether a worker
 * that takes more of its sessions' tasks at once keeps them off the sticky queue's timeout.
 */
const slots200Agent = want('throughput')
  ? await createAgent(
      benchAgentOptions(server.address, `bench-slots200-${randomUUID()}`, {}, undefined, {
        maxConcurrentWorkflowTaskExecutions: 200,
      }),
    )
  : undefined;
/**
 * Ours with Temporal's default sticky schedule-to-start timeout (10 s) instead of the 1 s ours
 * keeps for recovery (issue 19, item 4), for throughput: what that setting costs under load.
 */
const sticky10Agent = want('throughput')
  ? await createAgent(
      benchAgentOptions(server.address, `bench-sticky10-${randomUUID()}`, {}, undefined, {
        stickyQueueScheduleToStartTimeoutMs: 10_000,
      }),
    )
  : undefined;

/** Ours with a tool: each send makes one call of `Noop`, then answers (the `tool` part). */
const toolAgent = want('tool')
  ? await createAgent({
      ...benchAgentOptions(server.address, `bench-tool-${randomUUID()}`, {}),
      model: scriptedModel((request) =>
        request.messages.at(-1)?.role === 'tool'
          ? 'ok'
          : { toolCalls: [{ toolName: 'Noop', input: {} }] },
      ),
      tools: [
        defineTool({
          name: 'Noop',
          description: 'Does nothing',
          kind: 'readonly',
          inputSchema: z.object({}),
          execute: async () => 'done',
        }),
      ],
    })
  : undefined;

/**
 * The baseline routes as ours does: where our agent runs on Worker Deployments (the default
 * `'auto'` on this server), the hand-written worker is a deployment version too and its
 * workflows are pinned to it (Temporal then dispatches no activity eagerly, for either side);
 * with `BENCH_VERSIONING=off` both are unversioned.
 */
const handDeployment =
  agent.worker.versioning === 'deployments'
    ? { deploymentName: `bench-hand-${randomUUID().slice(0, 8)}`, buildId: 'v1' }
    : undefined;
const handQueue = `bench-hand-${randomUUID()}`;
console.log(`routing: ${agent.worker.versioning}, ours and the baseline`);
const nativeConnection = await NativeConnection.connect({ address: server.address });
const handWorker = await Worker.create({
  connection: nativeConnection,
  taskQueue: handQueue,
  workflowsPath: join(here, 'workflows', 'index.ts'),
  activities: {
    dispatchHook: hookActivities.dispatchHook,
    async noop() {},
    async handModelStep(input: { agentName: string; messages: ConversationMessage[] }) {
      const output = await registry.agent(input.agentName).model.step({
        sessionId: 'hand',
        requestId: 'r',
        step: 0,
        promptIndex: 0,
        modelStepIndex: 0,
        messages: input.messages,
        tools: [],
        signal: Context.current().cancellationSignal,
      });
      return output.text;
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

/** Something that sends: a session of ours or a baseline workflow, rotated every ROTATE sends. */
/** A sender and the workflow id of its current run's session (for its history). */
interface Sender {
  /** One send (what the series time). */
  send(prompt: string): Promise<void>;
  /** After every ROTATE sends, close the run and open another (not timed). */
  rotate(): Promise<void>;
  close(): Promise<void>;
  workflowId(): string;
}

async function oursSender(
  hooks: HookMap,
  dispatch?: HookDispatchMode,
  of = agent,
): Promise<Sender> {
  const open = () => of.createSession({ hooks, ...(dispatch ? { hookDispatch: dispatch } : {}) });
  let session: Session = await open();
  let sent = 0;
  return {
    async send(prompt) {
      const result = await session.send(prompt);
      if (result.status !== 'completed') throw new Error(`send ${result.status}`);
      sent++;
    },
    async rotate() {
      if (sent === 0 || sent % ROTATE !== 0) return;
      await session.close();
      session = await open();
    },
    close: () => session.close().then(() => undefined),
    workflowId: () => session.workflowId,
  };
}

async function handSender(hookSet: HookSet, dispatch?: 'local' | 'local-noop'): Promise<Sender> {
  const counts = {
    UserPromptSubmit: HOOKS[hookSet][HookEvent.UserPromptSubmit]?.length ?? 0,
    TaskCompleted: HOOKS[hookSet][HookEvent.TaskCompleted]?.length ?? 0,
  };
  const start = () =>
    client.workflow.start('handWrittenSession', {
      taskQueue: handQueue,
      workflowId: `hand-${randomUUID()}`,
      args: [
        {
          agentName: hookSet,
          hookCounts: counts,
          localDispatch: dispatch === 'local',
          localNoop: dispatch === 'local-noop',
        },
      ],
      ...(handDeployment ? { versioningOverride: { pinnedTo: handDeployment } } : {}),
    });
  // A worker version is known to the server about a second after its worker starts.
  const open = async (): Promise<WorkflowHandle> => {
    for (let tries = 0; ; tries++) {
      try {
        return await start();
      } catch (error) {
        if (!handDeployment || tries >= 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  let handle: WorkflowHandle = await open();
  let sent = 0;
  return {
    async send(prompt) {
      await handle.executeUpdate('handSend', { args: [prompt] });
      sent++;
    },
    async rotate() {
      if (sent === 0 || sent % ROTATE !== 0) return;
      await handle.executeUpdate('stop');
      handle = await open();
    },
    close: () => handle.executeUpdate('stop').then(() => undefined),
    workflowId: () => handle.workflowId,
  };
}

async function latencySeries(): Promise<string[][]> {
  const series: Array<{ name: string; sender: Sender; times: number[] }> = [];
  for (const hookSet of ['none', 'one', 'three'] as const) {
    series.push({ name: `ours, ${hookSet}`, sender: await oursSender(HOOKS[hookSet]), times: [] });
    series.push({ name: `hand, ${hookSet}`, sender: await handSender(hookSet), times: [] });
  }
  const warmup = 10;
  for (let i = 0; i < SENDS + warmup; i++) {
    for (const s of series) {
      const t0 = now();
      await s.sender.send(`p${i}`);
      if (i >= warmup) s.times.push(now() - t0);
      await s.sender.rotate();
    }
  }
  await Promise.all(series.map((s) => s.sender.close()));
  const rows: string[][] = [];
  for (let i = 0; i < series.length; i += 2) {
    const ours = series[i]!;
    const hand = series[i + 1]!;
    const p = (v: number[], q: number) => percentile(v, q);
    rows.push([
      `send, ${ours.name.slice(6)} hooks: ours / hand-written (ms)`,
      `${fmt(p(ours.times, 50))} / ${fmt(p(hand.times, 50))}`,
      `${fmt(p(ours.times, 99))} / ${fmt(p(hand.times, 99))}`,
      `${fmt(p(ours.times, 50) / p(hand.times, 50), 2)} / ${fmt(p(ours.times, 99) / p(hand.times, 99), 2)}`,
      'p50 <= 1.10',
    ]);
  }
  return rows;
}

function serverCpuMs(): number {
  if (server.pid <= 0) return NaN;
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, in clock ticks (100 a second here).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function throughput(): Promise<string[][]> {
  const kinds = ['ours', 'turns', 'sticky10', 'slots200', 'hand'] as const;
  type Kind = (typeof kinds)[number];
  const series = () => ({
    ours: [] as number[],
    turns: [] as number[],
    sticky10: [] as number[],
    slots200: [] as number[],
    hand: [] as number[],
  });
  const results = series();
  const cpu = series();
  const serverCpu = series();
  /** The workflow ids of each series' sessions, to count timed-out workflow tasks after. */
  const ids = { ours: [], turns: [], sticky10: [], slots200: [], hand: [] } as Record<
    Kind,
    string[]
  >;
  // Model steps of ours that read this worker's conversation cache, and those that queried.
  const cache0 = { ...processCacheStats };
  const sender = (kind: Kind) =>
    kind === 'ours'
      ? oursSender(HOOKS.one)
      : kind === 'turns'
        ? oursSender(HOOKS.one, undefined, turnsAgent)
        : kind === 'sticky10'
          ? oursSender(HOOKS.one, undefined, sticky10Agent)
          : kind === 'slots200'
            ? oursSender(HOOKS.one, undefined, slots200Agent)
            : handSender('one');
  for (let round = 0; round < TP_ROUNDS; round++) {
    for (const kind of kinds) {
      const senders = await Promise.all(Array.from({ length: TP_SESSIONS }, () => sender(kind)));
      const cpu0 = process.cpuUsage();
      const server0 = serverCpuMs();
      const t0 = now();
      await Promise.all(
        senders.map(async (s) => {
          for (let i = 0; i < TP_SENDS; i++) {
            await s.send(`t${i}`);
            await s.rotate();
          }
        }),
      );
      const wall = now() - t0;
      const used = process.cpuUsage(cpu0);
      const sends = TP_SESSIONS * TP_SENDS;
      results[kind].push((sends / wall) * 1000);
      cpu[kind].push((used.user + used.system) / 1000 / sends);
      serverCpu[kind].push((serverCpuMs() - server0) / sends);
      ids[kind].push(...senders.map((s) => s.workflowId()));
      await Promise.all(senders.map((s) => s.close()));
    }
  }
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  /** One row: `of` against the hand-written series. */
  const row = (
    label: string,
    of: Record<Kind, number[]>,
    against: Kind,
    digits: number,
    target = '',
  ) => [
    label,
    `${fmt(mean(of[against]), digits)} / ${fmt(mean(of.hand), digits)}`,
    '',
    fmt(mean(of[against]) / mean(of.hand), 2),
    target,
  ];
  const tp = `${TP_SESSIONS} sessions x ${TP_SENDS} sends, one hook`;
  // Workflow tasks that waited out the sticky schedule-to-start timeout (then replayed).
  const stickyTimeouts = async (kind: Kind) => {
    let timedOut = 0;
    for (const workflowId of ids[kind]) {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      for (const event of history.events ?? []) {
        const type = event.workflowTaskTimedOutEventAttributes?.timeoutType;
        if (type === proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) {
          timedOut++;
        }
      }
    }
    return timedOut;
  };
  const timeouts = {
    ours: await stickyTimeouts('ours'),
    slots200: await stickyTimeouts('slots200'),
    sticky10: await stickyTimeouts('sticky10'),
    hand: await stickyTimeouts('hand'),
  };
  const sendsPerSeries = TP_ROUNDS * TP_SESSIONS * TP_SENDS;
  return [
    [
      'workflow tasks timed out on the sticky queue, per 100 sends: ours / 200 slots / sticky 10 s / hand',
      [timeouts.ours, timeouts.slots200, timeouts.sticky10, timeouts.hand]
        .map((n) => fmt((n * 100) / sendsPerSeries, 1))
        .join(' / '),
      '',
      '',
      '',
    ],
    row(`throughput, ${tp}: ours / hand (sends/s)`, results, 'ours', 1, '>= 0.90'),
    row('CPU per send, this process (clients + workers): ours / hand (ms)', cpu, 'ours', 2),
    row('CPU per send, Temporal server: ours / hand (ms)', serverCpu, 'ours', 2),
    row(`throughput, ${tp}, turnStatus: ours / hand (sends/s)`, results, 'turns', 1),
    row('CPU per send, Temporal server, turnStatus: ours / hand (ms)', serverCpu, 'turns', 2),
    row(
      `throughput, ${tp}, 200 workflow task slots: ours / hand (sends/s)`,
      results,
      'slots200',
      1,
    ),
    row(
      'CPU per send, Temporal server, 200 workflow task slots: ours / hand (ms)',
      serverCpu,
      'slots200',
      2,
    ),
    row(`throughput, ${tp}, sticky timeout 10 s: ours / hand (sends/s)`, results, 'sticky10', 1),
    row('CPU per send, this process, sticky timeout 10 s: ours / hand (ms)', cpu, 'sticky10', 2),
    row(
      'CPU per send, Temporal server, sticky timeout 10 s: ours / hand (ms)',
      serverCpu,
      'sticky10',
      2,
    ),
    [
      'model steps of ours in this part: context from the worker cache / by query',
      `${processCacheStats.hits - cache0.hits} / ${processCacheStats.misses - cache0.misses}`,
      '',
      '',
      '',
    ],
  ];
}

async function localDispatch(): Promise<string[][]> {
  const series = {
    inline: await oursSender(HOOKS.one, { UserPromptSubmit: 'inline' }),
    local: await oursSender(HOOKS.one, 'local'),
    remote: await oursSender(HOOKS.one),
    none: await oursSender(HOOKS.none),
    handLocal: await handSender('one', 'local'),
    handNoop: await handSender('one', 'local-noop'),
    handNone: await handSender('none'),
  };
  type Name = keyof typeof series;
  const names = Object.keys(series) as Name[];
  const { times, runs } = await sendInterleaved(series, 'l');
  // The workers' side, read from history: workflow-task time (started to completed) per send.
  const taskMs: Partial<Record<Name, number>> = {};
  for (const name of names) {
    const spans = (await Promise.all([...runs[name]].map(workflowTaskSpans))).flat();
    taskMs[name] = spans.reduce((a, b) => a + b, 0) / (SENDS + 10);
  }
  // The dispatch's own cost: the send with the hook minus the send without (per sample pair).
  const cost = (withHook: number[], without: number[]) => withHook.map((t, i) => t - without[i]!);
  const [inline, local, remote, handLocal, floor] = [
    cost(times.inline, times.none),
    cost(times.local, times.none),
    cost(times.remote, times.none),
    cost(times.handLocal, times.handNone),
    cost(times.handNoop, times.handNone),
  ];
  return [
    [
      'one hook dispatch, local activity / default activity (send ms)',
      `${fmt(percentile(times.local, 50))} / ${fmt(percentile(times.remote, 50))}`,
      `${fmt(percentile(times.local, 99))} / ${fmt(percentile(times.remote, 99))}`,
      fmt(percentile(times.local, 50) / percentile(times.remote, 50), 2),
      '',
    ],
    [
      'one hook dispatch, inline / default activity (send ms)',
      `${fmt(percentile(times.inline, 50))} / ${fmt(percentile(times.remote, 50))}`,
      `${fmt(percentile(times.inline, 99))} / ${fmt(percentile(times.remote, 99))}`,
      fmt(percentile(times.inline, 50) / percentile(times.remote, 50), 2),
      '',
    ],
    [
      'the dispatch alone (send with hook - send without, paired): inline / default (ms)',
      `${fmt(percentile(inline, 50))} / ${fmt(percentile(remote, 50))}`,
      `${fmt(percentile(inline, 99))} / ${fmt(percentile(remote, 99))}`,
      '',
      'inline p50 <= 5',
    ],
    [
      'the dispatch alone (send with hook - send without, paired): local / default (ms)',
      `${fmt(percentile(local, 50))} / ${fmt(percentile(remote, 50))}`,
      `${fmt(percentile(local, 99))} / ${fmt(percentile(remote, 99))}`,
      '',
      '',
    ],
    [
      'a local dispatch alone, paired as above: ours / hand-written (ms)',
      `${fmt(percentile(local, 50))} / ${fmt(percentile(handLocal, 50))}`,
      `${fmt(percentile(local, 99))} / ${fmt(percentile(handLocal, 99))}`,
      fmt(percentile(local, 50) / percentile(handLocal, 50), 2),
      '',
    ],
    [
      'a local dispatch alone: ours / a no-op local activity (ms; the floor here)',
      `${fmt(percentile(local, 50))} / ${fmt(percentile(floor, 50))}`,
      `${fmt(percentile(local, 99))} / ${fmt(percentile(floor, 99))}`,
      fmt(percentile(local, 50) / percentile(floor, 50), 2),
      '',
    ],
    [
      'workflow-task time a local dispatch adds per send (history): ours / hand-written (ms)',
      `${fmt(taskMs.local! - taskMs.none!, 2)} / ${fmt(taskMs.handLocal! - taskMs.handNone!, 2)}`,
      '',
      fmt((taskMs.local! - taskMs.none!) / (taskMs.handLocal! - taskMs.handNone!), 2),
      '',
    ],
  ];
}

/**
 * SENDS + 10 sends of each series, interleaved one send of each at a time (prompts
 * `<prefix><i>`), then every sender closed.
 * @returns per series: the times of its sends after the first 10 (warm-up), ms, and the
 *   workflow ids of its sessions (one per rotation).
 */
async function sendInterleaved<Name extends string>(
  series: Record<Name, Sender>,
  prefix: string,
): Promise<{ times: Record<Name, number[]>; runs: Record<Name, Set<string>> }> {
  const names = Object.keys(series) as Name[];
  const times = {} as Record<Name, number[]>;
  const runs = {} as Record<Name, Set<string>>;
  for (const name of names) [times[name], runs[name]] = [[], new Set()];
  for (let i = 0; i < SENDS + 10; i++) {
    for (const name of names) {
      const sender = series[name];
      const t0 = now();
      await sender.send(`${prefix}${i}`);
      if (i >= 10) times[name].push(now() - t0);
      runs[name].add(sender.workflowId());
      await sender.rotate();
    }
  }
  await Promise.all(Object.values<Sender>(series).map((s) => s.close()));
  return { times, runs };
}

/**
 * A PostToolUse dispatch's own cost, inline in the tool's activity, as a local activity and
 * by default: sends that each make one tool call, with the hook and without (paired).
 */
async function toolDispatch(): Promise<string[][]> {
  const of = toolAgent!;
  const hooks = { [HookEvent.PostToolUse]: [continueHook] } as HookMap;
  const series = {
    inline: await oursSender(hooks, { PostToolUse: 'inline' }, of),
    local: await oursSender(hooks, 'local', of),
    remote: await oursSender(hooks, undefined, of),
    none: await oursSender(HOOKS.none, undefined, of),
  };
  const names = Object.keys(series) as Array<keyof typeof series>;
  const { times } = await sendInterleaved(series, 't');
  const cost = (withHook: number[]) => withHook.map((t, i) => t - times.none[i]!);
  const [inline, local, remote] = [cost(times.inline), cost(times.local), cost(times.remote)];
  return [
    [
      'a send with one tool call: no hook / PostToolUse inline / local / default (ms)',
      names.map((n) => fmt(percentile(times[n], 50))).join(' / '),
      names.map((n) => fmt(percentile(times[n], 99))).join(' / '),
      '',
      '',
    ],
    [
      'a PostToolUse dispatch alone (paired): inline / local / default (ms)',
      [inline, local, remote].map((t) => fmt(percentile(t, 50))).join(' / '),
      [inline, local, remote].map((t) => fmt(percentile(t, 99))).join(' / '),
      fmt(percentile(inline, 50) / percentile(remote, 50), 2),
      'inline p50 <= 5',
    ],
  ];
}

/**
 * One session of ours, never rotated by the benchmark: it rolls over by itself (every 200
 * Updates). The median of the last ten sends against the median of sends 10 to 20.
 */
async function longSession(): Promise<string[][]> {
  const sends = Number(process.env.BENCH_LONG_SENDS ?? 2500);
  const window = Math.min(100, Math.floor(sends / 4));
  const session = await agent.createSession();
  // Each send of the long session is paired with one of a session rotated every ROTATE sends
  // (never more than a few hundred Updates in a run), so a machine that slows down or speeds
  // up over the minutes of the part moves both alike.
  const control = await oursSender(HOOKS.none);
  const times: number[] = [];
  const controlTimes: number[] = [];
  for (let i = 0; i < sends; i++) {
    let t0 = now();
    const result = await session.send(`n${i}`);
    if (result.status !== 'completed') throw new Error(`send ${i}: ${result.status}`);
    times.push(now() - t0);
    t0 = now();
    await control.send(`c${i}`);
    controlTimes.push(now() - t0);
    await control.rotate();
  }
  await Promise.all([session.close(), control.close()]);
  // Medians of the first `window` sends after ten of warm-up, and of the last `window`.
  const early = (of: number[]) => percentile(of.slice(10, 10 + window), 50);
  const late = (of: number[]) => percentile(of.slice(sends - window), 50);
  const growth = late(times) / early(times);
  const controlGrowth = late(controlTimes) / early(controlTimes);
  return [
    [
      `one session, ${sends} sends, no hooks: median of the last ${window} / of sends 11-${10 + window} (ms)`,
      `${fmt(late(times))} / ${fmt(early(times))}`,
      '',
      fmt(growth, 2),
      '',
    ],
    [
      `the same, paired sends to sessions rotated every ${ROTATE} (the machine's drift) (ms)`,
      `${fmt(late(controlTimes))} / ${fmt(early(controlTimes))}`,
      '',
      fmt(controlGrowth, 2),
      '',
    ],
    [
      `one session, ${sends} sends: its growth over the rotated sessions' (ratio of the two above)`,
      '',
      '',
      fmt(growth / controlGrowth, 2),
      '<= 1.20',
    ],
  ];
}

/**
 * What one send costs in Temporal's terms, ours against the baseline per hook set: history
 * events per send by type (workflow tasks, activities, markers, Updates) and CPU per send of
 * this process (clients and workers), sends one at a time, interleaved in blocks of ten.
 */
async function counts(): Promise<string[][]> {
  const n = Math.min(SENDS, ROTATE - 10);
  const rows: string[][] = [];
  for (const hookSet of ['none', 'one', 'three'] as const) {
    const pair = [
      {
        name: 'ours',
        sender: await oursSender(HOOKS[hookSet]),
        cpu: 0,
        threads: new Map<string, number>(),
      },
      {
        name: 'hand',
        sender: await handSender(hookSet),
        cpu: 0,
        threads: new Map<string, number>(),
      },
    ];
    for (const s of pair) await s.sender.send('warm');
    const before = await Promise.all(pair.map((s) => eventCounts(s.sender.workflowId())));
    for (let block = 0; block < n; block += 10) {
      for (const s of pair) {
        const cpu0 = process.cpuUsage();
        const threads0 = threadCpuMs();
        for (let i = block; i < Math.min(n, block + 10); i++) await s.sender.send(`c${i}`);
        const used = process.cpuUsage(cpu0);
        s.cpu += (used.user + used.system) / 1000;
        for (const [name, ms] of threadCpuMs()) {
          s.threads.set(name, (s.threads.get(name) ?? 0) + ms - (threads0.get(name) ?? 0));
        }
      }
    }
    const after = await Promise.all(pair.map((s) => eventCounts(s.sender.workflowId())));
    await Promise.all(pair.map((s) => s.sender.close()));
    const perSend = pair.map((_, k) => {
      const diff = new Map<string, number>();
      for (const [type, count] of after[k]!.counts)
        diff.set(type, (count - (before[k]!.counts.get(type) ?? 0)) / n);
      return diff;
    });
    // Bytes of history per send: what the server writes and keeps for each.
    const bytes = pair.map((_, k) => (after[k]!.bytes - before[k]!.bytes) / n);
    const types = [...new Set([...perSend[0]!.keys(), ...perSend[1]!.keys()])].sort();
    const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    rows.push([
      `${hookSet} hooks: history events per send, ours / hand`,
      `${fmt(total(perSend[0]!), 2)} / ${fmt(total(perSend[1]!), 2)}`,
      '',
      fmt(total(perSend[0]!) / total(perSend[1]!), 2),
      '',
    ]);
    for (const type of types) {
      const [a, b] = [perSend[0]!.get(type) ?? 0, perSend[1]!.get(type) ?? 0];
      rows.push([`  ${type}`, `${fmt(a, 2)} / ${fmt(b, 2)}`, '', '', a === b ? '' : 'differs']);
    }
    rows.push([
      `${hookSet} hooks: history bytes per send, ours / hand`,
      `${fmt(bytes[0]!, 0)} / ${fmt(bytes[1]!, 0)}`,
      '',
      fmt(bytes[0]! / bytes[1]!, 2),
      '',
    ]);
    rows.push([
      `${hookSet} hooks: CPU per send, this process, one at a time (ms), ours / hand`,
      `${fmt(pair[0]!.cpu / n, 2)} / ${fmt(pair[1]!.cpu / n, 2)}`,
      '',
      fmt(pair[0]!.cpu / pair[1]!.cpu, 2),
      '',
    ]);
    for (const name of new Set([...pair[0]!.threads.keys(), ...pair[1]!.threads.keys()])) {
      const [a, b] = pair.map((s) => (s.threads.get(name) ?? 0) / n);
      if (a! + b! > 0.05)
        rows.push([`  threads ${name}`, `${fmt(a!, 2)} / ${fmt(b!, 2)}`, '', '', '']);
    }
  }
  return rows;
}

/**
 * CPU of this process's threads by thread name (ms, 10 ms ticks): the main thread, the
 * workflow threads, the Rust core's runtime. A worker's workflow threads count for it only.
 */
function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      const key = tid === String(process.pid) ? 'main' : name;
      out.set(key, (out.get(key) ?? 0) + ms);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/**
 * Promises created by workflow code per send, ours against the baseline: each side's history
 * of `n` sends replayed in this thread (a replay worker runs in debug mode), counting the promises of workflow
 * realms (Temporal's promise hook takes a stack trace, source-mapped, for every one: the
 * workflow thread's CPU follows their number). Load does not move a count.
 */
async function promiseCounts(): Promise<string[][]> {
  const n = Math.min(SENDS, ROTATE - 10);
  const rows: string[][] = [];
  const bundles = {
    ours: await workflowBundle(),
    hand: await bundleWorkflowCode({
      workflowsPath: join(here, 'workflows', 'index.ts'),
      logger: quietLogger,
    }),
  };
  let counting = false;
  let created = 0;
  const stop = promiseHooks.onInit((promise) => {
    if (counting && promise.constructor !== Promise) created++;
  });
  try {
    // The last: one hook dispatched as a local activity, on both sides.
    for (const [hookSet, dispatch] of [['none'], ['one'], ['three'], ['one', 'local']] as const) {
      const counts: number[] = [];
      for (const [kind, sender] of [
        ['ours', await oursSender(HOOKS[hookSet], dispatch)],
        ['hand', await handSender(hookSet, dispatch)],
      ] as const) {
        for (let i = 0; i < n; i++) await sender.send(`q${i}`);
        const history = await client.workflow.getHandle(sender.workflowId()).fetchHistory();
        await sender.close();
        counting = true;
        created = 0;
        await Worker.runReplayHistory(
          { workflowBundle: bundles[kind], replayName: `promises-${kind}` },
          history,
          sender.workflowId(),
        );
        counting = false;
        counts.push(created / n);
      }
      rows.push([
        `${hookSet} hooks${dispatch ? ` (${dispatch})` : ''}: promises of workflow code per send (replayed), ours / hand`,
        `${fmt(counts[0]!, 1)} / ${fmt(counts[1]!, 1)}`,
        '',
        fmt(counts[0]! / counts[1]!, 2),
        '',
      ]);
    }
  } finally {
    stop();
  }
  return rows;
}

/** Each workflow task's time on the worker (started to completed, ms) in a workflow's current run. */
async function workflowTaskSpans(workflowId: string): Promise<number[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const at = (e: proto.temporal.api.history.v1.IHistoryEvent) =>
    Number(e.eventTime?.seconds ?? 0) * 1000 + Number(e.eventTime?.nanos ?? 0) / 1e6;
  const events = history.events ?? [];
  const spans: number[] = [];
  for (const event of events) {
    const done = event.workflowTaskCompletedEventAttributes;
    // Event ids are 1-based positions in the history.
    const started = done && events[Number(done.startedEventId) - 1];
    if (started) spans.push(at(event) - at(started));
  }
  return spans;
}

/**
 * The number of events of each type in a workflow's current run, and the size of its history
 * as the server stores it (the events encoded), in bytes.
 */
async function eventCounts(
  workflowId: string,
): Promise<{ counts: Map<string, number>; bytes: number }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const counts = new Map<string, number>();
  let bytes = 0;
  for (const event of history.events ?? []) {
    bytes += proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    const type = (proto.temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? 'unknown').replace(
      'EVENT_TYPE_',
      '',
    );
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return { counts, bytes };
}

try {
  const rows = [
    ...(want('counts') ? await counts() : []),
    ...(want('promises') ? await promiseCounts() : []),
    ...(want('latency') ? await latencySeries() : []),
    ...(want('throughput') ? await throughput() : []),
    ...(want('local') ? await localDispatch() : []),
    ...(want('tool') ? await toolDispatch() : []),
    ...(want('long') ? await longSession() : []),
  ];
  printTable(
    `The hot path: ours against hand-written Temporal code (load at the end: ${load()})`,
    ['series', 'p50 (or value)', 'p99', 'ratio (p50 / p99)', 'target'],
    rows,
  );
} finally {
  await agent.shutdown();
  await turnsAgent?.shutdown();
  await sticky10Agent?.shutdown();
  await slots200Agent?.shutdown();
  await toolAgent?.shutdown();
  handWorker.shutdown();
  await handRunning;
  await clientConnection.close();
  await nativeConnection.close();
  await server.stop();
}
