/**
 * The output of a `Bash` command: how it is collected under the byte caps, and the tool
 * result built from it and from how the command ended.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import type { ToolResult } from '../../common/types.js';
import { cutPrefix, utf8PrefixLength } from '../../common/text.js';
import { truncationMarker } from '../output.js';

/** Room kept under the output cap for the truncation marker and the exit line, bytes. */
const NOTE_RESERVE_BYTES = 300;

/** Bytes kept past the keep limit, so kept output can end on a whole UTF-8 character. */
const UTF8_LOOKAHEAD_BYTES = 3;

/** A command's output so far: the bytes kept, and how many there were in all. */
export interface Collected {
  chunks: Buffer[];
  keptBytes: number;
  totalBytes: number;
}

/**
 * Collect stdout and stderr together, in arrival order: past `keepBytes` (and a few bytes to
 * end on a whole character) the rest is counted and drained unseen; `maxBytes` not finite
 * keeps everything.
 */
export function collectOutput(
  streams: readonly Readable[],
  maxBytes: number,
  keepBytes: number,
): Collected {
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
  for (const stream of streams) stream.on('data', collect);
  return collected;
}

/**
 * Output that went past the keep limit is cut back to it, on a character boundary, so the
 * kept bytes (the saved full output, and the head the model sees) decode to whole characters.
 */
export function endOnCharacter(collected: Collected, keepBytes: number): void {
  if (collected.totalBytes <= collected.keptBytes) return;
  const all = Buffer.concat(collected.chunks, collected.keptBytes);
  const kept = all.subarray(0, utf8PrefixLength(all, keepBytes));
  collected.chunks = [kept];
  collected.keptBytes = kept.length;
}

/** How a command's bash exited: its code, or the signal that killed it. */
export interface CommandExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How a command ended, with its output: what {@link buildResult} reads. */
interface FinishedCommand {
  command: string;
  collected: Collected;
  /** The output cap (`context.maxOutputBytes`), bytes. */
  maxBytes: number;
  exit: CommandExit;
  stoppedBy: 'abort' | 'timeout' | undefined;
  /** The time limit it ran under, ms. */
  timeoutMs: number;
  /** When it started, epoch ms. */
  started: number;
  /** Where its full output was saved, if it was. */
  ref: string | undefined;
}

/** Why a command's result is an error: the line added to the output, the summary, the error. */
interface Failure {
  note: string;
  status: string;
  error: { type: string; message: string };
}

/** The result of a finished command: its output, and an error when it did not exit 0. */
export function buildResult(finished: FinishedCommand): ToolResult {
  const { collected, maxBytes, ref } = finished;
  const truncated = collected.totalBytes > maxBytes;
  const output = outputText(collected, maxBytes, ref);
  const metadata = {
    exitCode: finished.exit.code,
    signal: finished.exit.signal,
    outputBytes: collected.totalBytes,
    truncated,
    durationMs: Date.now() - finished.started,
  };
  const display = (status: string) => ({
    summary: `$ ${summaryOf(finished.command)} (${status})`,
  });
  const extra = truncated && ref !== undefined ? { outputRef: ref } : {};
  const failure = failureOf(finished);
  if (failure) {
    const body = output === '' ? '' : output.endsWith('\n') ? output : `${output}\n`;
    return {
      status: 'error',
      model: `${body}${failure.note}`,
      display: display(failure.status),
      error: failure.error,
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

/** The output as the model sees it: past `maxBytes`, its head and a truncation marker. */
function outputText(collected: Collected, maxBytes: number, ref: string | undefined): string {
  const all = Buffer.concat(collected.chunks, collected.keptBytes);
  if (collected.totalBytes <= maxBytes) return all.toString('utf8');
  const shown = utf8PrefixLength(all, Math.max(0, maxBytes - NOTE_RESERVE_BYTES));
  return (
    all.subarray(0, shown).toString('utf8') +
    truncationMarker(collected.totalBytes, shown, ref, collected.keptBytes)
  );
}

/** Why the command failed: stopped, killed by a signal, a non-zero exit; or `undefined`. */
function failureOf(finished: FinishedCommand): Failure | undefined {
  const { exit, stoppedBy } = finished;
  if (stoppedBy === 'timeout') {
    const message = `Command timed out after ${finished.timeoutMs} ms and was killed`;
    return { note: message, status: 'timed out', error: { type: 'TimeoutError', message } };
  }
  if (stoppedBy === 'abort') {
    const message = 'Command was cancelled and killed';
    return { note: message, status: 'cancelled', error: { type: 'AbortError', message } };
  }
  if (exit.signal !== null) {
    const message = `killed by signal ${exit.signal}`;
    return {
      note: message,
      status: message,
      error: { type: 'KilledBySignal', message: `Command ${message}` },
    };
  }
  if (exit.code !== 0) {
    const message = `exit code ${exit.code}`;
    return {
      note: message,
      status: message,
      error: { type: 'NonZeroExit', message: `Command exited with code ${exit.code}` },
    };
  }
  return undefined;
}

function summaryOf(command: string): string {
  const firstLine = command.split('\n', 1)[0] ?? '';
  return firstLine.length > 80 ? `${cutPrefix(firstLine, 77)}...` : firstLine;
}
