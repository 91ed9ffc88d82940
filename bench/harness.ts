/**
 * The hook test harness: how long `createHookTestEnv` takes to set up (on its own
 * time-skipping test server, its own dev server, and a dev server already running), a
 * 10-prompt session test with three hooks, and teardown (replay of every session included);
 * on the time-skipping server also a hung hook whose ten-minute budget passes with
 * `env.sleep()`. BENCH_HARNESS_N runs per series (default 5).
 *
 *   npm run bench:harness
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HookEvent, type HookCallback } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import type { Session } from '../src/client/session.js';
import {
  assertDispatched,
  createHookTestEnv,
  scriptedModel,
  type HookTestEnvOptions,
} from '../src/testing/index.js';
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
  budget: number | undefined;
  teardown: number;
}

type Series = { label: string; options: Partial<HookTestEnvOptions> };

/** A hook that hangs until its budget passes (ten minutes), for the time-skipping series. */
const hang: HookCallback = async (input) => {
  await new Promise((resolve) => input.abortSignal?.addEventListener('abort', resolve));
  return { action: 'continue' };
};

async function once(series: Series): Promise<Sample> {
  const t0 = performance.now();
  const env = await createHookTestEnv({ agent, ...series.options });
  const t1 = performance.now();
  const session = await env.createSession();
  for (let i = 0; i < 10; i++) await session.send(`prompt ${i}`);
  await session.close();
  await assertDispatched(env, session, HookEvent.UserPromptSubmit, 10);
  const t2 = performance.now();
  let budget: number | undefined;
  if (env.server === 'time-skipping') {
    // A hung UserPromptSubmit callback with a ten-minute budget, ended by env.sleep().
    const hung = await env.createSession({
      hooks: { [HookEvent.UserPromptSubmit]: [hang] },
      hookTimeoutMs: 600_000,
    });
    const b0 = performance.now();
    const reply = hung.send('hang').catch((error: unknown) => error);
    await waitForRunning(hung);
    await env.sleep('10 minutes');
    const outcome = await reply;
    budget = performance.now() - b0;
    if ((outcome as { code?: string }).code !== 'HOOK_TIMEOUT') {
      throw new Error(`expected HOOK_TIMEOUT, got ${String(outcome)}`);
    }
    await hung.close();
  }
  const t3 = performance.now();
  await env.teardown();
  const t4 = performance.now();
  return { setup: t1 - t0, session: t2 - t1, budget, teardown: t4 - t3 };
}

/** Until the session's UserPromptSubmit dispatch of its prompt is running. */
async function waitForRunning(session: Session): Promise<void> {
  for (;;) {
    const timeline = await session.timeline();
    if (timeline.some((e) => e.event === HookEvent.UserPromptSubmit && e.pending)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const shared = await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const rows: string[][] = [];
const p50 = new Map<string, number>();
try {
  const series: Series[] = [
    { label: 'time-skipping test server per env (default)', options: {} },
    { label: "dev server per env (server: 'dev')", options: { server: 'dev' } },
    { label: 'dev server already running (address)', options: { address: shared.address } },
  ];
  for (const s of series) {
    const samples: Sample[] = [];
    for (let i = 0; i < N; i++) samples.push(await once(s));
    const col = (k: keyof Sample) => {
      const v = samples.map((x) => x[k]).filter((x): x is number => x !== undefined);
      if (v.length === 0) return '-';
      p50.set(`${s.label}:${k}`, percentile(v, 50));
      return `${fmt(percentile(v, 50), 0)} / ${fmt(Math.max(...v), 0)}`;
    };
    rows.push([s.label, String(N), col('setup'), col('session'), col('teardown'), col('budget')]);
  }
} finally {
  await shared.stop();
}
printTable(
  'Hook test env (ms, p50 / max): set-up, a 10-prompt session with three hooks, teardown with replay, ' +
    'a hung hook whose ten-minute budget passes with env.sleep()',
  ['server', 'runs', 'set-up', '10-prompt session', 'teardown', '10-min budget'],
  rows,
);
const ratio = (k: keyof Sample) => {
  const ts = p50.get(`time-skipping test server per env (default):${k}`);
  const dev = p50.get(`dev server per env (server: 'dev'):${k}`);
  return ts !== undefined && dev !== undefined ? fmt(ts / dev, 2) : '-';
};
console.log(
  `time-skipping / own dev server, p50: set-up ${ratio('setup')}, 10-prompt session ${ratio('session')}, ` +
    `teardown ${ratio('teardown')}. On a dev server the ten-minute budget passes in real time.`,
);
