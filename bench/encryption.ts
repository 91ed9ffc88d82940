/**
 * Encryption at rest (issue 15): `send()` latency and history bytes with encryption on and
 * off, side by side in one run on one embedded dev server. Two agents of the same definition
 * (a UserPromptSubmit hook, one tool call with a 2 KB output, a model reply) differ only in
 * `encryption`; their sends are interleaved, alternating which goes first, so load drifts
 * hit both alike.
 *
 *   npm run bench:encryption            (BENCH_N=200 by default)
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { createAgent, defineTool, HookEvent, type Agent, type AgentOptions } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { encryptionCodec } from '../src/payloads/encryption.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 200);
const WARMUP = 10;
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
Runtime.install({ logger: new DefaultLogger('WARN') });

function definition(address: string, encryption: AgentOptions['encryption']): AgentOptions {
  const lookup = defineTool({
    name: 'Lookup',
    description: 'Look something up',
    kind: 'readonly',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => `${q}: ${'result line '.repeat(170)}`,
  });
  return {
    model: scriptedModel((request) =>
      request.messages.at(-1)?.role === 'tool' ? 'done' : toolCall('Lookup', { q: 'weather' }),
    ),
    tools: [lookup],
    encryption,
    advanced: {
      permission: 'bypass-permissions',
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      temporal: { address, taskQueue: `bench-enc-${randomUUID()}` },
    },
  };
}

const server = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
console.log(`dev server ${server.address}; N=${N} sends per side; ${new Date().toISOString()}`);
const agents: Agent[] = [];
try {
  const ring = { currentKeyId: 'bench', keys: { bench: randomBytes(32) } };
  const off = await createAgent(definition(server.address, undefined));
  agents.push(off);
  const on = await createAgent(definition(server.address, ring));
  agents.push(on);
  const sides = [
    { name: 'encryption off', session: await off.createSession(), latencies: [] as number[] },
    { name: 'encryption on', session: await on.createSession(), latencies: [] as number[] },
  ];
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
  const rows = [];
  for (const side of sides) {
    const history = side.session.workflowId;
    const handle = (side === sides[0] ? off : on).client.temporal.workflow.getHandle(history);
    const bytes = proto.temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish()
      .length;
    rows.push({ ...side, bytes });
  }
  const [plain, sealed] = rows as [(typeof rows)[number], (typeof rows)[number]];
  // The codec's own CPU per send, free of the server's and the machine's load: seal and open
  // every payload of the unencrypted session's history, as a send's worth.
  const payloads: proto.temporal.api.common.v1.IPayload[] = [];
  const collect = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const value = node as { metadata?: unknown; data?: unknown };
    if (value.data instanceof Uint8Array && value.metadata && typeof value.metadata === 'object') {
      payloads.push(value as proto.temporal.api.common.v1.IPayload);
      return;
    }
    for (const child of Object.values(node)) collect(child);
  };
  collect(await off.client.temporal.workflow.getHandle(plain.session.workflowId).fetchHistory());
  const codec = encryptionCodec(ring);
  const rounds = 20;
  const cpuStarted = performance.now();
  for (let r = 0; r < rounds; r++) await codec.decode(await codec.encode(payloads));
  const codecMsPerSend = (performance.now() - cpuStarted) / rounds / (WARMUP + N);
  const p = (values: number[], q: number) => percentile(values, q);
  printTable(
    'send() latency (UserPromptSubmit hook, one tool call, model reply) and history size',
    ['measure', 'encryption off', 'encryption on', 'on / off', 'target'],
    [
      [
        'send p50 (ms)',
        fmt(p(plain.latencies, 50)),
        fmt(p(sealed.latencies, 50)),
        `${fmt(p(sealed.latencies, 50) / p(plain.latencies, 50), 2)}×`,
        '<= 1.1×',
      ],
      [
        'send p99 (ms)',
        fmt(p(plain.latencies, 99)),
        fmt(p(sealed.latencies, 99)),
        `${fmt(p(sealed.latencies, 99) / p(plain.latencies, 99), 2)}×`,
        '',
      ],
      [
        `history bytes (${WARMUP + N} sends)`,
        String(plain.bytes),
        String(sealed.bytes),
        `${fmt(sealed.bytes / plain.bytes, 2)}×`,
        '',
      ],
      [
        `codec CPU per send, seal + open (ms; ${payloads.length} payloads)`,
        '0',
        fmt(codecMsPerSend, 3),
        '',
        '',
      ],
      [
        'history bytes per send',
        fmt(plain.bytes / (WARMUP + N), 0),
        fmt(sealed.bytes / (WARMUP + N), 0),
        `${fmt(sealed.bytes / plain.bytes, 2)}×`,
        '',
      ],
    ],
  );
} finally {
  for (const agent of agents) await agent.shutdown().catch(() => undefined);
  await server.stop();
}
