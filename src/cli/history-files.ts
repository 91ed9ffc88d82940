/**
 * History files named on the command line (`writeHistoryFile`, `historyToJSON`, `temporal
 * workflow show --output json`): telling one from a session id, and reading it.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { ConfigError } from '../common/errors.js';
import { parseHistoryFile } from '../history/files.js';
import { CliError, oneLine } from './cli-error.js';

/** Whether a target names a history file rather than a session. */
export function isHistoryFile(target: string): boolean {
  return target.endsWith('.json') || existsSync(target);
}

/**
 * Read a history file (from `writeHistoryFile`, `historyToJSON` or `temporal workflow show
 * --output json`).
 * @throws {CliError} when it cannot be read or is not a workflow history.
 */
export function loadHistoryFile(path: string): History {
  if (!existsSync(path)) throw new CliError(`no such file: ${path}`);
  try {
    return parseHistoryFile(path);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(oneLine(error), { cause: error });
    throw error;
  }
}

/**
 * The workflow history a `.json` file holds (Temporal's history JSON, with an `events`
 * array), or `undefined` when it holds something else (a golden recording) or is not JSON.
 */
export function historyInFile(file: string): History | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // readGoldenSession says what is wrong with it
  }
  if (!isObject(parsed) || !Array.isArray(parsed.events)) return undefined;
  return loadHistoryFile(file);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
