/**
 * Live streams (issue 18): time to the first text delta after `send()`, against the
 * endpoint's own first chunk, and `send()` latency with streaming on and off, side by side
 * in one run on one embedded dev server. The model is an OpenAI-compatible HTTP endpoint
 * in this process (test/fixtures/openai-server.ts) that streams 40 pieces 10 ms apart, so
 * its first chunk and the SDK's first delta are timed on one clock. The two agents differ
 * only in `advanced.stream`; their sends are interleaved, alternating which goes first.
 *
 *   npx tsx bench/stream.ts            (BENCH_N=50 by default)
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createAgent, type Agent, type AgentOptions } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { startFakeOpenAI, type FakeReply } from '../test/fixtures/openai-server.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 50);
const WARMUP = 5;
process.env.DURABLE_AGENT_LOG_LEVEL ??= 'ERROR';
Runtime.install({ logger: new DefaultLogger('WARN') });

const reply: FakeReply = { text: 'word '.repeat(40).trim(), chunkChars: 5, chunkDelayMs: 10 };
const server = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const endpoint = await startFakeOpenAI(Array.from({ length: 2 * (WARMUP + N) }, () => reply));
console.log(`dev server ${server.address}; N=${N} sends per side; ${new Date().toISOString()}`);

function definition(stream: { stream?: false }): AgentOptions {
  return {
    model: 'fake-model',
    apiKey: 'none',
    baseUrl: endpoint.baseUrl,
    advanced: {
      ...stream,
      permission: 'bypass-permissions',
      temporal: { address: server.address, taskQueue: `bench-stream-${randomUUID()}` },
    },
  };
}

const agents: Agent[] = [];
try {
  const on = await createAgent(definition({}));
  agents.push(on);
  const off = await createAgent(definition({ stream: false }));
  agents.push(off);
  const sides = [
    { name: 'off', session: await off.createSession(), sends: [] as number[] },
    { name: 'on', session: await on.createSession(), sends: [] as number[] },
  ];
  const firstDelta: number[] = [];
  const endpointFirst: number[] = [];
  for (let i = 0; i < WARMUP + N; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const chunksBefore = endpoint.firstChunkAt.length;
      const started = performance.now();
      const call = side.session.send(`prompt ${i}`);
      let first = NaN;
      if (side.name === 'on') {
        for await (const _text of call.textStream()) {
          if (Number.isNaN(first)) first = performance.now() - started;
        }
      }
      const response = await call;
      const ms = performance.now() - started;
      if (response.status !== 'completed') throw new Error(`send ${i}: ${response.status}`);
      if (i < WARMUP) continue;
      side.sends.push(ms);
      if (side.name === 'on') {
        firstDelta.push(first);
        endpointFirst.push(endpoint.firstChunkAt[chunksBefore]! - started);
      }
    }
  }
  const [offSide, onSide] = sides as [(typeof sides)[number], (typeof sides)[number]];
  const p = (values: number[], q: number) => percentile(values, q);
  const overhead = firstDelta.map((ms, i) => ms - endpointFirst[i]!);
  printTable(
    'Time to first delta and send() latency, streaming on and off (40 pieces 10 ms apart)',
    ['measure', 'p50 (ms)', 'p99 (ms)', 'note'],
    [
      [
        'endpoint first chunk after send()',
        fmt(p(endpointFirst, 50)),
        fmt(p(endpointFirst, 99)),
        'the model step reaching the endpoint',
      ],
      ['first delta after send() (on)', fmt(p(firstDelta, 50)), fmt(p(firstDelta, 99)), ''],
      [
        'first delta − endpoint first chunk',
        fmt(p(overhead, 50)),
        fmt(p(overhead, 99)),
        "the stream's own cost",
      ],
      [
        'first delta / endpoint first chunk',
        `${fmt(p(firstDelta, 50) / p(endpointFirst, 50), 2)}×`,
        '',
        'target <= 1.2× (+ one workflow task)',
      ],
      ['send() streaming off', fmt(p(offSide.sends, 50)), fmt(p(offSide.sends, 99)), ''],
      [
        'send() streaming on',
        fmt(p(onSide.sends, 50)),
        fmt(p(onSide.sends, 99)),
        `${fmt(p(onSide.sends, 50) / p(offSide.sends, 50), 2)}× off`,
      ],
    ],
  );
} finally {
  for (const agent of agents) await agent.shutdown();
  await endpoint.close();
  await server.stop();
}
