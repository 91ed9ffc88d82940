import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/common/errors.js';
import {
  WorkspaceError,
  isInside,
  normalizeRoots,
  resolveInWorkspace,
  workspacePath,
} from '../../../src/tools/workspace.js';
import { makeSandbox, type Sandbox } from './fixtures.js';

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  await box.cleanup();
});

async function refusal(
  path: string,
  mode: 'read' | 'write',
  roots = [box.root],
): Promise<WorkspaceError> {
  const error = await resolveInWorkspace(roots, path, mode).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  return error as WorkspaceError;
}

describe('resolveInWorkspace', () => {
  it('resolves a relative path against the first root', async () => {
    await expect(resolveInWorkspace([box.root], 'sub/b.txt', 'read')).resolves.toBe(
      join(box.root, 'sub', 'b.txt'),
    );
  });

  it('accepts an absolute path inside any root', async () => {
    const second = join(box.base, 'second');
    await mkdir(second);
    await writeFile(join(second, 'x.txt'), 'x');
    await expect(
      resolveInWorkspace([box.root, second], join(second, 'x.txt'), 'read'),
    ).resolves.toBe(join(second, 'x.txt'));
  });

  it('accepts a not-yet-existing path in write mode, with missing folders', async () => {
    await expect(resolveInWorkspace([box.root], 'new/deep/file.txt', 'write')).resolves.toBe(
      join(box.root, 'new', 'deep', 'file.txt'),
    );
  });

  it("refuses a missing path in read mode with reason 'not_found'", async () => {
    expect((await refusal('nope.txt', 'read')).reason).toBe('not_found');
  });

  it('refuses a ../ escape', async () => {
    const error = await refusal('../outside/secret.txt', 'read');
    expect(error.reason).toBe('outside_workspace');
  });

  it('refuses ../ that climbs out and back in through a sibling', async () => {
    expect((await refusal('sub/../../ws-evil/secret.txt', 'write')).reason).toBe(
      'outside_workspace',
    );
  });

  it('refuses an absolute path outside the roots', async () => {
    expect((await refusal(join(box.outside, 'secret.txt'), 'read')).reason).toBe(
      'outside_workspace',
    );
  });

  it('refuses a sibling folder whose name starts with the root name', async () => {
    expect((await refusal(join(box.evil, 'secret.txt'), 'read')).reason).toBe('outside_workspace');
    expect((await refusal(box.evil, 'write')).reason).toBe('outside_workspace');
  });

  it('refuses a symlink inside the root that points outside, in both modes', async () => {
    expect((await refusal('link-file', 'read')).reason).toBe('outside_workspace');
    expect((await refusal('link-file', 'write')).reason).toBe('outside_workspace');
  });

  it('refuses a path through a symlinked folder that points outside', async () => {
    expect((await refusal('link-dir/secret.txt', 'read')).reason).toBe('outside_workspace');
  });

  it('refuses a new file under a symlinked folder that points outside', async () => {
    expect((await refusal('link-dir/new/file.txt', 'write')).reason).toBe('outside_workspace');
  });

  it('refuses a dangling symlink whose target is outside, in both modes', async () => {
    expect((await refusal('dangling', 'write')).reason).toBe('outside_workspace');
    expect((await refusal('dangling', 'read')).reason).toBe('outside_workspace');
  });

  it('follows a symlink whose target is inside, to the target', async () => {
    await symlink(join(box.root, 'a.txt'), join(box.root, 'inner-link'));
    await expect(resolveInWorkspace([box.root], 'inner-link', 'read')).resolves.toBe(
      join(box.root, 'a.txt'),
    );
  });

  it('follows a dangling symlink whose target is inside, in write mode', async () => {
    await symlink('sub/later.txt', join(box.root, 'later-link'));
    await expect(resolveInWorkspace([box.root], 'later-link', 'write')).resolves.toBe(
      join(box.root, 'sub', 'later.txt'),
    );
  });

  it('applies .. after a symlink as the kernel does: from the target', async () => {
    // link-dir/.. is the parent of outside/, not the root.
    expect((await refusal('link-dir/../ws-evil/secret.txt', 'read')).reason).toBe(
      'outside_workspace',
    );
  });

  it("refuses a symlink loop with reason 'symlink_loop'", async () => {
    await symlink('loop-b', join(box.root, 'loop-a'));
    await symlink('loop-a', join(box.root, 'loop-b'));
    expect((await refusal('loop-a', 'write')).reason).toBe('symlink_loop');
  });

  it('allows a file whose name starts with two dots', async () => {
    await expect(resolveInWorkspace([box.root], '..notes', 'write')).resolves.toBe(
      join(box.root, '..notes'),
    );
  });

  it('accepts paths given through a symlinked root, returning real paths', async () => {
    const alias = join(box.base, 'ws-alias');
    await symlink(box.root, alias);
    await expect(resolveInWorkspace([alias], join(alias, 'a.txt'), 'read')).resolves.toBe(
      join(box.root, 'a.txt'),
    );
  });

  it('is a ToolError with code TOOL_ERROR whose message names the path and the roots', async () => {
    const error = await refusal('../outside/secret.txt', 'read');
    expect(error).toBeInstanceOf(ToolError);
    expect(error.code).toBe('TOOL_ERROR');
    expect(error.name).toBe('WorkspaceError');
    expect(error.message).toContain('../outside/secret.txt');
    expect(error.message).toContain(box.root);
    expect(error.roots).toEqual([box.root]);
  });

  it("refuses an empty path with reason 'invalid_path'", async () => {
    expect((await refusal('', 'read')).reason).toBe('invalid_path');
  });
});

describe('normalizeRoots', () => {
  it('returns real paths without duplicates', async () => {
    const alias = join(box.base, 'ws-alias');
    await symlink(box.root, alias);
    await expect(normalizeRoots([alias, box.root, box.outside])).resolves.toEqual([
      box.root,
      box.outside,
    ]);
  });

  it("throws a WorkspaceError 'invalid_root' for no roots, a missing root or a file", async () => {
    for (const roots of [[], [join(box.base, 'missing')], [join(box.root, 'a.txt')]]) {
      const error = await normalizeRoots(roots).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkspaceError);
      expect((error as WorkspaceError).reason).toBe('invalid_root');
    }
  });
});

describe('isInside and workspacePath', () => {
  it('compares by path segments, not string prefixes', () => {
    expect(isInside('/ws', '/ws')).toBe(true);
    expect(isInside('/ws', '/ws/a/b')).toBe(true);
    expect(isInside('/ws', '/ws-evil/a')).toBe(false);
    expect(isInside('/ws', '/ws/../etc')).toBe(false);
    expect(isInside('/ws', '/ws/..a')).toBe(true);
  });

  it('resolves against the first root without touching the disk', () => {
    expect(workspacePath(['/ws', '/other'], 'a/b.txt')).toBe('/ws/a/b.txt');
    expect(workspacePath(['/ws'], '/abs/x')).toBe('/abs/x');
  });
});
