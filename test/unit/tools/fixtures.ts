/** Shared set-up of the tool tests: real folders in a temp dir, a real tool context. */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '../../../src/tools/tool.js';

/** What every outside file holds; a tool's output must never contain it. */
export const SECRET = 'TOP-SECRET-CONTENT';

/**
 * A temp folder holding:
 * - `ws/`: the workspace root, with `a.txt`, `sub/b.txt`, and symlinks leading out:
 *   `link-file` -> `outside/secret.txt`, `link-dir` -> `outside/`,
 *   `dangling` -> `outside/created-by-dangling.txt` (does not exist);
 * - `ws-evil/secret.txt`: a sibling whose name starts with the root's;
 * - `outside/secret.txt`: plain outside.
 */
export interface Sandbox {
  base: string;
  root: string;
  outside: string;
  evil: string;
  cleanup(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'tools-test-')));
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  const evil = join(base, 'ws-evil');
  await mkdir(join(root, 'sub'), { recursive: true });
  await mkdir(outside);
  await mkdir(evil);
  await writeFile(join(root, 'a.txt'), 'alpha\nbeta\ngamma\n');
  await writeFile(join(root, 'sub', 'b.txt'), 'inside b\n');
  await writeFile(join(outside, 'secret.txt'), `${SECRET}\n`);
  await writeFile(join(evil, 'secret.txt'), `${SECRET}\n`);
  await symlink(join(outside, 'secret.txt'), join(root, 'link-file'));
  await symlink(outside, join(root, 'link-dir'));
  await symlink(join(outside, 'created-by-dangling.txt'), join(root, 'dangling'));
  return { base, root, outside, evil, cleanup: () => rm(base, { recursive: true, force: true }) };
}

/** Content and mtime of every file below `dirs`, to compare before and after. */
export async function snapshot(dirs: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const dir of dirs) {
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      const path = join(entry.parentPath, entry.name);
      if (!entry.isFile()) {
        out[path] = entry.isDirectory() ? 'dir' : 'other';
        continue;
      }
      const { mtimeMs, size } = await stat(path);
      out[path] = `${mtimeMs}:${size}:${readFileSync(path, 'utf8')}`;
    }
  }
  return out;
}

/** A tool context over `roots`, recording heartbeats. */
export function makeContext(
  roots: readonly string[],
  overrides: Partial<ToolContext> = {},
): ToolContext & { heartbeats: unknown[] } {
  const heartbeats: unknown[] = [];
  return {
    sessionId: 'session-1',
    toolUseId: 'tool-use-1',
    signal: new AbortController().signal,
    workspaceRoots: roots,
    timeoutMs: 60_000,
    maxOutputBytes: 64 * 1024,
    heartbeat: (details?: unknown) => {
      heartbeats.push(details);
    },
    ...overrides,
    heartbeats,
  };
}

/** Wait until `predicate` holds, polling every 20 ms, or fail after `timeoutMs`. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a process is alive; a zombie (exited, not yet reaped) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3 is the state; the command name before it is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
