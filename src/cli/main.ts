#!/usr/bin/env node
/**
 * `durable-agent`: inspect, replay and drive durable agent sessions, or run an agent module
 * on an embedded dev server. Built: `durable-agent <command>`; from source:
 * `npx tsx src/cli/main.ts <command>`. `durable-agent --help` lists the commands.
 *
 * Errors are one line on stderr (`durable-agent: <message>`), exit 2 for usage errors and
 * 1 otherwise; `DEBUG` set adds the stack.
 *
 * @module
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from './args.js';
import { CliError, oneLine } from './cli-error.js';
import type { CliOutput } from './command-args.js';
import { COMMANDS } from './command-table.js';
import { helpText } from './help.js';
import { ownPackage } from './own-package.js';

/**
 * Run the CLI on `argv` (without `node` and the script).
 * @returns the exit code; never throws.
 */
export async function main(argv: readonly string[], io: CliOutput = stdio): Promise<number> {
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.kind === 'help') {
      io.out(helpText(parsed.command));
      return 0;
    }
    if (parsed.kind === 'version') {
      io.out(ownPackage().version);
      return 0;
    }
    // Loaded on demand: help and usage errors answer without loading Temporal's client.
    const run = await COMMANDS[parsed.command].load();
    // One bound for every wait of the command (connect, server calls, the worker's answer).
    return await run({ ...parsed, deadline: Date.now() + parsed.timeoutMs }, io);
  } catch (error) {
    io.err(`durable-agent: ${oneLine(error)}`);
    if (process.env.DEBUG) io.err(debugDetail(error));
    return error instanceof CliError ? error.exitCode : 1;
  }
}

const stdio: CliOutput = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

function debugDetail(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    parts.push(e instanceof Error ? (e.stack ?? e.message) : String(e));
    e = (e as { cause?: unknown }).cause;
    if (e) parts.push('caused by:');
  }
  return parts.join('\n');
}

/** Whether this module is the program being run (not imported). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/**
 * Resolves once all that was written to `stream` is handed to the OS, or the stream failed
 * (a reader gone: EPIPE). Writes to a pipe are asynchronous: what the pipe cannot take yet
 * waits in the process, and `process.exit` drops it.
 */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    // The callback of an empty write runs after every earlier write's, with or without error.
    stream.write('', () => resolve());
  });
}

if (isEntryPoint()) {
  // A reader that leaves early (`| head`) is no error of the command: stop writing, quietly.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const code = await main(process.argv.slice(2));
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  // Native handles (Temporal's runtime, gRPC) may outlive the command: leave explicitly.
  process.exit(code);
}
