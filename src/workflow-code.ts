/**
 * Where the workflow code is, and one bundle per process.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/** Path of the workflow entry file (`workflows/index.ts` in source, `.js` when built). */
export function workflowsPath(): string {
  for (const candidate of ['../workflows/index.js', '../workflows/index.ts']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('durable-agent-sdk: workflows/index.{js,ts} not found next to the package');
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/**
 * The workflow bundle, built once per process (bundling costs about a second).
 * `DURABLE_AGENT_WORKFLOW_BUNDLE` may name a prebuilt bundle file.
 */
export function workflowBundle(): Promise<{ code: string } | { codePath: string }> {
  const prebuilt = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
  if (prebuilt && existsSync(prebuilt)) return Promise.resolve({ codePath: prebuilt });
  bundle ??= bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietLogger });
  return bundle;
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
