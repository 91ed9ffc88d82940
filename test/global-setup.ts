/**
 * One Temporal dev server and one workflow bundle for the whole test run. With
 * TEMPORAL_ADDRESS set, that server is used instead of starting one.
 */
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, type DevServer } from '../src/server/dev-server.js';
import { ensureTemporalCli } from '../src/server/temporal-cli.js';
import { workflowsPath } from '../src/workflow-code.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

export default async function setup() {
  const cacheDir = join(repoRoot, '.temporal');
  process.env.DURABLE_AGENT_CACHE_DIR = cacheDir;
  const binaries = await ensureTemporalCli({ cacheDir });
  if (binaries.temporalPath) process.env.TEMPORAL_CLI_PATH = binaries.temporalPath;
  if (binaries.testServerPath) process.env.TEMPORAL_TEST_SERVER_PATH = binaries.testServerPath;

  let server: DevServer | undefined;
  if (!process.env.TEMPORAL_ADDRESS) {
    server = await startDevServer({ cacheDir });
    process.env.TEMPORAL_ADDRESS = server.address;
    process.env.DURABLE_AGENT_TEST_SERVER_PID = String(server.pid);
  }

  const tmp = mkdtempSync(join(tmpdir(), 'durable-agent-bundle-'));
  const bundle = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: silent });
  const bundlePath = join(tmp, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = bundlePath;

  return async () => {
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
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
