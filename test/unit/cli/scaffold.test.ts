/**
 * `durable-agent init` (issue 33, item 6): the file plan, the refusal of a folder that is not
 * empty (naming what would be overwritten), `--force`, and the versions the project gets.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { ownPackage } from '../../../src/cli/own-package.js';
import { projectNameOf, scaffoldPlan } from '../../../src/cli/scaffold.js';

const sdk = ownPackage();
const root = mkdtempSync(join(tmpdir(), 'cli-init-'));

async function init(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['init', ...argv], {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('durable-agent init', () => {
  it('plans package.json, tsconfig, the agent, worker, client, start, hook test, .gitignore and README', () => {
    expect(scaffoldPlan('my-agent', sdk).map((f) => f.path)).toEqual([
      'package.json',
      'README.md',
      '.gitignore',
      'src/agent.ts',
      'src/client.ts',
      'src/start.ts',
      'src/worker.ts',
      'test/hooks.test.ts',
      'tsconfig.json',
    ]);
  });

  it("pins durable-agent-sdk to this version, the peers to this package's peer ranges, vitest to its minor", () => {
    const plan = scaffoldPlan('shop-bot', sdk);
    const pkg = JSON.parse(plan[0]!.content) as {
      name: string;
      type: string;
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.name).toBe('shop-bot');
    expect(pkg.type).toBe('module');
    expect(pkg.dependencies).toEqual({
      ai: sdk.peerDependencies.ai,
      'durable-agent-sdk': `^${sdk.version}`,
      zod: sdk.peerDependencies.zod,
    });
    expect(pkg.devDependencies.vitest).toMatch(/^~4\.1\./);
    expect(Object.keys(pkg.devDependencies)).toEqual([
      '@types/node',
      'tsx',
      'typescript',
      'vitest',
    ]);
    expect(Object.keys(pkg.scripts)).toEqual(
      expect.arrayContaining(['start', 'worker', 'client', 'test']),
    );
    // The project's name replaces the template's, in the agent's name too.
    const agent = plan.find((f) => f.path === 'src/agent.ts')!.content;
    expect(agent).toContain("name: 'shop-bot'");
    expect(agent).not.toContain('my-agent');
  });

  it('names the project after its folder, as npm and agent names allow', () => {
    expect(projectNameOf('/tmp/My Agent!')).toBe('my-agent');
    expect(projectNameOf('/tmp/_x.y')).toBe('x-y');
    expect(projectNameOf('/tmp/...')).toBe('my-agent');
  });

  it('writes the project into a new folder and prints three lines of next steps', async () => {
    const dir = join(root, 'fresh');
    const { code, out } = await init(dir);
    expect(code).toBe(0);
    expect(existsSync(join(dir, '.gitignore'))).toBe(true);
    expect(existsSync(join(dir, 'test', 'hooks.test.ts'))).toBe(true);
    const next = out.split('\n');
    expect(next.slice(next.indexOf('Next steps:') + 1)).toHaveLength(3);
  });

  it('refuses a folder that is not empty, naming the files it would overwrite, and writes nothing', async () => {
    const dir = join(root, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{"name":"mine"}');
    writeFileSync(join(dir, 'notes.txt'), 'keep');
    const { code, err } = await init(dir);
    expect(code).toBe(1);
    expect(err).toContain('is not empty (would overwrite package.json); --force writes anyway');
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe('{"name":"mine"}');
    expect(existsSync(join(dir, 'src'))).toBe(false);
  });

  it('refuses a folder with other files only, saying none would be overwritten', async () => {
    const dir = join(root, 'other');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'keep');
    const { code, err } = await init(dir);
    expect(code).toBe(1);
    expect(err).toContain('none of its files would be overwritten');
  });

  it('writes over the files with --force, leaving the others', async () => {
    const dir = join(root, 'forced');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{"name":"mine"}');
    writeFileSync(join(dir, 'notes.txt'), 'keep');
    const { code } = await init(dir, '--force');
    expect(code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).toMatchObject({
      name: 'forced',
    });
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('keep');
  });

  it('refuses a second positional and a file in place of the folder', async () => {
    expect((await init('a', 'b')).code).toBe(2);
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    const { code, err } = await init(file);
    expect(code).toBe(1);
    expect(err).toContain('is a file, not a folder');
  });
});
