/**
 * The first `createAgent` in a fresh process, on a running server, with the workflow bundle
 * prebuilt by `npm run build` and without it (bundling at startup), side by side.
 *
 * Two copies of the built package are laid out as an install would be (`package.json`,
 * `dist/`, the repo's `node_modules`); one has no `dist/workflow-bundle.*`. Each round starts
 * one fresh `node` process per copy (alternating which goes first) that imports the package,
 * times `createAgent` (scripted model) and one `send()`, and reports which bundle its worker
 * ran. BENCH_STARTUP_N rounds (default 5). Target: first createAgent ≤ 1 s with the bundle.
 *
 *   npm run bench:startup                                      # builds first
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx bench/startup.ts   # after npm run build
 *
 * Uses the server at TEMPORAL_ADDRESS, else starts a dev server of its own.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevServer, type DevServer } from '../src/server/dev-server.js';
import {
  WORKFLOW_BUNDLE_FILE,
  WORKFLOW_BUNDLE_MANIFEST_FILE,
} from '../src/worker/workflow-code.js';
import { fmt, percentile, printTable } from './stats.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.BENCH_STARTUP_N ?? 5);

if (!existsSync(join(repo, 'dist', WORKFLOW_BUNDLE_MANIFEST_FILE))) {
  console.error(
    'dist has no prebuilt workflow bundle: run npm run build (npm run bench:startup does)',
  );
  process.exit(2);
}

/** What one fresh process reports. */
interface Sample {
  importMs: number;
  createAgentMs: number;
  firstSendMs: number;
  bundleFrom: string;
}

const CHILD = `const t0 = performance.now();
const { createAgent } = await import('./dist/src/index.js');
const { scriptedModel } = await import('./dist/src/testing/index.js');
const t1 = performance.now();
const agent = await createAgent({
  model: scriptedModel(['ok']),
  tools: [],
  advanced: { temporal: { address: process.env.TEMPORAL_ADDRESS } },
});
const t2 = performance.now();
const response = await agent.send('hi');
const t3 = performance.now();
await agent.close();
if (response.status !== 'completed') throw new Error('send ended ' + response.status);
console.log(JSON.stringify({
  importMs: t1 - t0, createAgentMs: t2 - t1, firstSendMs: t3 - t2,
  bundleFrom: agent.worker.workflowBundle.from,
}));
`;

const tmp = mkdtempSync(join(tmpdir(), 'durable-agent-bench-startup-'));
const copies = {
  prebuilt: join(tmp, 'prebuilt'),
  bundling: join(tmp, 'bundling'),
} as const;
for (const [name, dir] of Object.entries(copies)) {
  cpSync(join(repo, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(repo, 'package.json'), join(dir, 'package.json'));
  symlinkSync(realpathSync(join(repo, 'node_modules')), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'first.mjs'), CHILD);
  if (name === 'bundling') {
    for (const file of [WORKFLOW_BUNDLE_FILE, WORKFLOW_BUNDLE_MANIFEST_FILE]) {
      rmSync(join(dir, 'dist', file));
    }
  }
}

let server: DevServer | undefined;
try {
  let address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    server = await startDevServer({ cacheDir: join(repo, '.temporal') });
    address = server.address;
  }
  console.log(`server ${address}; ${N} rounds; ${new Date().toISOString()}`);
  const samples: Record<keyof typeof copies, Sample[]> = { prebuilt: [], bundling: [] };
  const runOnce = (name: keyof typeof copies): Sample => {
    const output = execFileSync(process.execPath, ['first.mjs'], {
      cwd: copies[name],
      encoding: 'utf8',
      env: { ...process.env, TEMPORAL_ADDRESS: address, DURABLE_AGENT_WORKFLOW_BUNDLE: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    return JSON.parse(output.trim().split('\n').at(-1) ?? '') as Sample;
  };
  for (let round = 0; round < N; round++) {
    const order: (keyof typeof copies)[] =
      round % 2 === 0 ? ['prebuilt', 'bundling'] : ['bundling', 'prebuilt'];
    for (const name of order) samples[name].push(runOnce(name));
  }
  const expected = { prebuilt: 'package', bundling: 'sources' };
  for (const name of ['prebuilt', 'bundling'] as const) {
    const wrong = samples[name].find((s) => s.bundleFrom !== expected[name]);
    if (wrong) throw new Error(`${name}: the worker ran a bundle from ${wrong.bundleFrom}`);
  }
  const cell = (values: number[]) =>
    `${fmt(percentile(values, 50), 0)} / ${fmt(Math.max(...values), 0)}`;
  const column = (name: keyof typeof copies, key: keyof Omit<Sample, 'bundleFrom'>) =>
    samples[name].map((s) => s[key]);
  printTable(
    `First createAgent in a fresh process (ms, p50 / max of ${N})`,
    ['measure', 'prebuilt bundle', 'bundling at startup', 'ratio (p50)', 'target'],
    (
      [
        ['createAgent', 'createAgentMs', '≤ 1000 with the bundle'],
        ['imports of the package', 'importMs', ''],
        ['first send()', 'firstSendMs', ''],
      ] as const
    ).map(([label, key, target]) => [
      label,
      cell(column('prebuilt', key)),
      cell(column('bundling', key)),
      `${fmt(percentile(column('prebuilt', key), 50) / percentile(column('bundling', key), 50), 2)}×`,
      target,
    ]),
  );
} finally {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
}
