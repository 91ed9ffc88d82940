/**
 * Routing by Worker Deployments (issue 14 item 3): `send()` latency with
 * `advanced.temporal.versioning: 'deployments'` (a versioned worker, its session pinned to its
 * version) against `'off'` (unversioned worker, today's path), side by side in one run on one
 * embedded dev server. Two agents of the same definition (a UserPromptSubmit hook, one tool
 * call, a model reply) differ only in `versioning` (and their names, so each has its own task
 * queue and deployment); their sends are interleaved, alternating which goes first, so load
 * drifts hit both alike. Prints the machine's load (`uptime`) before and after.
 *
 *   npm run bench:routing            (BENCH_N=200 by default)
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { createAgent, defineTool, HookEvent, type Agent, type AgentOptions } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 200);
const WARMUP = 10;
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
Runtime.install({ logger: new DefaultLogger('WARN') });

const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

function definition(address: string, versioning: 'deployments' | 'off'): AgentOptions {
  const lookup = defineTool({
    name: 'Lookup',
    description: 'Look something up',
    kind: 'readonly',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => `${q}: sunny`,
  });
  return {
    name: `bench-routing-${versioning}-${randomUUID().slice(0, 8)}`,
    version: 'v1',
    model: scriptedModel((request) =>
      request.messages.at(-1)?.role === 'tool' ? 'done' : toolCall('Lookup', { q: 'weather' }),
    ),
    tools: [lookup],
    advanced: {
      permission: 'bypass-permissions',
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      temporal: { address, versioning },
    },
  };
}

const server = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const loadBefore = load();
console.log(`dev server ${server.address}; N=${N} sends per side; ${new Date().toISOString()}`);
console.log(`load before: ${loadBefore}`);
const agents: Agent[] = [];
try {
  const off = await createAgent(definition(server.address, 'off'));
  agents.push(off);
  const on = await createAgent(definition(server.address, 'deployments'));
  agents.push(on);
  const sides = [
    { name: 'versioning off', session: await off.createSession(), latencies: [] as number[] },
    { name: 'deployments', session: await on.createSession(), latencies: [] as number[] },
  ];
  // The versioned session really is pinned to its version (else this measures nothing).
  const pinned = (
    await on.client.temporal.workflow.getHandle(sides[1]!.session.workflowId).describe()
  ).raw.workflowExecutionInfo?.versioningInfo?.versioningOverride?.pinned?.version;
  if (pinned?.buildId !== 'v1') throw new Error('the deployments session is not pinned to v1');
  for (let i = 0; i < WARMUP + N; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const started = performance.now();
      const response = await side.session.send(`prompt ${i}`);
      const ms = performance.now() - started;
      if (response.status !== 'completed') throw new Error(`send ${i}: ${response.status}`);
      if (i >= WARMUP) side.latencies.push(ms);
    }
  }
  const [plain, routed] = sides as [(typeof sides)[number], (typeof sides)[number]];
  const p = (values: number[], q: number) => percentile(values, q);
  printTable(
    'send() latency (UserPromptSubmit hook, one tool call, model reply), routing by Worker Deployments on and off',
    ['measure', 'versioning off', 'deployments', 'on / off', 'target'],
    [
      [
        'send p50 (ms)',
        fmt(p(plain.latencies, 50)),
        fmt(p(routed.latencies, 50)),
        `${fmt(p(routed.latencies, 50) / p(plain.latencies, 50), 2)}×`,
        '<= 1.05×',
      ],
      [
        'send p99 (ms)',
        fmt(p(plain.latencies, 99)),
        fmt(p(routed.latencies, 99)),
        `${fmt(p(routed.latencies, 99) / p(plain.latencies, 99), 2)}×`,
        '',
      ],
    ],
  );
  console.log(`load after: ${load()}`);
} finally {
  for (const agent of agents) await agent.shutdown().catch(() => undefined);
  await server.stop();
}
