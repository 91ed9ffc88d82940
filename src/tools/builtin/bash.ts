/**
 * `Bash`: run a shell command in the workspace, in its own process group so that stopping
 * it stops everything it started.
 *
 * @module
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { ToolResult } from '../../common/types.js';
import { defineTool, type ToolContext } from '../tool.js';
import { normalizeRoots } from '../workspace.js';
import {
  buildResult,
  collectOutput,
  endOnCharacter,
  type Collected,
  type CommandExit,
} from './bash-output.js';
import {
  BASH_KILL_GRACE_MS,
  delay,
  finishStop,
  startOrphanWatchdog,
  stopCommand,
  stopGroup,
  stopWatchdog,
  type GroupStop,
} from './process-group.js';

/** How often a running command reports liveness through `context.heartbeat`, ms. */
const BASH_HEARTBEAT_INTERVAL_MS = 1000;

/**
 * How long to wait, after bash itself exits, for whatever it left running to release the
 * output pipes before those stragglers are stopped too, ms.
 */
const BASH_PIPE_GRACE_MS = 1000;

/** The longest delay `setTimeout` takes, ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Most output kept for `saveFullOutput` when the context gives no limit, bytes. */
const DEFAULT_FULL_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * What tool processes get from the worker's environment when nothing more is allowed; the
 * rest (API keys, tokens, cloud credentials) stays out:
 *
 * - `PATH`: to find commands;
 * - `HOME`: where programs keep their settings (git, npm, ssh config);
 * - `LANG`, `LC_ALL`: the locale, so programs read and print UTF-8 as the worker does;
 * - `TERM`: some programs refuse to run, or print escape codes, without it;
 * - `TMPDIR`: where `mktemp` and compilers write when the worker's temp folder is not `/tmp`.
 *
 * Not passed, though harmless: `USER` (`id -un` gives it) and `SHELL` (bash sets `$SHELL`
 * itself). Add them, or anything else a command needs, with `advanced.toolEnv.allow`.
 */
export const DEFAULT_TOOL_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'TERM',
  'TMPDIR',
];

/**
 * The environment of a tool process: the {@link DEFAULT_TOOL_ENV} variables and those named
 * in `allow`, copied from `source` when set there, then `set` on top.
 *
 * @param options `advanced.toolEnv` (already validated).
 * @param source Where values come from. @default `process.env`
 * @returns A new, frozen object.
 */
export function toolEnvironment(
  options: { allow?: readonly string[]; set?: Readonly<Record<string, string>> } = {},
  source: NodeJS.ProcessEnv = process.env,
): Readonly<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const name of [...DEFAULT_TOOL_ENV, ...(options.allow ?? [])]) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  return Object.freeze({ ...env, ...options.set });
}

/** Input of {@link Bash}. */
const bashInputSchema = z.object({
  /** The command, run as `bash -c <command>` with the first workspace root as cwd. */
  command: z.string().min(1),
  /** Time limit, ms; the call's own budget (`context.timeoutMs`) caps it. @default that budget */
  timeout_ms: z.number().int().positive().optional(),
});

/**
 * Run a shell command: `bash -c <command>`, cwd the first workspace root, stdin closed,
 * environment `context.env` (when absent, the `DEFAULT_TOOL_ENV` variables and
 * `advanced.toolEnv` of the worker: never the worker's whole environment).
 * It leads its own process group (`detached`).
 *
 * - Output: stdout and stderr together, in arrival order. Past `context.maxOutputBytes`
 *   the rest is drained but not kept, and the result says how many bytes there were.
 * - Liveness: `context.heartbeat()` every second while it runs.
 * - Stopping: on `context.signal` abort, or after `min(timeout_ms, context.timeoutMs)` ms,
 *   the whole group gets SIGTERM, then SIGKILL 2 s later if any of it is still alive; the
 *   result is an error (`error.type` `'AbortError'` or `'TimeoutError'`) with the output so
 *   far. Processes still holding the output pipes 1 s after bash exits are stopped the
 *   same way.
 * - Result: `model` is the output (`(no output)` when empty); a non-zero exit or a death
 *   by signal adds `exit code N` / `killed by signal S` and makes it an error result
 *   (`'NonZeroExit'`, `'KilledBySignal'`). `metadata` has `exitCode`, `signal`,
 *   `outputBytes`, `truncated` and `durationMs`.
 */
export const Bash = defineTool({
  name: 'Bash',
  description:
    'Run a bash command in the workspace (cwd: the first workspace root) and return its ' +
    'combined stdout and stderr. Give `timeout_ms` for commands that may run long.',
  kind: 'execute',
  inputSchema: bashInputSchema,
  async execute(input, context): Promise<ToolResult> {
    const started = Date.now();
    if (context.signal.aborted) {
      return {
        status: 'error',
        model: 'Command was cancelled before it started',
        error: { type: 'AbortError', message: 'Cancelled before it started' },
      };
    }
    const [cwd] = await normalizeRoots(context.workspaceRoots);
    const timeoutMs = Math.min(input.timeout_ms ?? Infinity, context.timeoutMs);
    const maxBytes = context.maxOutputBytes;
    const keepBytes = context.saveFullOutput
      ? Math.max(maxBytes + 1, context.maxFullOutputBytes ?? DEFAULT_FULL_OUTPUT_BYTES)
      : maxBytes + 1;
    const env = context.env ?? toolEnvironment();
    const run = await startCommand({ command: input.command, cwd, env, maxBytes, keepBytes });
    const exit = await runToExit(run, context, timeoutMs, started);
    // Whatever ignored SIGTERM gets SIGKILL when its grace ends; we return after that.
    await finishStop(run.group);
    stopWatchdog(run.watchdog);
    const { collected } = run;
    endOnCharacter(collected, keepBytes);
    let ref: string | undefined;
    if (collected.totalBytes > maxBytes && context.saveFullOutput) {
      const all = Buffer.concat(collected.chunks, collected.keptBytes);
      ref = await context.saveFullOutput(all).catch(() => undefined);
    }
    const { command } = input;
    const { stoppedBy } = run.group;
    return buildResult({ command, collected, maxBytes, exit, stoppedBy, timeoutMs, started, ref });
  },
});

