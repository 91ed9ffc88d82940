/**
 * `Grep`: search file contents with a regular expression.
 *
 * @module
 */
import { basename, dirname } from 'node:path';
import { z } from 'zod';
import { cutPrefix } from '../../common/text.js';
import { defineTool } from '../tool.js';
import { workspacePath } from '../workspace.js';
import { findWorkspaceFiles, patternError, resolveSearchDir, whyPatternLeaves } from './glob.js';
import type { ToolResult } from '../../common/types.js';
import { searchInThread, type SearchOutcome } from './grep-thread.js';
import { BINARY_SNIFF_BYTES } from './read.js';

/** Most matching lines `Grep` returns. */
export const GREP_MAX_MATCHES = 1000;

/** Files larger than this are skipped, bytes. */
const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** A matching line longer than this is cut, characters. */
export const GREP_MAX_LINE_CHARS = 500;

/** Files searched between two heartbeats with progress details. */
const PROGRESS_EVERY_FILES = 200;

/** Folders never searched, besides `.git`. */
const GREP_IGNORE: readonly string[] = ['**/node_modules/**'];

/** Input of {@link Grep}. */
const grepInputSchema = z.object({
  /** JavaScript regular expression, without slashes or flags, matched line by line. */
  pattern: z.string().min(1),
  /** File or folder to search: absolute, or relative to the first root. @default the first root */
  path: z.string().min(1).optional(),
  /** Only files matching this glob (relative to the folder), e.g. `**\/*.ts`. @default all */
  glob: z.string().min(1).optional(),
});

/**
 * Search files below a folder of the workspace (or one file) for lines matching a
 * JavaScript regular expression. Returns `file:line:text` lines (file relative to the
 * searched folder, line 1-based, text cut at 500 (`GREP_MAX_LINE_CHARS`) characters), in
 * file order then line order, at most 1000 (`GREP_MAX_MATCHES`) of them, or
 * `No matches found`. Skips binary files, files over 10 MiB, `node_modules`, `.git`,
 * symlinks, and anything whose real path is outside the workspace roots.
 *
 * The files are read and the expression run in a thread of their own (`grep-worker.ts`),
 * never on the worker's event loop: a pattern that backtracks catastrophically, such as
 * `(a+)+$` over a long line, stalls only that thread. It is terminated when
 * `context.signal` aborts (the tool's budget, `toolTimeoutMs`, or the call's abort) or
 * after `context.timeoutMs`, whichever comes first; a thread that finished is reused by
 * the next call (`grep-thread.ts`).
 *
 * Error results: an invalid regular expression or a `glob` that is absolute or uses `..`
 * (`'InvalidPattern'`), a `path` that is missing or outside the roots (`WorkspaceError`),
 * a search stopped at its budget (`'TimeoutError'`, naming the file it was in) or by an
 * abort (`'AbortError'`), or a search thread that failed (its error's name).
 */
export const Grep = defineTool({
  name: 'Grep',
  description:
    'Search workspace files for lines matching a JavaScript regular expression. Narrow with ' +
    '`path` (file or folder) and `glob` (e.g. `**/*.ts`). Returns `file:line:text` lines.',
  kind: 'readonly',
  inputSchema: grepInputSchema,
  affectedPaths: (input, context) => [workspacePath(context.workspaceRoots, input.path ?? '.')],
  async execute(input, context) {
    const started = Date.now();
    try {
      // Compiling is linear in the pattern's length; only matching can run away.
      new RegExp(input.pattern);
    } catch (error) {
      return patternError(`Invalid regular expression: ${(error as Error).message}`);
    }
    if (input.glob !== undefined) {
      const why = whyPatternLeaves(input.glob);
      if (why) return patternError(why);
    }
    const target = await resolveSearchDir(context.workspaceRoots, input.path);
    const dir = target.isFile ? dirname(target.dir) : target.dir;
    const files = target.isFile
      ? [basename(target.dir)]
      : await findWorkspaceFiles({
          roots: context.workspaceRoots,
          dir,
          patterns: input.glob ?? '**/*',
          ignore: GREP_IGNORE,
          signal: context.signal,
        });

    const outcome = await searchInThread(
      {
        dir,
        files,
        pattern: input.pattern,
        maxMatches: GREP_MAX_MATCHES,
        maxFileBytes: GREP_MAX_FILE_BYTES,
        binarySniffBytes: BINARY_SNIFF_BYTES,
        // A code point is at most two UTF-16 units; one more tells the line was longer.
        lineUnits: 2 * GREP_MAX_LINE_CHARS + 1,
        progressEvery: PROGRESS_EVERY_FILES,
      },
      {
        signal: context.signal,
        timeoutMs: context.timeoutMs,
        started,
        heartbeat: (details) => context.heartbeat(details),
      },
    );
    if (outcome.kind !== 'done') return stoppedResult(outcome, files, context.timeoutMs, started);
    const { capped, filesSearched } = outcome;
    const matches: string[] = [];
    for (const { file, lineNumber, text: line } of outcome.matches) {
      const shown =
        line.length > GREP_MAX_LINE_CHARS ? `${cutPrefix(line, GREP_MAX_LINE_CHARS)}...` : line;
      matches.push(`${file}:${lineNumber}:${shown}`);
    }
    if (matches.length === 0) {
      return {
        status: 'success',
        model: 'No matches found',
        display: { summary: `No matches in ${filesSearched} files` },
      };
    }
    const note = capped
      ? `\n[... more than ${GREP_MAX_MATCHES} matches; narrow the pattern, path or glob ...]`
      : '';
    return {
      status: 'success',
      model: matches.join('\n') + note,
      display: { summary: `${matches.length} matching lines in ${filesSearched} files searched` },
    };
  },
});

/** The error result of a search that did not finish. */
function stoppedResult(
  outcome: Exclude<SearchOutcome, { kind: 'done' }>,
  files: readonly string[],
  timeoutMs: number,
  started: number,
): ToolResult {
  const durationMs = Date.now() - started;
  if (outcome.kind === 'failed') {
    const message = `Grep failed: ${outcome.message}`;
    return { status: 'error', model: message, error: { type: outcome.name, message } };
  }
  const where =
    outcome.file === undefined
      ? 'before it read a file'
      : `while searching ${outcome.file} (file ${outcome.fileIndex + 1} of ${files.length})`;
  const metadata = { durationMs, filesTotal: files.length };
  if (outcome.why === 'abort') {
    const message = `Grep was cancelled ${where}`;
    return {
      status: 'error',
      model: message,
      display: { summary: 'Grep cancelled' },
      error: { type: 'AbortError', message },
      metadata,
    };
  }
  const message = `Grep stopped at its time budget of ${timeoutMs} ms, ${where}`;
  return {
    status: 'error',
    model:
      `${message}. The regular expression may backtrack catastrophically (nested ` +
      'quantifiers such as (a+)+ on long lines): simplify it, or narrow path or glob.',
    display: { summary: `Grep timed out after ${durationMs} ms` },
    error: { type: 'TimeoutError', message },
    metadata,
  };
}
