/**
 * The CLI's one error: what the entry point reports as one line (`durable-agent: <message>`)
 * and the exit code it leaves with.
 *
 * @module
 */
import { messageOf } from '../common/errors.js';

/**
 * An error the CLI reports as one line: a usage error exits 2, anything else 1, unless
 * `exitCode` says otherwise (`golden` exits 2 for bad input: 1 means decisions changed).
 */
export class CliError extends Error {
  /** The process exit code. */
  readonly exitCode: number;
  constructor(
    message: string,
    options: { usage?: boolean; exitCode?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'CliError';
    this.exitCode = options.exitCode ?? (options.usage ? 2 : 1);
  }
}

/** An error's message on one line: its first non-blank line. */
export function oneLine(error: unknown): string {
  const message = messageOf(error);
  const first = message.split('\n').find((line) => line.trim() !== '') ?? message;
  return first.trim();
}
