/**
 * The hook test harness: how long `createHookTestEnv` takes to set up (with its own embedded
 * dev server, and on a server already running), a 10-prompt session test with three hooks,
 * and teardown (replay of every session included). BENCH_HARNESS_N runs per series (default 5).
 *
 *   npm run bench:harness
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HookEvent, type HookCallback } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { assertDispatched, createHookTestEnv, scriptedModel } from '../src/testing/index.js';
import { fmt, percentile, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_HARNESS_N ?? 5);
const allow: HookCallback = async () => ({ action: 'continue' });
const agent = {
  model: scriptedModel(() => 'ok'),
  tools: [],
  advanced: {
    hooks: {
      [HookEvent.UserPromptSubmit]: [allow],
      [HookEvent.TaskCompleted]: [allow],
      [HookEvent.SessionEnd]: [allow],
    },
  },
};

interface Sample {
  setup: number;
  session: number;
  teardown: number;
}

async function once(address: string | undefined): Promise<Sample> {
  const t0 = performance.now();
  const env = await createHookTestEnv({ agent, ...(address ? { address } : {}) });
  const t1 = performance.now();
  const session = await env.createSession();
  for (let i = 0; i < 10; i++) await session.send(`prompt ${i}`);
  await session.close();
  await assertDispatched(env, session, HookEvent.UserPromptSubmit, 10);
  const t2 = performance.now();
  await env.teardown();
  const t3 = performance.now();
  return { setup: t1 - t0, session: t2 - t1, teardown: t3 - t2 };
}

const shared = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const rows: string[][] = [];
try {
  for (const [label, address] of [
    ['embedded dev server per env', undefined],
    ['dev server already running', shared.address],
  ] as const) {
    const samples: Sample[] = [];
    for (let i = 0; i < N; i++) samples.push(await once(address));
    const col = (k: keyof Sample) => {
      const v = samples.map((s) => s[k]);
      return `${fmt(percentile(v, 50), 0)} / ${fmt(Math.max(...v), 0)}`;
    };
    rows.push([label, String(N), col('setup'), col('session'), col('teardown')]);
  }
} finally {
  await shared.stop();
}
printTable(
  'Hook test env (ms, p50 / max): set-up, a 10-prompt session with three hooks, teardown with replay',
  ['server', 'runs', 'set-up', '10-prompt session', 'teardown'],
  rows,
);
console.log(
  'The time-skipping test server is not supported yet (hook budgets run on real timers).',
);
