/**
 * The errors of server calls and of the SDK, as the CLI's one line with the session's words:
 * a server that did not answer in time, a namespace or session that does not exist, a closed
 * session.
 *
 * @module
 */
import { AgentSdkError, SessionClosedError, SessionNotFoundError } from '../common/errors.js';
import { CliError, oneLine } from './cli-error.js';
import type { CommandArgs } from './command-args.js';
import { formatDuration } from './workers.js';

/** The error for a server that did not answer in time. */
export function serverTimeout(args: CommandArgs, what: string, error: unknown): CliError {
  return new CliError(
    `no answer from Temporal at ${args.address} within ${formatDuration(args.timeoutMs)} ` +
      `(${what}); pass a longer --timeout`,
    { cause: error },
  );
}

/** The error for a session the namespace does not hold. */
export function noSession(sessionId: string, args: CommandArgs): CliError {
  return new CliError(
    `no session '${sessionId}' in namespace '${args.namespace}' at ${args.address}`,
  );
}

/** The SDK's errors as one line, with the session's words. */
export function sessionError(error: unknown, args: CommandArgs, sessionId: string): CliError {
  if (error instanceof SessionNotFoundError) return noSession(sessionId, args);
  if (error instanceof SessionClosedError) {
    return new CliError(`session '${sessionId}' is closed`, { cause: error });
  }
  if (error instanceof AgentSdkError) return new CliError(oneLine(error), { cause: error });
  return serverError(error, args);
}

/** A server call's error as one line; a missing namespace named with the address. */
export function serverError(error: unknown, args: CommandArgs): CliError {
  if (isNamespaceError(error)) {
    return new CliError(`namespace '${args.namespace}' not found at ${args.address}`, {
      cause: error,
    });
  }
  return new CliError(oneLine(error), { cause: error });
}

function isNamespaceError(error: unknown): boolean {
  const e = error as { name?: unknown } | undefined;
  return e?.name === 'NamespaceNotFoundError' || /namespace .*not found/i.test(oneLine(error));
}
