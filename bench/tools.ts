/**
 * Tool benchmark (issue 5): one tool call with PreToolUse, a permission function and
 * PostToolUse against the same call with no hooks and no permission check, side by side in
 * one run on one embedded dev server.
 *
 *   npx tsx bench/tools.ts      (BENCH_N=100 sends per series by default)
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createAgent, defineTool, HookEvent, type AgentOptions } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel } from '../src/testing/index.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 100);
const server = await startDevServer({ cacheDir: join(here, '..', '.temporal') });

const echo = defineTool({
  name: 'Echo',
  description: 'Echo a word',
  kind: 'write',
  inputSchema: z.object({ word: z.string() }),
  execute: async ({ word }) => word,
});
// Every send: one step asking for Echo, then one step of text.
const model = scriptedModel((request) =>
  request.step === 0 ? { toolCalls: [{ toolName: 'Echo', input: { word: 'hi' } }] } : 'done',
);
const base = (taskQueue: string): AgentOptions => ({
  model,
  tools: [echo],
  advanced: { temporal: { address: server.address, taskQueue } },
});
const cont = async () => ({ action: 'continue' as const });

try {
  const bare = await createAgent({
    ...base(`bench-${randomUUID()}`),
    advanced: {
      ...base('').advanced,
      permission: 'bypass-permissions',
      temporal: { address: server.address, taskQueue: `bench-${randomUUID()}` },
    },
  });
  const hooked = await createAgent({
    ...base(''),
    advanced: {
      hooks: { [HookEvent.PreToolUse]: [cont], [HookEvent.PostToolUse]: [cont] },
      permission: async () => 'allow' as const,
      temporal: { address: server.address, taskQueue: `bench-${randomUUID()}` },
    },
  });
  const sessions = { bare: await bare.createSession(), hooked: await hooked.createSession() };
  const series: Record<'bare' | 'hooked', number[]> = { bare: [], hooked: [] };
  for (let i = 0; i < N + 10; i++) {
    for (const name of ['bare', 'hooked'] as const) {
      const t0 = performance.now();
      const response = await sessions[name].send('go');
      if (response.toolCalls[0]?.status !== 'success')
        throw new Error(`tool call failed: ${JSON.stringify(response.toolCalls)}`);
      if (i >= 10) series[name].push(performance.now() - t0);
    }
  }
  await Promise.all([sessions.bare.close(), sessions.hooked.close()]);
  await bare.shutdown();
  await hooked.shutdown();
  const row = (label: string, values: number[]) => [
    label,
    fmt(percentile(values, 50)),
    fmt(percentile(values, 99)),
  ];
  printTable(
    `One tool call per send() (two model steps), round trip in ms; ${N} sends each`,
    ['series', 'p50', 'p99'],
    [
      row('no hooks, bypass-permissions (model, execute, model)', series.bare),
      row('PreToolUse + permission function + PostToolUse', series.hooked),
      [
        'ratio hooked / bare',
        fmt(percentile(series.hooked, 50) / percentile(series.bare, 50), 2),
        fmt(percentile(series.hooked, 99) / percentile(series.bare, 99), 2),
      ],
    ],
  );
} finally {
  await server.stop();
}
