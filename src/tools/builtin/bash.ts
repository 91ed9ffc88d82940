/**
 * `Bash`: run a shell command in the workspace, in its own process group so that stopping
 * it stops everything it started.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { z } from 'zod';
import type { ToolResult } from '../../common/types.js';
import { cutPrefix, utf8PrefixLength } from '../../common/text.js';
import { truncationMarker } from '../output.js';
import { defineTool } from '../tool.js';
import { normalizeRoots } from '../workspace.js';

/** How often a running command reports liveness through `context.heartbeat`, ms. */
const BASH_HEARTBEAT_INTERVAL_MS = 1000;

/** Time between SIGTERM and SIGKILL to the process group when stopping a command, ms. */
const BASH_KILL_GRACE_MS = 2000;

/**
 * How long to wait, after bash itself exits, for whatever it left running to release the
 * output pipes before those stragglers are stopped too, ms.
 */
const BASH_PIPE_GRACE_MS = 1000;

/** The longest delay `setTimeout` takes, ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Room kept under the output cap for the truncation marker and the exit line, bytes. */
const NOTE_RESERVE_BYTES = 300;

/** Bytes kept past the keep limit, so kept output can end on a whole UTF-8 character. */
const UTF8_LOOKAHEAD_BYTES = 3;

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

function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    // ESRCH: the group is gone already.
    return false;
  }
}

