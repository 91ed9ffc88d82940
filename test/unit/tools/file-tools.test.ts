import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/common/json.js';
import type { ToolResult } from '../../../src/common/types.js';
import { Edit } from '../../../src/tools/builtin/edit.js';
import { Read } from '../../../src/tools/builtin/read.js';
import { Write } from '../../../src/tools/builtin/write.js';
import { runTool } from '../../../src/tools/run-tool.js';
import type { ToolDefinition } from '../../../src/tools/tool.js';
import { SECRET, makeContext, makeSandbox, snapshot, type Sandbox } from './fixtures.js';

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  await box.cleanup();
});

function run(tool: ToolDefinition, input: JsonObject, roots = [box.root]): Promise<ToolResult> {
  return runTool(tool, input, makeContext(roots));
}

/** Each way out of the workspace, as the path a tool is given. */
const escapes: Array<{ name: string; path: (box: Sandbox) => string }> = [
  { name: 'a ../ escape', path: () => '../outside/secret.txt' },
  { name: 'an absolute path outside', path: (b) => join(b.outside, 'secret.txt') },
  { name: 'a sibling folder named like the root', path: (b) => join(b.evil, 'secret.txt') },
  { name: 'a relative path into the sibling', path: () => '../ws-evil/secret.txt' },
  { name: 'a symlink to an outside file', path: () => 'link-file' },
  { name: 'a file under a symlinked outside folder', path: () => 'link-dir/secret.txt' },
  { name: 'a dangling symlink to an outside target', path: () => 'dangling' },
  { name: 'a new file under a symlinked outside folder', path: () => 'link-dir/new.txt' },
  { name: 'a new folder under a symlinked outside folder', path: () => 'link-dir/new/deep.txt' },
];

const fileTools: Array<{ tool: ToolDefinition; input: (path: string) => JsonObject }> = [
  { tool: Read, input: (file_path) => ({ file_path }) },
  { tool: Write, input: (file_path) => ({ file_path, content: 'PWNED' }) },
  {
    tool: Edit,
    input: (file_path) => ({ file_path, old_string: SECRET, new_string: 'PWNED' }),
  },
];

describe('file tools stay inside the workspace', () => {
  for (const { tool, input } of fileTools) {
    for (const escape of escapes) {
      it(`${tool.name}: ${escape.name} gives an error result and touches nothing outside`, async () => {
        const before = await snapshot([box.outside, box.evil]);
        const result = await run(tool, input(escape.path(box)));
        expect(result.status).toBe('error');
        if (result.status === 'error') expect(result.error.type).toBe('WorkspaceError');
        expect(result.model).not.toContain(SECRET);
        expect(await snapshot([box.outside, box.evil])).toEqual(before);
        expect(existsSync(join(box.outside, 'created-by-dangling.txt'))).toBe(false);
      });
    }
  }
});