/** A started command: its bash, its output so far, how it ends, and its group's stopping. */
interface CommandRun {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly watchdog: ChildProcess | undefined;
  readonly collected: Collected;
  readonly exited: Promise<CommandExit>;
  /** Resolves when bash has exited and its output pipes are closed. */
  readonly closed: Promise<void>;
  readonly group: GroupStop;
}

/**
 * Spawn `bash -c <command>` leading its own process group, with its orphan watchdog and
 * its output collected; resolves once it runs.
 *
 * @throws the spawn error when bash could not be started.
 */
async function startCommand(options: {
  command: string;
  cwd: string | undefined;
  env: Readonly<Record<string, string>>;
  maxBytes: number;
  keepBytes: number;
}): Promise<CommandRun> {
  const { env } = options;
  const child = spawn('bash', ['-c', options.command], {
    cwd: options.cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // If this worker process dies (SIGKILL, OOM), nothing here can stop the group: a watchdog
  // in a group of its own kills it within a second of the worker's death. Started in the
  // same tick as the command, so no await leaves the command unwatched.
  const watchdog = child.pid === undefined ? undefined : startOrphanWatchdog(child.pid, env);
  const collected = collectOutput(
    [child.stdout, child.stderr],
    options.maxBytes,
    options.keepBytes,
  );
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const exited = new Promise<CommandExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await spawned;
  // An 'error' after spawn (a failed kill) has nothing left to reject; keep it from crashing.
  child.on('error', () => undefined);
  const group: GroupStop = { pid: child.pid as number, stopStarted: 0 };
  return { child, watchdog, collected, exited, closed, group };
}

/**
 * Wait for the command to exit and release its output pipes, heartbeating, and stopping
 * its group on abort or after `timeoutMs`.
 */
async function runToExit(
  run: CommandRun,
  context: ToolContext,
  timeoutMs: number,
  started: number,
): Promise<CommandExit> {
  const unwatch = watchCommand(run, context, timeoutMs, started);
  try {
    const exit = await run.exited;
    await drainPipes(run);
    return exit;
  } finally {
    unwatch();
  }
}

/** Stop the command on abort or timeout, and heartbeat while it runs; returns the undo. */
function watchCommand(
  run: CommandRun,
  context: ToolContext,
  timeoutMs: number,
  started: number,
): () => void {
  const { group } = run;
  // The activity aborts the signal with a TimeoutError when the tool's budget runs out.
  const onAbort = (): void =>
    stopCommand(
      group,
      (context.signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError'
        ? 'timeout'
        : 'abort',
    );
  context.signal.addEventListener('abort', onAbort, { once: true });
  // An abort while bash was starting fired no event.
  if (context.signal.aborted) onAbort();
  // Node fires longer timers at once, so a budget past its limit means no timer at all.
  const timeout =
    timeoutMs <= MAX_TIMER_MS
      ? setTimeout(() => stopCommand(group, 'timeout'), Math.max(0, timeoutMs))
      : undefined;
  const heartbeat = setInterval(() => {
    context.heartbeat({ elapsedMs: Date.now() - started, outputBytes: run.collected.totalBytes });
  }, BASH_HEARTBEAT_INTERVAL_MS);
  return () => {
    clearInterval(heartbeat);
    clearTimeout(timeout);
    context.signal.removeEventListener('abort', onAbort);
  };
}

/**
 * After bash exits, background jobs may still hold the pipes: give them a moment, then stop
 * them; if the pipes stay open even so, stop reading.
 */
async function drainPipes(run: CommandRun): Promise<void> {
  const grace = run.group.stoppedBy ? BASH_KILL_GRACE_MS + BASH_PIPE_GRACE_MS : BASH_PIPE_GRACE_MS;
  if (await closedWithin(run.closed, grace)) return;
  stopGroup(run.group);
  // Something outside the group holds the pipes: stop reading rather than wait forever.
  if (!(await closedWithin(run.closed, BASH_KILL_GRACE_MS + BASH_PIPE_GRACE_MS))) {
    run.child.stdout.destroy();
    run.child.stderr.destroy();
  }
}

/** Whether `closed` resolves within `ms`. */
async function closedWithin(closed: Promise<void>, ms: number): Promise<boolean> {
  const timer = delay(ms);
  const done = await Promise.race([closed.then(() => true), timer.promise.then(() => false)]);
  timer.cancel();
  return done;
}
