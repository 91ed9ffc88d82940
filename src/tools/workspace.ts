/**
 * The workspace path guard: every path a file tool touches is resolved here first, and
 * only paths whose real location is inside a workspace root come back.
 *
 * @module
 */
import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';
import { ToolError } from '../common/errors.js';

/** Why a path was refused. */
type WorkspaceErrorReason =
  /** No workspace roots are configured, or a root does not exist or is not a directory. */
  | 'invalid_root'
  /** The path is empty or contains a NUL byte. */
  | 'invalid_path'
  /** The path, after following every symlink, is outside all roots. */
  | 'outside_workspace'
  /** Too many symlinks to follow (a loop). */
  | 'symlink_loop'
  /** Read mode only: nothing exists at the path. */
  | 'not_found';

/**
 * A path was refused by the workspace guard. Its `code` is `'TOOL_ERROR'`; `reason` says
 * why, and the message names the path and the roots.
 */
export class WorkspaceError extends ToolError {
  /** The path as the caller gave it. */
  readonly path: string;
  /** The (real) roots it was checked against. */
  readonly roots: readonly string[];
  /** Why it was refused. */
  readonly reason: WorkspaceErrorReason;
  constructor(
    reason: WorkspaceErrorReason,
    path: string,
    roots: readonly string[],
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.reason = reason;
    this.path = path;
    this.roots = roots;
  }
}

/** Linux's own limit on symlinks followed while resolving one path. */
const MAX_SYMLINK_HOPS = 40;

function describeRoots(roots: readonly string[]): string {
  return roots.length === 0 ? '(none)' : roots.map((r) => `'${r}'`).join(', ');
}

function isErrnoException(error: unknown, ...codes: string[]): boolean {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    codes.includes((error as NodeJS.ErrnoException).code as string)
  );
}

/**
 * Whether `candidate` is `root` or below it. Compares by `path.relative`, so `/ws-evil` is
 * not inside `/ws`, while a file named `..notes` inside the root is.
 */
export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  if (rel === '') return true;
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * The absolute path `path` names, resolved against the first root, without touching the
 * disk and without following symlinks. For `affectedPaths` and messages, never for access:
 * use {@link resolveInWorkspace} before reading or writing.
 *
 * @param roots Workspace roots; the first is the base of relative paths (the process's
 *   working directory when there is none).
 * @param path Absolute, or relative to the first root.
 */
export function workspacePath(roots: readonly string[], path: string): string {
  return resolve(roots[0] ?? process.cwd(), path);
}

/**
 * Resolve workspace roots to their real, absolute paths (symlinks followed, e.g. `/tmp` on
 * macOS), without duplicates, in the given order.
 *
 * @param roots Directories; relative ones resolve against the process's working directory.
 * @returns The real paths.
 * @throws {WorkspaceError} (`reason: 'invalid_root'`) when `roots` is empty or a root does
 *   not exist or is not a directory.
 */
export async function normalizeRoots(roots: readonly string[]): Promise<string[]> {
  if (roots.length === 0) {
    throw new WorkspaceError('invalid_root', '', [], 'No workspace roots are configured');
  }
  const out: string[] = [];
  for (const root of roots) {
    let real: string;
    try {
      real = await realpath(resolve(root));
      if (!(await stat(real)).isDirectory()) {
        throw new WorkspaceError(
          'invalid_root',
          root,
          roots,
          `Workspace root '${root}' is not a directory`,
        );
      }
    } catch (error) {
      if (error instanceof WorkspaceError) throw error;
      throw new WorkspaceError(
        'invalid_root',
        root,
        roots,
        `Workspace root '${root}' cannot be resolved: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (!out.includes(real)) out.push(real);
  }
  return out;
}

/**
 * Where `absolutePath` really leads: every symlink on the way is followed, a dangling one
 * included (to the target it would create or write), and components that do not exist yet
 * are kept as they are. The result has no symlink in its existing part.
 */
async function followPath(
  absolutePath: string,
  onLoop: () => never,
): Promise<{ path: string; exists: boolean; climbsThroughMissing?: boolean }> {
  const fsRoot = parse(absolutePath).root;
  const pending = absolutePath.slice(fsRoot.length).split(sep).filter(Boolean);
  let current = fsRoot;
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '.') continue;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    let isLink: boolean;
    try {
      isLink = (await lstat(next)).isSymbolicLink();
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT', 'ENOTDIR')) throw error;
      // Nothing exists from here on: the rest is what a write would create. A `..` after a
      // missing folder cannot be walked (the kernel fails it too); resolving it as text
      // would climb back into real folders whose symlinks were never followed.
      if (pending.includes('..')) return { path: next, exists: false, climbsThroughMissing: true };
      return { path: resolve(next, ...pending), exists: false };
    }
    if (!isLink) {
      current = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) onLoop();
    const target = await readlink(next);
    const targetRoot = parse(target).root;
    if (targetRoot !== '') current = targetRoot;
    pending.unshift(...target.slice(targetRoot.length).split(sep).filter(Boolean));
  }
  return { path: current, exists: true };
}

/**
 * Resolve `path` to an absolute real path inside one of the workspace roots, or refuse it.
 *
 * Every symlink on the path is followed, including the last component and including
 * dangling ones, so `../` escapes, absolute paths elsewhere, sibling folders such as
 * `/ws-evil` next to `/ws`, symlinks (to files or folders) leading out, and new files under
 * such folders are all refused. Use the returned path, not the given one, for the access.
 *
 * @param roots Workspace roots; they are realpath'd first. The first one is the base of
 *   relative paths.
 * @param path The path the tool was given: absolute, or relative to the first root.
 * @param mode `'read'`: the path must exist. `'write'`: missing components are allowed
 *   (a write creates them), and a final symlink is checked by its target.
 * @returns The real absolute path (for a missing path: real existing prefix plus the rest).
 * @throws {WorkspaceError} when the path leaves every root (`'outside_workspace'`), does
 *   not exist in read mode (`'not_found'`), loops (`'symlink_loop'`), is empty
 *   (`'invalid_path'`), or a root is unusable (`'invalid_root'`).
 */
export async function resolveInWorkspace(
  roots: readonly string[],
  path: string,
  mode: 'read' | 'write',
): Promise<string> {
  const realRoots = await normalizeRoots(roots);
  if (path === '' || path.includes('\0')) {
    throw new WorkspaceError('invalid_path', path, realRoots, `Invalid path '${path}'`);
  }
  // Joined, not resolved: `..` is applied while walking, after symlinks, as the kernel does.
  const absolute = isAbsolute(path) ? path : `${realRoots[0] as string}${sep}${path}`;
  const followed = await followPath(absolute, () => {
    throw new WorkspaceError(
      'symlink_loop',
      path,
      realRoots,
      `Too many symlinks while resolving '${path}'`,
    );
  });
  if (followed.climbsThroughMissing) {
    throw new WorkspaceError(
      'not_found',
      path,
      realRoots,
      `Path '${path}' goes through a folder that does not exist ('${followed.path}') and then '..'`,
    );
  }
  if (!realRoots.some((root) => isInside(root, followed.path))) {
    throw new WorkspaceError(
      'outside_workspace',
      path,
      realRoots,
      `Path '${path}' resolves outside the workspace roots ${describeRoots(realRoots)}`,
    );
  }
  if (mode === 'read' && !followed.exists) {
    throw new WorkspaceError('not_found', path, realRoots, `No such file or directory: '${path}'`);
  }
  return followed.path;
}
