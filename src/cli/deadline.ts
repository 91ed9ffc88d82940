/**
 * The command's one deadline (`--timeout` from its start), which bounds every wait of it:
 * connecting, server calls, a worker's answer.
 *
 * @module
 */
import type { CommandArgs } from './command-args.js';

/** When the command's waits end, ms since epoch. */
export function deadlineOf(args: CommandArgs): number {
  return args.deadline ?? Date.now() + args.timeoutMs;
}

/** How long the command may still wait, ms (negative once past its deadline). */
export function remainingMs(args: CommandArgs): number {
  return deadlineOf(args) - Date.now();
}

/** Whether `error` is a call ended by the command's deadline. */
export function isDeadline(error: unknown, args: CommandArgs): boolean {
  if (remainingMs(args) > 250) return false;
  for (let e: unknown = error, depth = 0; e && depth < 8; depth++) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    // gRPC DEADLINE_EXCEEDED and CANCELLED (how the client ends a call at its deadline).
    if (code === 4 || code === 1 || name === 'WorkflowUpdateRPCTimeoutOrCancelledError') {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
