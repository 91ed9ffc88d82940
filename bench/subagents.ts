/**
 * Sub-agents (issue 34): a `Task` call of ours against the same work written by hand on
 * Temporal, side by side in one run on one dev server.
 *
 * - latency, interleaved series: a send whose model calls `Task` once; the sub-agent runs one
 *   prompt with the agent's one UserPromptSubmit hook and answers; the parent's model answers
 *   with its text. Against `benchTaskParent` (bench/workflows/): the same hook dispatch and
 *   model activities, the sub-agent as a child workflow started with `executeChild`, and none
 *   of the SDK's bookkeeping (tool pipeline, timeline, lineage, SessionStart/End, abort).
 *   Target: p50 ratio <= 1.2.
 * - history: the parent's history events and bytes per send whose sub-agent makes 1, 10 or 50
 *   tool calls (its timeline stays in its own history, so the parent's growth is constant),
 *   beside the sub-agent's own history.
 *
 *   npx tsx bench/subagents.ts     (BENCH_SENDS=100 per series; BENCH_ADDRESS to reuse a server)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createHookActivities } from '../activities/hook-dispatch.js';
import { DEFAULTS } from '../src/common/defaults.js';
import { AgentRegistry } from '../src/definition/registry.js';
import { createAgent, defineTool, HookEvent } from '../src/index.js';
import { handSender, historySize, oursSender } from './senders.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { testIdentity } from '../test/helpers/registry-identity.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const SENDS = Number(process.env.BENCH_SENDS ?? 100);
const ROTATE = Number(process.env.BENCH_ROTATE ?? 50);
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
const now = () => performance.now();
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const continueHook = async () => ({ action: 'continue' as const });

installQuietRuntime('ERROR');
const server = process.env.BENCH_ADDRESS
  ? { address: process.env.BENCH_ADDRESS, pid: -1, stop: async () => undefined }
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
console.log(
  `server ${server.address}; ${SENDS} sends per series, rotated every ${ROTATE}; ` +
    `load ${load()}; ${new Date().toISOString()}`,
);

/**
 * Ours: the top session's first step calls `Task`; the sub-agent makes the number of `Noop`
 * calls its prompt names (`calls:N`, none by default) and answers; the top session answers
 * with what it read.
 */
const model = scriptedModel(
  (request) => {
    const last = request.messages.at(-1);
    if (request.agentPath === 'main/worker') {
      const first = request.messages[0];
      const asked = first?.role === 'user' ? String(first.content) : '';
      const calls = Number(/calls:(\d+)/.exec(asked)?.[1] ?? 0);
      const made = request.messages.filter((m) => m.role === 'tool').length;
      return made < calls ? toolCall('Noop', {}) : 'child ok';
    }
    if (last?.role === 'tool') return 'ok';
    return toolCall('Task', {
      description: 'do the work',
      prompt: String(request.prompt ?? ''),
      subagent_type: 'worker',
    });
  },
  { keepRequests: 1 },
);
const noop = defineTool({
  name: 'Noop',
  description: 'Does nothing',
  kind: 'readonly',
  inputSchema: z.object({}),
  execute: async () => 'done',
});
const agent = await createAgent({
  model,
  tools: [noop],
  advanced: {
    hooks: { [HookEvent.UserPromptSubmit]: [continueHook] },
    maxTurns: 60,
    subagents: {
      agents: { worker: { description: 'Does the work', prompt: 'You work.', tools: ['Noop'] } },
    },
    temporal: { address: server.address, taskQueue: `bench-subagents-${randomUUID()}` },
  },
});

