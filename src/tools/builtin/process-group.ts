/**
 * Stopping a command's process group: signals to the group, liveness read from `/proc`, the
 * SIGTERM-then-SIGKILL stop of {@link GroupStop}, and the orphan watchdog that stops the
 * group if the worker dies. Used by the `Bash` tool.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';

/** Time between SIGTERM and SIGKILL to the process group when stopping a command, ms. */
export const BASH_KILL_GRACE_MS = 2000;

/** Send `signal` to process group `pid`; `false` when the group is gone already. */
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
export function delay(ms: number): { promise: Promise<void>; cancel(): void } {
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

/** The stopping of one command's process group: why, and since when. */
export interface GroupStop {
  /** The group's id: the pid of the command's bash. */
  readonly pid: number;
  /** Why the command was stopped, once it was: the first reason wins. */
  stoppedBy?: 'abort' | 'timeout';
  /** The SIGKILL due {@link BASH_KILL_GRACE_MS} after the first SIGTERM. */
  killTimer?: NodeJS.Timeout;
  /** When the first SIGTERM went, epoch ms. */
  stopStarted: number;
}

/** SIGTERM to the group now, SIGKILL {@link BASH_KILL_GRACE_MS} after the first SIGTERM. */
export function stopGroup(group: GroupStop): void {
  signalGroup(group.pid, 'SIGTERM');
  if (group.killTimer === undefined) group.stopStarted = Date.now();
  group.killTimer ??= setTimeout(() => {
    if (signalGroup(group.pid, 0)) signalGroup(group.pid, 'SIGKILL');
  }, BASH_KILL_GRACE_MS);
}

/** Stop the group for `reason` (kept if it is the first). */
export function stopCommand(group: GroupStop, reason: 'abort' | 'timeout'): void {
  group.stoppedBy ??= reason;
  stopGroup(group);
}

/**
 * Once the command is over: whatever of a stopped group ignored SIGTERM gets SIGKILL when
 * its grace ends, and this resolves after that.
 */
export async function finishStop(group: GroupStop): Promise<void> {
  if (!group.killTimer) return;
  clearTimeout(group.killTimer);
  await waitGroupGone(group.pid, group.stopStarted + BASH_KILL_GRACE_MS);
  if (await groupAlive(group.pid)) signalGroup(group.pid, 'SIGKILL');
}

/**
 * A tiny detached shell that polls this process every second and, once it is gone, kills
 * the command's process group. Stopped (with its own group) when the command ends normally.
 */
export function startOrphanWatchdog(
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

export function stopWatchdog(watchdog: ChildProcess | undefined): void {
  if (watchdog?.pid === undefined) return;
  try {
    process.kill(-watchdog.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