/** Resolves after `ms`; `cancel` clears the timer. */
function delay(ms: number): { promise: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/**
 * Whether any process of group `pgid` is still running. On Linux a zombie (dead, waiting
 * for an init that may reap slowly, as in many containers) does not count, read from
 * `/proc`; elsewhere any member does.
 */
async function groupAlive(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // After the parenthesised command name: state, ppid, pgrp, ...
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

/** Poll until no process of the group runs, or until `deadline` (epoch ms). */
async function waitGroupGone(pgid: number, deadline: number): Promise<void> {
  while ((await groupAlive(pgid)) && Date.now() < deadline) {
    const tick = delay(Math.min(50, Math.max(1, deadline - Date.now())));
    await tick.promise;
  }
}

interface Collected {
  chunks: Buffer[];
  keptBytes: number;
  totalBytes: number;
}

/**
 * Output that went past the keep limit is cut back to it, on a character boundary, so the
 * kept bytes (the saved full output, and the head the model sees) decode to whole characters.
 */
function endOnCharacter(collected: Collected, keepBytes: number): void {
  if (collected.totalBytes <= collected.keptBytes) return;
  const all = Buffer.concat(collected.chunks, collected.keptBytes);
  const kept = all.subarray(0, utf8PrefixLength(all, keepBytes));
  collected.chunks = [kept];
  collected.keptBytes = kept.length;
}

function summaryOf(command: string): string {
  const firstLine = command.split('\n', 1)[0] ?? '';
  return firstLine.length > 80 ? `${cutPrefix(firstLine, 77)}...` : firstLine;
}

/**
 * Run a shell command: `bash -c <command>`, cwd the first workspace root, stdin closed,
 * environment `context.env` (when absent, {@link toolEnvironment} of the worker's: never
 * the worker's whole environment). It leads its own process group (`detached`).
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
    const child = spawn('bash', ['-c', input.command], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // If this worker process dies (SIGKILL, OOM), nothing here can stop the group: a watchdog
    // in a group of its own kills it within a second of the worker's death. Started in the
    // same tick as the command, so no await leaves the command unwatched.
    const watchdog = child.pid === undefined ? undefined : startOrphanWatchdog(child.pid, env);
    const collected: Collected = { chunks: [], keptBytes: 0, totalBytes: 0 };
    const collect = (chunk: Buffer): void => {
      collected.totalBytes += chunk.length;
      // Keep one byte past the cap so we know it was passed (or, when full outputs are
      // saved, up to their limit), and a few more to end on a whole character; drain the
      // rest unseen.
      const room =
        (Number.isFinite(maxBytes) ? keepBytes + UTF8_LOOKAHEAD_BYTES : Infinity) -
        collected.keptBytes;
      if (room <= 0) return;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      collected.chunks.push(kept);
      collected.keptBytes += kept.length;
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);

    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    await spawned;
    // An 'error' after spawn (a failed kill) has nothing left to reject; keep it from crashing.
    child.on('error', () => undefined);
    const pid = child.pid as number;

    let stoppedBy: 'abort' | 'timeout' | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let stopStarted = 0;
    const stopGroup = (): void => {
      signalGroup(pid, 'SIGTERM');
      if (killTimer === undefined) stopStarted = Date.now();
      killTimer ??= setTimeout(() => {
        if (signalGroup(pid, 0)) signalGroup(pid, 'SIGKILL');
      }, BASH_KILL_GRACE_MS);
    };
    const stop = (reason: 'abort' | 'timeout'): void => {
      stoppedBy ??= reason;
      stopGroup();
    };
    // The activity aborts the signal with a TimeoutError when the tool's budget runs out.
    const onAbort = (): void =>
      stop(
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
        ? setTimeout(() => stop('timeout'), Math.max(0, timeoutMs))
        : undefined;
    const heartbeat = setInterval(() => {
      context.heartbeat({ elapsedMs: Date.now() - started, outputBytes: collected.totalBytes });
    }, BASH_HEARTBEAT_INTERVAL_MS);

    let exit: { code: number | null; signal: NodeJS.Signals | null };
    try {
      exit = await exited;
      // Background jobs may still hold the pipes; give them a moment, then stop them.
      const grace = delay(stoppedBy ? BASH_KILL_GRACE_MS + BASH_PIPE_GRACE_MS : BASH_PIPE_GRACE_MS);
      const pipesClosed = await Promise.race([
        closed.then(() => true),
        grace.promise.then(() => false),
      ]);
      grace.cancel();
      if (!pipesClosed) {
        stopGroup();
        const last = delay(BASH_KILL_GRACE_MS + BASH_PIPE_GRACE_MS);
        const closedNow = await Promise.race([
          closed.then(() => true),
          last.promise.then(() => false),
        ]);
        last.cancel();
        // Something outside the group holds the pipes: stop reading rather than wait forever.
        if (!closedNow) {
          child.stdout.destroy();
          child.stderr.destroy();
        }
      }
    } finally {
      clearInterval(heartbeat);
      clearTimeout(timeout);
      context.signal.removeEventListener('abort', onAbort);
    }
    // Whatever ignored SIGTERM gets SIGKILL when its grace ends; we return after that.
    if (killTimer) {
      clearTimeout(killTimer);
      await waitGroupGone(pid, stopStarted + BASH_KILL_GRACE_MS);
      if (await groupAlive(pid)) signalGroup(pid, 'SIGKILL');
    }

    stopWatchdog(watchdog);
    endOnCharacter(collected, keepBytes);
    let ref: string | undefined;
    if (collected.totalBytes > maxBytes && context.saveFullOutput) {
      const all = Buffer.concat(collected.chunks, collected.keptBytes);
      ref = await context.saveFullOutput(all).catch(() => undefined);
    }
    return buildResult(
      input.command,
      collected,
      maxBytes,
      exit,
      stoppedBy,
      timeoutMs,
      started,
      ref,
    );
  },
});

/**
 * A tiny detached shell that polls this process every second and, once it is gone, kills
 * the command's process group. Stopped (with its own group) when the command ends normally.
 */
function startOrphanWatchdog(
  groupId: number,
  env: Readonly<Record<string, string>>,
): ChildProcess | undefined {
  try {
    const watchdog = spawn(
      'bash',
      [
        '-c',
        'while kill -0 "$1" 2>/dev/null && kill -0 -- "-$2" 2>/dev/null; do sleep 1; done; kill -0 "$1" 2>/dev/null || kill -KILL -- "-$2" 2>/dev/null',
        'watchdog',
        String(process.pid),
        String(groupId),
      ],
      { detached: true, stdio: 'ignore', env },
    );
    watchdog.on('error', () => undefined);
    watchdog.unref();
    return watchdog;
  } catch {
    return undefined;
  }
}

function stopWatchdog(watchdog: ChildProcess | undefined): void {
  if (watchdog?.pid === undefined) return;
  try {
    process.kill(-watchdog.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function buildResult(
  command: string,
  collected: Collected,
  maxBytes: number,
  exit: { code: number | null; signal: NodeJS.Signals | null },
  stoppedBy: 'abort' | 'timeout' | undefined,
  timeoutMs: number,
  started: number,
  ref: string | undefined,
): ToolResult {
  const all = Buffer.concat(collected.chunks, collected.keptBytes);
  const truncated = collected.totalBytes > maxBytes;
  let output: string;
  if (truncated) {
    const shown = utf8PrefixLength(all, Math.max(0, maxBytes - NOTE_RESERVE_BYTES));
    output =
      all.subarray(0, shown).toString('utf8') +
      truncationMarker(collected.totalBytes, shown, ref, collected.keptBytes);
  } else {
    output = all.toString('utf8');
  }
  const metadata = {
    exitCode: exit.code,
    signal: exit.signal,
    outputBytes: collected.totalBytes,
    truncated,
    durationMs: Date.now() - started,
  };
  const display = (status: string) => ({ summary: `$ ${summaryOf(command)} (${status})` });
  const extra = truncated && ref !== undefined ? { outputRef: ref } : {};
  const body = output === '' ? '' : output.endsWith('\n') ? output : `${output}\n`;

  if (stoppedBy === 'timeout') {
    const message = `Command timed out after ${timeoutMs} ms and was killed`;
    return {
      status: 'error',
      model: `${body}${message}`,
      display: display('timed out'),
      error: { type: 'TimeoutError', message },
      metadata,
      ...extra,
    };
  }
  if (stoppedBy === 'abort') {
    const message = 'Command was cancelled and killed';
    return {
      status: 'error',
      model: `${body}${message}`,
      display: display('cancelled'),
      error: { type: 'AbortError', message },
      metadata,
      ...extra,
    };
  }
  if (exit.signal !== null) {
    const message = `killed by signal ${exit.signal}`;
    return {
      status: 'error',
      model: `${body}${message}`,
      display: display(message),
      error: { type: 'KilledBySignal', message: `Command ${message}` },
      metadata,
      ...extra,
    };
  }
  if (exit.code !== 0) {
    const message = `exit code ${exit.code}`;
    return {
      status: 'error',
      model: `${body}${message}`,
      display: display(message),
      error: { type: 'NonZeroExit', message: `Command exited with code ${exit.code}` },
      metadata,
      ...extra,
    };
  }
  return {
    status: 'success',
    model: output === '' ? '(no output)' : output,
    display: display('exit code 0'),
    metadata,
    ...extra,
  };
}
