/**
 * The docs' code-block extractor (test/helpers/doc-blocks.ts) on made-up markdown: fences of
 * backticks and tildes, nested and indented fences, info strings with flags, and the
 * convention's refusals.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  blockFile,
  expectedOutput,
  strayOutputs,
  conventionError,
  docPages,
  extractBlocks,
  type DocBlock,
} from '../../helpers/doc-blocks.js';

const md = (...lines: string[]) => lines.join('\n');

describe('extractBlocks', () => {
  it('reads language, flags, line and code of each block', () => {
    const blocks = extractBlocks(
      md('# Title', '', '```ts run', 'const a = 1;', '```', 'text', '```sh', 'npm run demo', '```'),
      'docs/x.md',
    );
    expect(blocks).toEqual([
      {
        file: 'docs/x.md',
        line: 3,
        language: 'ts',
        flags: ['run'],
        code: 'const a = 1;',
        closed: true,
      },
      { file: 'docs/x.md', line: 7, language: 'sh', flags: [], code: 'npm run demo', closed: true },
    ]);
  });

  it('keeps a shorter or other-character fence inside a block as content', () => {
    const blocks = extractBlocks(
      md('````md', '```ts', 'x', '```', '~~~', '````', '~~~text', '```', '~~~~'),
      'a.md',
    );
    expect(blocks.map((b) => [b.line, b.language, b.code])).toEqual([
      [1, 'md', md('```ts', 'x', '```', '~~~')],
      [7, 'text', '```'],
    ]);
  });

  it('takes an indented fence (a list item) and removes its indentation from the code', () => {
    const blocks = extractBlocks(
      md('- item', '', '  ```ts', '  const a = 1;', '    b();', '  ```'),
      'a.md',
    );
    expect(blocks).toHaveLength(1);
    expect(blocks[0]!.code).toBe(md('const a = 1;', '  b();'));
    expect(blocks[0]!.closed).toBe(true);
  });

  it('does not close a fence on a line with text after the fence', () => {
    const blocks = extractBlocks(md('```ts', '``` not a close', '```'), 'a.md');
    expect(blocks[0]!.code).toBe('``` not a close');
  });

  it('reads an info string with extra spaces and no language', () => {
    const blocks = extractBlocks(md('```   ts   run  ', '```', '```', 'plain', '```'), 'a.md');
    expect(blocks.map((b) => [b.language, b.flags])).toEqual([
      ['ts', ['run']],
      ['', []],
    ]);
  });

  it('does not take inline code with backticks for a fence', () => {
    expect(extractBlocks('```a``` is inline\n', 'a.md')).toEqual([]);
  });

  it('marks a block the page never closes', () => {
    const blocks = extractBlocks(md('```ts', 'x'), 'a.md');
    expect(blocks[0]).toMatchObject({ code: 'x', closed: false });
  });

  it('reads CRLF pages', () => {
    expect(extractBlocks('```sh\r\nls\r\n```\r\n', 'a.md')[0]!.code).toBe('ls');
  });
});

describe('conventionError', () => {
  const block = (language: string, flags: string[] = [], closed = true): DocBlock => ({
    file: 'a.md',
    line: 1,
    language,
    flags,
    code: '',
    closed,
  });

  it("accepts the convention's languages", () => {
    for (const language of ['ts', 'sh', 'text', 'json', 'jsonc', 'yaml']) {
      expect(conventionError(block(language))).toBeUndefined();
    }
    expect(conventionError(block('ts', ['run']))).toBeUndefined();
  });

  it('takes file=<name>.ts on a ts block only, and names the file', () => {
    expect(conventionError(block('ts', ['file=worker.ts']))).toBeUndefined();
    expect(blockFile(block('ts', ['file=worker.ts']))).toBe('worker.ts');
    expect(blockFile(block('ts', ['run']))).toBeUndefined();
    expect(conventionError(block('ts', ['file=../x.ts']))).toMatch(/not file=\.\.\/x\.ts/);
    expect(conventionError(block('sh', ['file=x.ts']))).toBe('```sh takes no flags, not file=x.ts');
  });

  it('refuses other spellings, naming the one to use', () => {
    expect(conventionError(block('typescript'))).toBe('write ```ts, not ```typescript');
    expect(conventionError(block('js'))).toBe('write ```ts, not ```js');
    expect(conventionError(block('bash'))).toBe('write ```sh, not ```bash');
  });

  it('refuses a block without a language, an unknown one, a stray flag and an open block', () => {
    expect(conventionError(block(''))).toMatch(/needs a language/);
    expect(conventionError(block('tss'))).toMatch(/unknown language 'tss'/);
    expect(conventionError(block('ts', ['runn']))).toBe('```ts takes only run, not runn');
    expect(conventionError(block('sh', ['run']))).toBe('```sh takes no flags, not run');
    expect(conventionError(block('ts', [], false))).toMatch(/ends before this block closes/);
  });
});

describe('expectedOutput and strayOutputs', () => {
  const page = [
    '```ts run',
    "console.log('hi');",
    '```',
    '',
    '```text output',
    'hi',
    '```',
    '',
    '```ts',
    'export {};',
    '```',
    '',
    '```text output',
    'stray',
    '```',
  ].join('\n');
  const blocks = extractBlocks(page, 'p.md');

  it('pairs a ts run block with the text output block right after it', () => {
    expect(expectedOutput(blocks, blocks[0]!)?.code).toBe('hi');
    expect(expectedOutput(blocks, blocks[2]!)?.code).toBe('stray');
  });

  it('names a text output block that follows no ts run block', () => {
    expect(strayOutputs(blocks)).toEqual(['p.md:13: ```text output must follow a ```ts run block']);
  });
});

describe('docPages', () => {
  it('lists README.md and every .md under docs/, nested folders too', () => {
    const repo = mkdtempSync(join(tmpdir(), 'durable-agent-doc-pages-'));
    try {
      mkdirSync(join(repo, 'docs', 'guide'), { recursive: true });
      for (const page of ['README.md', 'docs/a.md', 'docs/guide/b.md', 'docs/notes.txt']) {
        writeFileSync(join(repo, page), '');
      }
      expect(docPages(repo, '')).toEqual(['README.md', 'docs/a.md', 'docs/guide/b.md']);
      expect(docPages(repo, 'docs/guide/b.md, README.md')).toEqual([
        'README.md',
        'docs/guide/b.md',
      ]);
      expect(() => docPages(repo, 'docs/c.md')).toThrow(/docs\/c\.md/);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
