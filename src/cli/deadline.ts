/**
 * The command's one deadline (`--timeout` from its start), which bounds every wait of it:
 * connecting, server calls, a worker's answer.
 *
 * @module
 */
import { isCallTimeout } from '../temporal/query.js';
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
  // gRPC DEADLINE_EXCEEDED and CANCELLED (how the client ends a call at its deadline).
  return isCallTimeout(error);
}
