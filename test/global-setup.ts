/**
 * One Temporal dev server, one workflow bundle and one build of the CLI for the whole test
 * run. With TEMPORAL_ADDRESS set, that server is used instead of starting one.
 *
 * The run gets a temporary folder of its own (TMPDIR, so `os.tmpdir()` of every test process
 * and of the processes they start): at the end, any `durable-agent-*` folder still in it is
 * one a test left behind, and the run fails naming it (test/helpers/temp-dirs.ts makes folders that
 * clean up after themselves). The run's folder is removed either way.
 */
import { mkdtempSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { Connection } from '@temporalio/client';
import { startDevServer, type DevServer } from '../src/server/dev-server.js';
import { registerSearchAttributes } from '../src/server/search-attributes.js';
import { ensureTemporalCli } from '../src/server/temporal-cli.js';
import { workflowsPath } from '../src/worker/workflow-code.js';
import { BUILT_CLI_VARIABLE, buildCli } from './helpers/cli-build.js';
import { MAX_UPDATES_VARIABLE, SUITE_MAX_UPDATES_PER_RUN } from './helpers/common.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

export default async function setup() {
  const runTmp = mkdtempSync(join(tmpdir(), 'durable-agent-test-run-'));
  process.env.TMPDIR = runTmp;
  const cacheDir = join(repoRoot, '.temporal');
  process.env.DURABLE_AGENT_CACHE_DIR = cacheDir;
  // The suite is an application: its workers install Temporal's runtime with the SDK's quiet
  // logger (one line per failure, which the logging tests read). runtime-after-agent.test.ts
  // clears it to check the library's own default, 'never'.
  process.env.DURABLE_AGENT_TEMPORAL_RUNTIME ??= 'if-absent';
  const binaries = await ensureTemporalCli({ cacheDir });
  if (binaries.temporalPath) process.env.TEMPORAL_CLI_PATH = binaries.temporalPath;
  if (binaries.testServerPath) process.env.TEMPORAL_TEST_SERVER_PATH = binaries.testServerPath;

  let server: DevServer | undefined;
  if (!process.env.TEMPORAL_ADDRESS) {
    // Temporal refuses the 2,001st Update of a run by default; the suite's server refuses the
    // 501st, so update-rollover.test.ts goes past the limit in 550 sends instead of 2,050.
    server = await startDevServer({
      cacheDir,
      dynamicConfig: { 'history.maxTotalUpdates': String(SUITE_MAX_UPDATES_PER_RUN) },
    });
    process.env[MAX_UPDATES_VARIABLE] = String(SUITE_MAX_UPDATES_PER_RUN);
    process.env.TEMPORAL_ADDRESS = server.address;
    process.env.DURABLE_AGENT_TEST_SERVER_PID = String(server.pid);
  } else if (!process.env.DURABLE_AGENT_CLUSTER_DIR) {
    // A server started elsewhere gets the session search attributes the package's own servers
    // start with (registering them again is a no-op), so the tests see what CI sees. (The
    // cluster tests' mTLS cluster registered them as it started: scripts/cluster.ts.)
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    try {
      await registerSearchAttributes(connection, 'default');
    } finally {
      await connection.close();
    }
  }

  // The CLI the tests run as a process, built once from this run's sources (test/helpers/cli-build.ts).
  const cliDir = mkdtempSync(join(tmpdir(), 'durable-agent-cli-'));
  process.env[BUILT_CLI_VARIABLE] = await buildCli(cliDir);

  const tmp = mkdtempSync(join(tmpdir(), 'durable-agent-bundle-'));
  const bundle = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: silent });
  const bundlePath = join(tmp, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = bundlePath;

  return async () => {
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
    rmSync(cliDir, { recursive: true, force: true });
    const left = readdirSync(runTmp).filter((name) => name.startsWith('durable-agent-'));
    rmSync(runTmp, { recursive: true, force: true });
    if (left.length > 0) {
      // Vitest reports an error thrown here but still exits 0: fail the run explicitly.
      process.exitCode = 1;
      throw new Error(
        `The tests left ${left.length} temporary folder(s) behind (removed now); make the ` +
          `tests that create them remove them (tempDir() of test/helpers/temp-dirs.ts does):\n` +
          left.map((name) => `  ${name}`).join('\n'),
      );
    }
  };
}

const noop = () => undefined;
const silent = {
  log: noop,
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: console.error,
};
