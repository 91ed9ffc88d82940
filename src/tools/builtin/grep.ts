/**
 * `Grep`: search file contents with a regular expression.
 *
 * @module
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { cutPrefix } from '../../common/text.js';
import { defineTool } from '../tool.js';
import { workspacePath } from '../workspace.js';
import { findWorkspaceFiles, patternError, resolveSearchDir, whyPatternLeaves } from './glob.js';

/** Most matching lines `Grep` returns. */
export const GREP_MAX_MATCHES = 1000;

/** Files larger than this are skipped, bytes. */
export const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** A matching line longer than this is cut, characters. */
export const GREP_MAX_LINE_CHARS = 500;

/** A file whose first this-many bytes hold a NUL byte is taken for binary and skipped. */
const BINARY_SNIFF_BYTES = 8000;

/** Folders never searched, besides `.git`. */
export const GREP_IGNORE: readonly string[] = ['**/node_modules/**'];

/** Input of {@link Grep}. */
export const grepInputSchema = z.object({
  /** JavaScript regular expression, without slashes or flags, matched line by line. */
  pattern: z.string().min(1),
  /** File or folder to search: absolute, or relative to the first root. @default the first root */
  path: z.string().min(1).optional(),
  /** Only files matching this glob (relative to the folder), e.g. `**\/*.ts`. @default all */
  glob: z.string().min(1).optional(),
});

/** Input of {@link Grep}. */
export type GrepInput = z.infer<typeof grepInputSchema>;

/** The file's text, or `undefined` when it is binary, too large, or unreadable. */
async function readTextFile(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    if (size > GREP_MAX_FILE_BYTES) return undefined;
    const bytes = await handle.readFile();
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
    return bytes.toString('utf8');
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Search files below a folder of the workspace (or one file) for lines matching a
 * JavaScript regular expression. Returns `file:line:text` lines (file relative to the
 * searched folder, line 1-based, text cut at {@link GREP_MAX_LINE_CHARS} characters), in
 * file order then line order, at most {@link GREP_MAX_MATCHES} of them, or
 * `No matches found`. Skips binary files, files over 10 MiB, `node_modules`, `.git`,
 * symlinks, and anything whose real path is outside the workspace roots.
 *
 * Error results: an invalid regular expression or a `glob` that is absolute or uses `..`
 * (`'InvalidPattern'`), or a `path` that is missing or outside the roots (`WorkspaceError`).
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
    let regex: RegExp;
    try {
      regex = new RegExp(input.pattern);
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

    const matches: string[] = [];
    let capped = false;
    let filesSearched = 0;
    search: for (const file of files) {
      context.signal.throwIfAborted();
      const text = await readTextFile(join(dir, file));
      if (text === undefined) continue;
      filesSearched++;
      if (filesSearched % 200 === 0) context.heartbeat({ filesSearched });
      const lines = text.split('\n');
      // A final newline ends the last line; it does not start another.
      if (lines[lines.length - 1] === '') lines.pop();
      for (let i = 0; i < lines.length; i++) {
        const line = (lines[i] as string).replace(/\r$/, '');
        if (!regex.test(line)) continue;
        if (matches.length >= GREP_MAX_MATCHES) {
          capped = true;
          break search;
        }
        const shown =
          line.length > GREP_MAX_LINE_CHARS ? `${cutPrefix(line, GREP_MAX_LINE_CHARS)}...` : line;
        matches.push(`${file}:${i + 1}:${shown}`);
      }
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