// The baseline's worker: the same dispatch activity, the same scripted model behind it.
const registry = new AgentRegistry();
const handModel = scriptedModel(() => 'ok', { keepRequests: 1 });
registry.register({
  name: 'task',
  hooks: { [HookEvent.UserPromptSubmit]: [continueHook] },
  model: handModel,
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
/** Routed as ours is: a pinned deployment version where ours runs on Worker Deployments. */
const handDeployment =
  agent.worker.versioning === 'deployments'
    ? { deploymentName: `bench-task-${randomUUID().slice(0, 8)}`, buildId: 'v1' }
    : undefined;
const handQueue = `bench-task-hand-${randomUUID()}`;
const nativeConnection = await NativeConnection.connect({ address: server.address });
const handWorker = await Worker.create({
  connection: nativeConnection,
  taskQueue: handQueue,
  workflowsPath: join(here, 'workflows', 'index.ts'),
  activities: {
    dispatchHook: hookActivities.dispatchHook,
    async taskModelStep(input: { agentName: string; role: 'parent' | 'child'; last: string }) {
      await registry.agent(input.agentName).model.step({
        sessionId: 'hand',
        requestId: 'r',
        step: 0,
        promptIndex: 0,
        modelStepIndex: 0,
        messages: [{ role: 'user', content: input.last }],
        tools: [],
        signal: Context.current().cancellationSignal,
      });
      return input.role === 'child' ? 'child ok' : 'delegate';
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
const sendHand = () =>
  handSender({
    client,
    taskQueue: handQueue,
    deployment: handDeployment,
    workflowType: 'benchTaskParent',
    workflowIdPrefix: 'hand-task',
    args: [{ agentName: 'task' }],
    update: 'taskSend',
    expect: 'delegate',
    rotateEvery: ROTATE,
  });

async function latency(): Promise<string[][]> {
  const series = [
    { name: 'ours', sender: await sendOurs(), times: [] as number[] },
    { name: 'hand', sender: await sendHand(), times: [] as number[] },
  ];
  const warmup = 5;
  for (let i = 0; i < SENDS + warmup; i++) {
    // Alternate which goes first, so neither always runs on a machine the other just warmed.
    const order = i % 2 === 0 ? series : [...series].reverse();
    for (const s of order) {
      const t0 = now();
      await s.sender.send(`p${i}`);
      if (i >= warmup) s.times.push(now() - t0);
      await s.sender.rotate();
    }
  }
  await Promise.all(series.map((s) => s.sender.close()));
  const [ours, hand] = [series[0]!.times, series[1]!.times];
  const p = percentile;
  return [
    [
      'send with one Task call (ms): ours / hand-written',
      `${fmt(p(ours, 50))} / ${fmt(p(hand, 50))}`,
      `${fmt(p(ours, 95))} / ${fmt(p(hand, 95))}`,
      `${fmt(p(ours, 50) / p(hand, 50), 2)} / ${fmt(p(ours, 95) / p(hand, 95), 2)}`,
      'p50 <= 1.20',
    ],
  ];
}

async function history(): Promise<string[][]> {
  const rows: string[][] = [];
  for (const calls of [1, 10, 50]) {
    const session = await agent.createSession();
    await session.send('warm up');
    const before = await historySize(client, session.workflowId);
    await session.send(`calls:${calls}`);
    const after = await historySize(client, session.workflowId);
    const child = after.lastChild ? await historySize(client, after.lastChild) : undefined;
    await session.close();
    rows.push([
      `sub-agent with ${calls} tool call(s): parent's history per send, events / bytes`,
      `${after.events - before.events} / ${after.bytes - before.bytes}`,
      child ? `${child.events} / ${child.bytes}` : 'n/a',
      '',
      'constant',
    ]);
  }
  return rows;
}

try {
  const header = ['measure', 'p50 or parent', 'p95 or sub-agent', 'ratio p50 / p95', 'target'];
  printTable('Sub-agents: a Task call against executeChild by hand', header, [
    ...(await latency()),
    ...(await history()),
  ]);
  console.log(`\nload at the end ${load()}`);
} finally {
  await agent.shutdown();
  handWorker.shutdown();
  await handRunning;
  await nativeConnection.close();
  await clientConnection.close();
  await server.stop();
}
