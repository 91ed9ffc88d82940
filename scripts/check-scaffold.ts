/**
 * CI check of `durable-agent init` as a user runs it (after `npm run build`):
 *
 * 1. `npm pack` the build; install the tarball in a fresh folder outside the repo.
 * 2. From there, `npx durable-agent init ../my-agent` writes the project beside it (not inside,
 *    so nothing resolves through the installing folder's node_modules).
 * 3. In the project, `npm install <tgz>`: its package.json's dependencies, with the tarball
 *    for durable-agent-sdk.
 * 4. `npx tsc --noEmit` type-checks it; `npm test` passes (the generated hook test, on
 *    Temporal's time-skipping test server); `npm run start` against a dev server exits 0 and
 *    prints the audit hook's line and the answer, and nothing else.
 *
 *   npm run build && npx tsx scripts/check-scaffold.ts [--keep]
 *
 * Uses the Temporal server at `TEMPORAL_ADDRESS`, else starts a dev server of its own. Needs
 * the npm registry (or npm's cache) for the project's dependencies. Exit 1 on a failed
 * check; `--keep` leaves the temporary folder for a look.
 */
import { packBuild } from './pack-build.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevServer, type DevServer } from '../src/server/dev-server.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const started = performance.now();

function fail(message: string): never {
  console.error(`check-scaffold: FAILED: ${message}`);
  process.exit(1);
}
function ok(message: string): void {
  const s = ((performance.now() - started) / 1000).toFixed(0);
  console.log(`check-scaffold: ok (${s} s): ${message}`);
}

/** Runs a command; on failure, fails the check with its output. */
function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    fail(`${command} ${args.join(' ')} (in ${cwd}):\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}

if (!existsSync(join(repo, 'dist', 'src', 'cli', 'main.js'))) {
  fail('no dist/src/cli/main.js: run npm run build');
}

const tmp = mkdtempSync(join(tmpdir(), 'durable-agent-scaffold-'));
let server: DevServer | undefined;
try {
  // 1. The tarball, installed where a user would try the CLI. --ignore-scripts: this build.
  const tarball = packBuild(repo, tmp);
  const host = join(tmp, 'host');
  mkdirSync(host);
  writeFileSync(
    join(host, 'package.json'),
    JSON.stringify({ name: 'scaffold-host', private: true, type: 'module' }),
  );
  run('npm', ['install', tarball, '--no-audit', '--no-fund', '--loglevel=error'], host);
  ok(`installed ${basename(tarball)} in a fresh folder`);

  // 2. init from the installed package.
  const printed = run('npx', ['--no-install', 'durable-agent', 'init', '../my-agent'], host);
  const app = join(tmp, 'my-agent');
  for (const file of ['package.json', '.gitignore', 'src/agent.ts', 'test/hooks.test.ts']) {
    if (!existsSync(join(app, file))) fail(`init wrote no ${file}:\n${printed}`);
  }
  const steps = printed.trim().split('\n');
  const next = steps.slice(steps.indexOf('Next steps:') + 1);
  if (next.length !== 3) fail(`init printed ${next.length} lines of next steps:\n${printed}`);
  ok('npx durable-agent init ../my-agent wrote the project and printed 3 lines of next steps');

  // 3. The project's dependencies, durable-agent-sdk from the tarball.
  run('npm', ['install', tarball, '--no-audit', '--no-fund', '--loglevel=error'], app);
  ok('npm install in the project (durable-agent-sdk from the tarball)');

  // 4. Type-check, test, start.
  run('npx', ['--no-install', 'tsc', '--noEmit'], app);
  ok('npx tsc --noEmit: the project type-checks');
  const tested = run('npm', ['test'], app);
  if (!/1 passed/.test(tested)) fail(`npm test did not pass its one test:\n${tested}`);
  ok('npm test: the generated hook test passes');

  let address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    server = await startDevServer({ cacheDir: join(repo, '.temporal') });
    address = server.address;
  }
  const env = { ...process.env, TEMPORAL_ADDRESS: address, OPENAI_API_KEY: '' };
  const start = spawnSync('npm', ['run', '--silent', 'start'], { cwd: app, env, encoding: 'utf8' });
  const expected = [
    '[audit] Read {"file_path":"package.json"}',
    'package.json names the project "my-agent".',
  ];
  if (start.status !== 0 || start.stdout.trim() !== expected.join('\n') || start.stderr !== '') {
    fail(
      `npm run start exited ${start.status} printing:\n${start.stdout}${start.stderr}\n` +
        `expected exit 0, exactly:\n${expected.join('\n')}\nand nothing on stderr`,
    );
  }
  ok(
    `npm run start (server ${address}) exited 0 printing the audit line and the answer, nothing else`,
  );
} finally {
  await server?.stop();
  if (keep) console.log(`check-scaffold: kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}
