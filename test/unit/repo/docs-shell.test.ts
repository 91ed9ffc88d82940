/**
 * The ```sh blocks of README.md and docs/**\/*.md name things that exist: every
 * `npm run <script>` a script of the package.json where it runs, every `durable-agent
 * <command>` (or `npx tsx src/cli/main.ts <command>`, `npm run cli -- <command>`) a command
 * of the CLI's table (src/cli/command-table.ts) and options that command takes, every
 * `npx tsx <file>` a file of the repository (test/helpers/doc-shell.ts).
 *
 * The pages come from the filesystem; DOC_BLOCKS_ONLY (a comma-separated list of pages,
 * e.g. `DOC_BLOCKS_ONLY=docs/testing-hooks.md`) checks some of them only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GLOBAL_OPTIONS } from '../../../src/cli/args.js';
import { COMMANDS } from '../../../src/cli/command-table.js';
import { blockFile, extractBlocks, readDocPages } from '../../helpers/doc-blocks.js';
import { shellCommands, shellErrors, type ShellWorld } from '../../helpers/doc-shell.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

const repoWorld: ShellWorld = {
  scripts(dir) {
    const file = join(repo, dir, 'package.json');
    if (!existsSync(file)) return undefined;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { scripts?: Record<string, string> };
    return Object.keys(pkg.scripts ?? {});
  },
  exists: (path) => existsSync(join(repo, path)),
  commands: Object.fromEntries(
    Object.entries(COMMANDS).map(([name, spec]) => [name, spec.options]),
  ),
  globalOptions: GLOBAL_OPTIONS,
};

describe('shellCommands', () => {
  it('splits lines, && and pipes, drops comments, joins \\ line ends and reads quotes', () => {
    const code = [
      'npm install && npm run demo   # a comment && npm run nothing',
      "FOO=1 npx tsx 'a b.ts' --x \\",
      '  --y | tee out',
      'eval "$(npm run -s cluster -- start)"',
    ].join('\n');
    expect(shellCommands(code)).toEqual([
      ['npm', 'install'],
      ['npm', 'run', 'demo'],
      ['FOO=1', 'npx', 'tsx', 'a b.ts', '--x', '--y'],
      ['tee', 'out'],
      ['eval', '$(npm run -s cluster -- start)'],
      ['npm', 'run', '-s', 'cluster', '--', 'start'],
    ]);
  });

  it('takes only the $ lines of a transcript', () => {
    expect(shellCommands('$ durable-agent sessions\nID  STATE\n$ echo $?\n1')).toEqual([
      ['durable-agent', 'sessions'],
      ['echo', '$?'],
    ]);
  });
});

describe('shellErrors', () => {
  const world: ShellWorld = {
    scripts: (dir) =>
      dir === '' ? ['demo', 'cli', 'test'] : dir === 'examples/a' ? ['start'] : undefined,
    exists: (path) => ['examples/a', 'scripts/x.ts', 'src/cli/main.ts'].includes(path),
    commands: { sessions: ['limit', 'json'], ui: ['port'] },
    globalOptions: ['address', 'help'],
  };

  it('accepts real scripts, files, commands and options, and other programs', () => {
    const code = [
      'npm install && npm run demo && npm test',
      'TEMPORAL_ADDRESS=x npx tsx scripts/x.ts --flag',
      'durable-agent sessions --limit 5 --address h:1 [--json]',
      'npx tsx src/cli/main.ts ui [--port 8234]',
      'npm run cli -- sessions --json',
      'cd examples/a && npm start',
      'cd my-new-project && npm run anything && npx tsx src/whatever.ts',
      'temporal server start-dev --headless',
    ].join('\n');
    expect(shellErrors(code, world)).toEqual([]);
  });

  it('names a missing script, file, command or option', () => {
    const code = [
      'npm run demos',
      'npx tsx scripts/y.ts',
      'durable-agent session',
      'npx durable-agent ui --limit 3',
      'npm run cli -- sessions --port 1',
    ].join('\n');
    expect(shellErrors(code, world)).toEqual([
      "`npm run demos`: no script 'demos' in package.json",
      '`npx tsx scripts/y.ts`: no file scripts/y.ts',
      "`durable-agent session`: durable-agent has no command 'session' (sessions, ui)",
      '`npx durable-agent ui --limit 3`: durable-agent ui does not take --limit',
      '`npm run cli -- sessions --port 1`: durable-agent sessions does not take --port',
    ]);
  });
});

describe('the ```sh blocks of README.md and docs/', () => {
  it('name scripts, CLI commands and options, and files that exist', () => {
    const errors = readDocPages(repo).flatMap(({ file: page, text }) => {
      const blocks = extractBlocks(text, page);
      // The files the page's own ```ts file=<name> blocks make, in the folder it works in.
      const made = new Set(blocks.map(blockFile).filter((name) => name !== undefined));
      const world = {
        ...repoWorld,
        exists: (path: string) => made.has(path) || repoWorld.exists(path),
      };
      return blocks
        .filter((block) => block.language === 'sh')
        .flatMap((block) =>
          shellErrors(block.code, world).map((error) => `${page}:${block.line}: ${error}`),
        );
    });
    if (errors.length > 0) throw new Error(`${errors.length} command(s):\n${errors.join('\n')}`);
  });
});