describe('Read', () => {
  it('returns the file text and a summary with the line count', async () => {
    const result = await run(Read, { file_path: 'a.txt' });
    expect(result).toMatchObject({
      status: 'success',
      model: 'alpha\nbeta\ngamma\n',
      display: { summary: `Read ${join(box.root, 'a.txt')} (3 lines)` },
    });
  });

  it('returns lines offset to offset + limit - 1 (1-based)', async () => {
    const result = await run(Read, { file_path: join(box.root, 'a.txt'), offset: 2, limit: 1 });
    expect(result.model).toBe('beta\n');
    expect(result.display?.summary).toContain('(1 lines)');
  });

  it('says when the offset is past the end', async () => {
    const result = await run(Read, { file_path: 'a.txt', offset: 10 });
    expect(result.status).toBe('success');
    expect(result.model).toContain('past the end of the file, which has 3 lines');
  });

  it('cuts a large file at a line end within the cap and says where to read on', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join('\n');
    await writeFile(join(box.root, 'big.txt'), lines);
    const result = await runTool(
      Read,
      { file_path: 'big.txt' },
      makeContext([box.root], { maxOutputBytes: 1000 }),
    );
    expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(1000);
    const match = /read on with offset=(\d+)/.exec(result.model);
    expect(match).not.toBeNull();
    const next = Number(match?.[1]);
    expect(result.model.startsWith(`line 1\n`)).toBe(true);
    expect(result.model).toContain(`line ${next - 1}\n[... output truncated`);
  });

  it('cuts a single line longer than the cap at a character boundary', async () => {
    await writeFile(join(box.root, 'one-line.txt'), '€'.repeat(100_000));
    const result = await runTool(
      Read,
      { file_path: 'one-line.txt' },
      makeContext([box.root], { maxOutputBytes: 1000 }),
    );
    expect(result.status).toBe('success');
    expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(1000);
    expect(result.model).toMatch(
      /^€+\n\[\.\.\. output truncated: line 1 is longer than the output cap/,
    );
  });

  it('refuses a missing file, a folder and a binary file with error results', async () => {
    await writeFile(join(box.root, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
    for (const file_path of ['missing.txt', 'sub', 'bin.dat']) {
      expect((await run(Read, { file_path })).status).toBe('error');
    }
  });

  it('reads through a symlink whose target is inside the workspace', async () => {
    const { symlink } = await import('node:fs/promises');
    await symlink('sub/b.txt', join(box.root, 'to-b'));
    expect((await run(Read, { file_path: 'to-b' })).model).toBe('inside b\n');
  });
});

describe('Write', () => {
  it('creates the file and its parent folders and reports the byte count', async () => {
    const result = await run(Write, { file_path: 'new/deep/file.txt', content: 'héllo' });
    const path = join(box.root, 'new', 'deep', 'file.txt');
    expect(result).toMatchObject({ status: 'success', model: `Wrote 6 bytes to ${path}` });
    expect(await readFile(path, 'utf8')).toBe('héllo');
  });

  it('overwrites an existing file', async () => {
    await run(Write, { file_path: 'a.txt', content: 'new' });
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe('new');
  });

  it('writes to a second root by absolute path', async () => {
    const result = await run(Write, { file_path: join(box.outside, 'ok.txt'), content: 'ok' }, [
      box.root,
      box.outside,
    ]);
    expect(result.status).toBe('success');
    expect(await readFile(join(box.outside, 'ok.txt'), 'utf8')).toBe('ok');
  });

  it('refuses to write over a folder', async () => {
    expect((await run(Write, { file_path: 'sub', content: 'x' })).status).toBe('error');
    expect((await stat(join(box.root, 'sub'))).isDirectory()).toBe(true);
  });
});

describe('Edit', () => {
  it('replaces a unique string', async () => {
    const result = await run(Edit, { file_path: 'a.txt', old_string: 'beta', new_string: 'BETA' });
    expect(result.status).toBe('success');
    expect(result.model).toContain('replaced 1 occurrence');
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n');
  });

  it('takes new_string literally, $ patterns included', async () => {
    await run(Edit, { file_path: 'a.txt', old_string: 'beta', new_string: "$& $' $1" });
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe("alpha\n$& $' $1\ngamma\n");
  });

  it('gives an error result when old_string is not found, and leaves the file', async () => {
    const result = await run(Edit, { file_path: 'a.txt', old_string: 'delta', new_string: 'x' });
    expect(result).toMatchObject({ status: 'error', error: { type: 'StringNotFound' } });
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
  });

  it('gives an error result when old_string is not unique, and leaves the file', async () => {
    const result = await run(Edit, { file_path: 'a.txt', old_string: 'a\n', new_string: 'A\n' });
    expect(result).toMatchObject({ status: 'error', error: { type: 'StringNotUnique' } });
    expect(result.model).toContain('occurs 3 times');
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const result = await run(Edit, {
      file_path: 'a.txt',
      old_string: 'a\n',
      new_string: 'A\n',
      replace_all: true,
    });
    expect(result.model).toContain('replaced 3 occurrences');
    expect(await readFile(join(box.root, 'a.txt'), 'utf8')).toBe('alphA\nbetA\ngammA\n');
  });

  it('gives an error result for a missing file', async () => {
    const result = await run(Edit, { file_path: 'nope.txt', old_string: 'a', new_string: 'b' });
    expect(result.status).toBe('error');
    expect(existsSync(join(box.root, 'nope.txt'))).toBe(false);
  });
});

describe('affectedPaths', () => {
  it('gives absolute paths resolved against the first root', () => {
    const ctx = { workspaceRoots: [box.root] };
    expect(Read.affectedPaths?.({ file_path: 'a.txt' }, ctx)).toEqual([join(box.root, 'a.txt')]);
    expect(Write.affectedPaths?.({ file_path: '/x/y', content: '' }, ctx)).toEqual(['/x/y']);
    expect(
      Edit.affectedPaths?.({ file_path: 'sub/b.txt', old_string: 'a', new_string: 'b' }, ctx),
    ).toEqual([join(box.root, 'sub', 'b.txt')]);
  });
});
