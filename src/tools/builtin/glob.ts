/**
 * `Glob`: find files by name pattern. Also the file walk `Grep` uses.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve, sep } from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import type { ToolResult } from '../../common/types.js';
import { defineTool } from '../tool.js';
import { isInside, normalizeRoots, resolveInWorkspace, workspacePath } from '../workspace.js';

/** Most paths `Glob` returns; the rest are counted, not listed. */
const GLOB_MAX_RESULTS = 1000;

/** Folders never searched: version control internals. */
const GLOB_IGNORE: readonly string[] = ['**/.git/**'];

/** Input of {@link Glob}. */
const globInputSchema = z.object({
  /** Glob pattern relative to `path`, e.g. `src/**\/*.ts`. No absolute paths, no `..`. */
  pattern: z.string().min(1),
  /** Folder to search: absolute, or relative to the first root. @default the first root */
  path: z.string().min(1).optional(),
});

/**
 * Why `pattern` may not be used to search below a folder, or `undefined` when it may. A
 * pattern must be relative and must not climb with `..`; matches are also checked one by
 * one, so this is for a clear message, not the only guard.
 */
export function whyPatternLeaves(pattern: string): string | undefined {
  if (isAbsolute(pattern)) {
    return `pattern '${pattern}' must be relative to the searched folder (give the folder as path)`;
  }
  if (/(^|[/{,])\.\.($|[/},])/.test(pattern)) {
    return `pattern '${pattern}' must not contain '..'`;
  }
  return undefined;
}

/** What {@link findWorkspaceFiles} searches. */
interface FindFilesOptions {
  /** Workspace roots; matches whose real path is outside them are dropped. */
  roots: readonly string[];
  /** Real path of the folder to search; results are relative to it. */
  dir: string;
  /** Glob pattern(s) relative to `dir`. */
  patterns: string | readonly string[];
  /** Extra patterns to skip, besides {@link GLOB_IGNORE}. @default none */
  ignore?: readonly string[];
  /** Stops the walk. */
  signal?: AbortSignal;
}

/**
 * Files under `dir` matching `patterns`, as sorted paths relative to `dir`. Symlinks are not
 * followed, dotfiles are included, `.git` is skipped, and every match whose real path is
 * outside the workspace roots is dropped.
 */
export async function findWorkspaceFiles(options: FindFilesOptions): Promise<string[]> {
  const found = await glob(options.patterns, {
    cwd: options.dir,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: [...GLOB_IGNORE, ...(options.ignore ?? [])],
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const inside: string[] = [];
  for (const relative of found) {
    const absolute = resolve(options.dir, relative);
    if (!isInside(options.dir, absolute)) continue;
    try {
      await resolveInWorkspace(options.roots, absolute, 'read');
    } catch {
      continue;
    }
    inside.push(relative.split(sep).join('/'));
  }
  return inside.sort();
}

/**
 * The real folder a search runs in: `path` (checked by the workspace guard, must be a
 * folder) or the first root.
 *
 * @throws {WorkspaceError} when `path` is missing or leads outside the roots.
 */
export async function resolveSearchDir(
  roots: readonly string[],
  path: string | undefined,
): Promise<{ dir: string; isFile: boolean }> {
  if (path === undefined) {
    const [first] = await normalizeRoots(roots);
    return { dir: first as string, isFile: false };
  }
  const real = await resolveInWorkspace(roots, path, 'read');
  return { dir: real, isFile: !(await stat(real)).isDirectory() };
}

/** An error result for a pattern that would leave the searched folder. */
export function patternError(reason: string): ToolResult {
  return { status: 'error', model: reason, error: { type: 'InvalidPattern', message: reason } };
}

/**
 * List files matching a glob pattern (`**`, `*`, `?`, `{a,b}`, `[abc]`) below a folder of
 * the workspace. Returns one path per line, relative to the searched folder, sorted,
 * at most 1000 (`GLOB_MAX_RESULTS`) of them (with a line saying how many more there were),
 * or `No files found`. Dotfiles are included; `.git` and symlinks are not.
 *
 * Error results: a `path` that is missing, not a folder or outside the workspace roots
 * (`WorkspaceError`), or a pattern that is absolute or uses `..` (`'InvalidPattern'`).
 */
export const Glob = defineTool({
  name: 'Glob',
  description:
    'Find files in the workspace by glob pattern, e.g. `**/*.ts` or `src/**/index.{js,ts}`. ' +
    'Returns paths relative to the searched folder (`path`, default the workspace root).',
  kind: 'readonly',
  inputSchema: globInputSchema,
  affectedPaths: (input, context) => [workspacePath(context.workspaceRoots, input.path ?? '.')],
  async execute(input, context) {
    const why = whyPatternLeaves(input.pattern);
    if (why) return patternError(why);
    const { dir, isFile } = await resolveSearchDir(context.workspaceRoots, input.path);
    if (isFile) return patternError(`path '${input.path}' is a file, not a folder`);
    const files = await findWorkspaceFiles({
      roots: context.workspaceRoots,
      dir,
      patterns: input.pattern,
      signal: context.signal,
    });
    if (files.length === 0) {
      return { status: 'success', model: 'No files found', display: { summary: 'Found 0 files' } };
    }
    const shown = files.slice(0, GLOB_MAX_RESULTS);
    const more = files.length - shown.length;
    const model =
      shown.join('\n') +
      (more > 0 ? `\n[... ${more} more files not shown; narrow the pattern ...]` : '');
    return {
      status: 'success',
      model,
      display: { summary: `Found ${files.length} files in ${dir}` },
      data: shown,
    };
  },
});
