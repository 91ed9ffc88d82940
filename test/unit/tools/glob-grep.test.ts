import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/common/json.js';
import type { ToolResult } from '../../../src/common/types.js';
import { Glob } from '../../../src/tools/builtin/glob.js';
import { Grep } from '../../../src/tools/builtin/grep.js';
import { runTool } from '../../../src/tools/run-tool.js';
import type { ToolDefinition } from '../../../src/tools/tool.js';
import { SECRET, makeContext, makeSandbox, type Sandbox } from './fixtures.js';

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
  await mkdir(join(box.root, 'src', 'lib'), { recursive: true });
  await writeFile(join(box.root, 'src', 'main.ts'), 'const x = 1;\n// TODO: main\n');
  await writeFile(join(box.root, 'src', 'lib', 'util.ts'), 'export const y = 2; // TODO util\n');
  await writeFile(join(box.root, 'src', 'notes.md'), 'TODO in markdown\n');
  await mkdir(join(box.root, 'node_modules', 'dep'), { recursive: true });
  await writeFile(join(box.root, 'node_modules', 'dep', 'index.ts'), '// TODO dep\n');
  await mkdir(join(box.root, '.git'));
  await writeFile(join(box.root, '.git', 'config.ts'), '// TODO git\n');
  await writeFile(
    join(box.root, 'blob.bin'),
    Buffer.concat([Buffer.from('TODO'), Buffer.from([0])]),
  );
  await writeFile(join(box.outside, 'outside.ts'), `// TODO ${SECRET}\n`);
});
afterEach(async () => {
  await box.cleanup();
});

function run(tool: ToolDefinition, input: JsonObject): Promise<ToolResult> {
  return runTool(tool, input, makeContext([box.root]));
}

describe('Glob', () => {
  it('lists matching files, sorted, relative to the workspace root', async () => {
    const result = await run(Glob, { pattern: 'src/**/*.ts' });
    expect(result).toMatchObject({ status: 'success', model: 'src/lib/util.ts\nsrc/main.ts' });
  });

  it('lists relative to the searched folder given as path', async () => {
    expect((await run(Glob, { pattern: '**/*', path: 'src' })).model).toBe(
      'lib/util.ts\nmain.ts\nnotes.md',
    );
  });

  it('says when nothing matches', async () => {
    expect((await run(Glob, { pattern: '**/*.py' })).model).toBe('No files found');
  });

  it('never lists files through symlinks that lead outside', async () => {
    const all = await run(Glob, { pattern: '**/*' });
    expect(all.model).not.toContain('link-');
    expect(all.model).not.toContain('secret');
    expect((await run(Glob, { pattern: 'link-dir/*' })).model).toBe('No files found');
  });

  it('refuses patterns that climb out or are absolute, with error results', async () => {
    for (const pattern of ['../*', '../outside/*', join(box.outside, '*'), '{..,src}/*']) {
      const result = await run(Glob, { pattern });
      expect(result).toMatchObject({ status: 'error', error: { type: 'InvalidPattern' } });
      expect(result.model).not.toContain('outside.ts');
    }
  });

  it('refuses a search folder outside the workspace', async () => {
    for (const path of [box.outside, '../outside', box.evil, 'link-dir']) {
      const result = await run(Glob, { pattern: '**/*', path });
      expect(result).toMatchObject({ status: 'error', error: { type: 'WorkspaceError' } });
      expect(result.model).not.toContain('outside.ts');
    }
  });
});

describe('Grep', () => {
  it('returns file:line:text for matching lines, skipping node_modules, .git and binaries', async () => {
    const result = await run(Grep, { pattern: 'TODO' });
    expect(result.status).toBe('success');
    expect(result.model.split('\n')).toEqual([
      'src/lib/util.ts:1:export const y = 2; // TODO util',
      'src/main.ts:2:// TODO: main',
      'src/notes.md:1:TODO in markdown',
    ]);
  });

  it('narrows by glob and by path', async () => {
    expect((await run(Grep, { pattern: 'TODO', glob: '**/*.md' })).model).toBe(
      'src/notes.md:1:TODO in markdown',
    );
    expect((await run(Grep, { pattern: 'TODO', path: 'src/lib' })).model).toBe(
      'util.ts:1:export const y = 2; // TODO util',
    );
    expect((await run(Grep, { pattern: 'const \\w = \\d', path: 'src/main.ts' })).model).toBe(
      'main.ts:1:const x = 1;',
    );
  });

  it('says when nothing matches', async () => {
    expect((await run(Grep, { pattern: 'nothing-like-this' })).model).toBe('No matches found');
  });

  it('never reads files outside the workspace, through symlinks or otherwise', async () => {
    const result = await run(Grep, { pattern: SECRET });
    expect(result.model).toBe('No matches found');
    for (const path of [box.outside, '../outside', box.evil, 'link-dir', 'link-file']) {
      const refused = await run(Grep, { pattern: SECRET, path });
      expect(refused).toMatchObject({ status: 'error', error: { type: 'WorkspaceError' } });
      expect(refused.model).not.toContain(`// TODO ${SECRET}`);
    }
    const climbing = await run(Grep, { pattern: SECRET, glob: '../**' });
    expect(climbing).toMatchObject({ status: 'error', error: { type: 'InvalidPattern' } });
  });

  it('gives an error result for an invalid regular expression', async () => {
    const result = await run(Grep, { pattern: '(unclosed' });
    expect(result).toMatchObject({ status: 'error', error: { type: 'InvalidPattern' } });
    expect(result.model).toContain('Invalid regular expression');
  });
});
