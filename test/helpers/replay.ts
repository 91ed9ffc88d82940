/** Replaying against other workflow code, to observe that a replay happens at all. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

const otherWorkflows = fileURLToPath(
  new URL('../fixtures/other-workflow/index.ts', import.meta.url),
);
const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string) => console.error(message),
};

/**
 * Run `fn` while this process's replays (`replaySessionHistories`, `HookTestEnv.teardown()`)
 * use test/fixtures/other-workflow instead of the real workflow code: every recorded session
 * is nondeterministic against it. Workers already running keep the code they loaded.
 */
export async function withOtherWorkflowCode<T>(fn: () => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-agent-other-bundle-'));
  const before = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
  try {
    const bundle = await bundleWorkflowCode({ workflowsPath: otherWorkflows, logger: quiet });
    const path = join(dir, 'workflow-bundle.js');
    writeFileSync(path, bundle.code);
    process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = path;
    return await fn();
  } finally {
    if (before === undefined) delete process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
    else process.env.DURABLE_AGENT_WORKFLOW_BUNDLE = before;
    rmSync(dir, { recursive: true, force: true });
  }
}
