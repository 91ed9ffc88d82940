/** The `durable-agent` CLI as a child process, for the tests that drive it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BUILT_CLI_VARIABLE } from './cli-build.js';
import { temporalAddress } from './common.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The `node` arguments that run `durable-agent <args>`: the CLI the test run built from its
 * sources (test/global-setup.ts), else (no global setup) src/cli/main.ts under tsx. Run them
 * with the repository's root as the working folder.
 */
export function cliNodeArgs(args: readonly string[]): string[] {
  const built = process.env[BUILT_CLI_VARIABLE];
  return built ? [built, ...args] : ['--import', 'tsx', 'src/cli/main.ts', ...args];
}

/** How one CLI run ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit, ms. */
  ms: number;
}

/**
 * Run `durable-agent <args>` (the CLI built from this run's sources) against the test server
 * (`TEMPORAL_ADDRESS`), never blocking this process's workers.
 * @param options.env variables over this process's (a value `undefined` removes one);
 *   `DEBUG` is always removed.
 * @param options.onStdout / options.onStderr called with all the output so far, as it comes.
 * @param options.stallReaderMs a reader slower than the CLI (`| jq`): at the first chunk of
 *   stdout, stop reading it (the pipe fills and the CLI's writes wait) until the child exits
 *   or this many ms pass, then read the rest.
 * @returns the run, and its child process (to signal it) as `child`.
 */
export function runCli(
  args: string[],
  options: {
    env?: Record<string, string | undefined>;
    onStdout?: (text: string) => void;
    onStderr?: (text: string) => void;
    stallReaderMs?: number;
  } = {},
): Promise<CliRun> & { child: ChildProcess } {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: temporalAddress(),
    ...options.env,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  delete env.DEBUG;
  const started = Date.now();
  const child = spawn(process.execPath, cliNodeArgs(args), {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.once('exit', () => (exited = true));
  let stalled = false;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    options.onStdout?.(stdout);
    if (options.stallReaderMs !== undefined && !stalled) {
      stalled = true;
      child.stdout.pause();
      const until = Date.now() + options.stallReaderMs;
      const poll = setInterval(() => {
        if (!exited && Date.now() < until) return;
        clearInterval(poll);
        child.stdout.resume();
      }, 20);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onStderr?.(stderr);
  });
  const done = new Promise<CliRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
  return Object.assign(done, { child });
}
