/**
 * The workflow side of bench/mcp.ts alone, deterministic: each side's recorded session
 * history (`BENCH_MCP_SAVE=<dir> npm run bench:mcp` saves them as `ours.json` and
 * `hand.json`) replayed many times, each side in one replay worker a round, rounds
 * alternated. Temporal's replayer runs the workflow in this thread (`debugMode`), so a
 * profile (`node --cpu-prof --import tsx bench/mcp-replay.ts`) sees it. No server, no
 * activities: the workflow code's CPU and the SDK's around it, per replay and per workflow task.
 *
 *   npx tsx bench/mcp-replay.ts [dir]   (default .scratch/mcp-histories; BENCH_REPLAYS=15 a
 *                                       round, BENCH_ROUNDS=4, BENCH_SIDES=ours,hand)
 *   BENCH_COUNT=1       also count the promises created in the workflow's context and the
 *                       calls into it (the counting costs CPU: timings are not comparable)
 *   BENCH_COUNT=sites   as 1, and print where each side's promises are made: a send's count by
 *                       the two innermost functions of the workflow bundle that made them
 *   BENCH_NO_STACKS=1   without the promise hook Temporal's worker installs (a source-mapped
 *                       stack trace of every promise created in workflow code, for its stack
 *                       trace query): what that hook costs each side
 *   BENCH_TARGET=es2022 both sides' TypeScript compiled for ES2022 (as the package ships)
 */
import { readFileSync } from 'node:fs';
import { promiseHooks } from 'node:v8';
import { Script } from 'node:vm';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { Configuration } from 'webpack';
import { workflowBundle } from '../src/worker/workflow-code.js';
import { installQuietRuntime } from '../src/worker/runtime.js';
import { fmt, percentile } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2] ?? join(here, '..', '.scratch', 'mcp-histories');
const REPLAYS = Number(process.env.BENCH_REPLAYS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SIDES = (process.env.BENCH_SIDES ?? 'ours,hand').split(',');
const SITES = process.env.BENCH_COUNT === 'sites';
const COUNT = process.env.BENCH_COUNT === '1' || SITES;
const NO_STACKS = process.env.BENCH_NO_STACKS === '1';

installQuietRuntime('ERROR');
if (NO_STACKS) {
  // Installed once a process (idempotent): installed here and its promise hook stopped, the
  // replay workers' install does nothing more.
  const { globalHandlers } = (await import(
    '@temporalio/worker/lib/workflow/vm-shared.js' as string
  )) as { globalHandlers: { install(): void; stopPromiseHook(): void } };
  globalHandlers.install();
  globalHandlers.stopPromiseHook();
}
let promises = 0;
let vmCalls = 0;
/** Promises made, by site (`inner < outer` function names), of the side replaying now. */
let sites = new Map<string, number>();
if (COUNT) {
  // A promise of the workflow's context is another realm's: not this one's `Promise`.
  promiseHooks.onInit((promise) => {
    if (promise instanceof Promise) return;
    promises++;
    if (SITES) {
      const site = siteOf(new Error().stack ?? '');
      sites.set(site, (sites.get(site) ?? 0) + 1);
    }
  });
  const run = Script.prototype.runInContext;
  Script.prototype.runInContext = function (this: Script, ...args: Parameters<typeof run>) {
    vmCalls++;
    return run.apply(this, args);
  };
}

/** The two innermost frames of a stack that are in a workflow bundle, by function name. */
function siteOf(stack: string): string {
  const frames = stack
    .split('\n')
    .filter((line) => line.includes('workflow-bundle') || line.includes('/workflows/'))
    .map((line) => /at (?:async )?([^\s(]+)/.exec(line)?.[1] ?? '?')
    .slice(0, 2);
  return frames.length ? frames.join(' < ') : '(SDK or no workflow frame)';
}

const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };
/**
 * BENCH_TARGET=es2022: both sides' TypeScript compiled by the bundler for ES2022 (what
 * `npm run build` ships: tsc, tsconfig's target) instead of Temporal's ES2017, whose object
 * spread is a helper function.
 */
const TARGET = process.env.BENCH_TARGET;
const withTarget = (config: Configuration): Configuration => {
  for (const rule of config.module?.rules ?? []) {
    const use = rule && typeof rule === 'object' ? rule.use : undefined;
    const options = use && typeof use === 'object' && !Array.isArray(use) ? use.options : undefined;
    const jsc = options && typeof options === 'object' ? options.jsc : undefined;
    if (jsc) jsc.target = TARGET;
  }
  return config;
};
const bundle = (workflowsPath: string) =>
  bundleWorkflowCode({
    workflowsPath,
    logger: quiet,
    ...(TARGET ? { webpackConfigHook: withTarget } : {}),
  });
const bundles = {
  ours: TARGET ? await bundle(join(here, '..', 'workflows', 'index.ts')) : await workflowBundle(),
  hand: await bundle(join(here, 'workflows', 'index.ts')),
} as const;

interface Sample {
  wall: number;
  cpu: number;
  promises: number;
  vmCalls: number;
}
const sitesBySide = new Map<string, Map<string, number>>();
const sides = SIDES.map((name) => {
  if (name !== 'ours' && name !== 'hand') throw new Error(`BENCH_SIDES: ${name}?`);
  const file = join(dir, `${name}.json`);
  const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
  const events = history.events ?? [];
  const tasks = events.filter((e) => e.workflowTaskCompletedEventAttributes).length;
  const sends = events.filter((e) => e.workflowExecutionUpdateCompletedEventAttributes).length;
  return { name, history, tasks, sends, samples: [] as Sample[] };
});

/** `count` replays of the side's history in one replay worker; the first (its start) dropped. */
async function replay(side: (typeof sides)[number], count: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  const histories = Array.from({ length: count + 1 }, (_, i) => ({
    workflowId: `${side.name}-${i}`,
    history: side.history,
  }));
  let t0 = performance.now();
  let c0 = process.cpuUsage();
  promises = vmCalls = 0;
  sites = sitesBySide.get(side.name) ?? new Map();
  sitesBySide.set(side.name, sites);
  const options = { workflowBundle: bundles[side.name as keyof typeof bundles] };
  for await (const result of Worker.runReplayHistories(options, histories)) {
    if (result.error) throw result.error;
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    const cpu = (c1.user - c0.user + c1.system - c0.system) / 1000;
    samples.push({ wall: t1 - t0, cpu, promises, vmCalls });
    promises = vmCalls = 0;
    t0 = t1;
    c0 = c1;
  }
  return samples.slice(1);
}

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  sides.map((s) => `${s.name}: ${s.sends} sends, ${s.tasks} workflow tasks`).join('; ') +
    `; ${ROUNDS} rounds of ${REPLAYS} replays a side${NO_STACKS ? '; no promise hook' : ''}` +
    `; load ${load()}`,
);
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 ? [...sides].reverse() : sides) {
    side.samples.push(...(await replay(side, REPLAYS)));
  }
}
const p50 = (side: (typeof sides)[number], key: keyof Sample) =>
  percentile(
    side.samples.map((s) => s[key]),
    50,
  );
