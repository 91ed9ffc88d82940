/**
 * The file plan of `durable-agent init`: what the scaffolded project holds, and which of it a
 * folder already has. Pure apart from reading the templates and the target folder.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import type { OwnPackage } from './own-package.js';

/** One file of the project: its path in the project (with `/`) and its text. */
interface ScaffoldFile {
  path: string;
  content: string;
}

/** The template's folder in the package. */
const TEMPLATE_DIR = join('templates', 'basic');

/** The name the templates use for the project, replaced by the project's own. */
const NAME_TOKEN = 'my-agent';

/**
 * Template files stored under another name: npm pack never ships a `.gitignore` (it reads it
 * as the folder's ignore rules).
 */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

/** The development tools of the project, at the versions this package is tested with. */
const DEV_TOOLS = ['@types/node', 'tsx', 'typescript', 'vitest'] as const;

/**
 * A project name from a folder's name: lowercase letters, digits, `-` and `_`, starting with
 * a letter or digit, at most 100 (an npm name and an agent name both).
 * @default `'my-agent'` when nothing of the folder's name is left
 */
export function projectNameOf(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, 100)
    .replace(/[-_]+$/, '');
  return name || NAME_TOKEN;
}

/**
 * The project's package.json: `durable-agent-sdk` at `sdk.version`, its peers `zod` and `ai`
 * at the ranges its peerDependencies allow, and the tools at the versions it is tested with
 * (vitest within its minor: 4.1, the line this package is tested with, supports Node 20).
 */
function projectPackageJson(name: string, sdk: OwnPackage): string {
  const range = (deps: Record<string, string>, dep: string): string => {
    const value = deps[dep];
    if (!value) throw new Error(`durable-agent-sdk's package.json names no version of ${dep}`);
    return value;
  };
  const devDependencies = Object.fromEntries(
    DEV_TOOLS.map((tool) => {
      const version = range(sdk.devDependencies, tool);
      return [tool, tool === 'vitest' ? `~${version.replace(/^[\^~]/, '')}` : version];
    }),
  );
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '>=20' },
    scripts: {
      start: 'tsx src/start.ts',
      worker: 'tsx src/worker.ts',
      client: 'tsx src/client.ts',
      test: 'vitest run',
      typecheck: 'tsc --noEmit',
    },
    dependencies: {
      ai: range(sdk.peerDependencies, 'ai'),
      'durable-agent-sdk': `^${sdk.version}`,
      zod: range(sdk.peerDependencies, 'zod'),
    },
    devDependencies,
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** Every file under `dir`, as paths relative to it with `/`, sorted. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(dir, path).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * The files of a project named `name`: package.json, then the template's files with its
 * name in place of `my-agent`.
 * @throws {Error} when the package has no template folder or its package.json lacks a version.
 */
export function scaffoldPlan(name: string, sdk: OwnPackage): ScaffoldFile[] {
  const templates = join(sdk.root, TEMPLATE_DIR);
  if (!existsSync(templates)) throw new Error(`durable-agent-sdk has no ${TEMPLATE_DIR} folder`);
  const files = filesUnder(templates).map((path) => ({
    path: RENAMED[path] ?? path,
    content: readFileSync(join(templates, path), 'utf8').replaceAll(NAME_TOKEN, name),
  }));
  return [{ path: 'package.json', content: projectPackageJson(name, sdk) }, ...files];
}

/**
 * What stands in the way of writing `plan` into `dir`: whether the folder exists and has
 * anything in it, and which of the plan's paths it has already.
 */
export function occupied(
  dir: string,
  plan: readonly ScaffoldFile[],
): {
  empty: boolean;
  overwritten: string[];
} {
  if (!existsSync(dir)) return { empty: true, overwritten: [] };
  if (!statSync(dir).isDirectory()) return { empty: false, overwritten: [] };
  return {
    empty: readdirSync(dir).length === 0,
    overwritten: plan.map((f) => f.path).filter((path) => existsSync(join(dir, path))),
  };
}