for (const side of sides) {
  const cpu = p50(side, 'cpu');
  console.log(
    `${side.name}: a replay p50 ${fmt(p50(side, 'wall'))} ms, CPU ${fmt(cpu)} ms ` +
      `(this process, all threads); CPU per workflow task ${fmt((cpu / side.tasks) * 1000, 0)} µs, ` +
      `per send ${fmt(cpu / side.sends, 2)} ms` +
      (COUNT
        ? `; promises a send ${fmt(p50(side, 'promises') / side.sends, 1)}, calls into the ` +
          `workflow's context a task ${fmt(p50(side, 'vmCalls') / side.tasks, 2)}`
        : ''),
  );
}
if (SITES) {
  for (const side of sides) {
    const bySite = [...(sitesBySide.get(side.name) ?? new Map<string, number>())];
    // Every replay of the side counted (the dropped first ones too): per send, over all.
    const replays = ROUNDS * (REPLAYS + 1);
    console.log(`\n${side.name}: promises a send by site (innermost < caller)`);
    for (const [site, n] of bySite.sort((a, b) => b[1] - a[1])) {
      const perSend = n / replays / side.sends;
      if (perSend >= 0.05) console.log(`  ${fmt(perSend, 2).padStart(6)}  ${site}`);
    }
  }
}
const [ours, hand] = sides;
if (ours && hand) {
  const perTask = (side: typeof ours) => (p50(side, 'cpu') / side.tasks) * 1000;
  console.log(
    `ours / hand CPU per workflow task: ${fmt(perTask(ours) / perTask(hand), 2)}; ` +
      `difference ${fmt(perTask(ours) - perTask(hand), 0)} µs; load ${load()}`,
  );
}
