/**
 * A scratch TypeScript project of the docs' ```ts blocks: each block is a module of its own,
 * named after its page and line (or, with a `file=<name>.ts` flag, that file in a folder of its
 * page, so the page's blocks import each other), in a folder with a package.json (`"type": "module"`, so
 * top-level await works), a node_modules link to the repository's, and a tsconfig.json whose
 * `paths` map `durable-agent-sdk` and each of its subpaths (package.json `exports`) to the
 * sources in `src/`. `tsc` and `tsx` (which honours `paths`) both read that tsconfig, so a
 * block imports the package by its published names and runs on this checkout's code.
 *
 * @module
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { blockFile, type DocBlock } from './doc-blocks.js';

/** A ```ts block written into the scratch project. */
export interface BlockModule {
  block: DocBlock;
  /** Absolute path of its module. */
  path: string;
}

/** `durable-agent-sdk[/sub]` -> its source entry, one per package.json `exports` entry. */
export function packagePaths(repo: string): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, { types: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [subpath, entry] of Object.entries(pkg.exports)) {
    const source = entry.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
    paths[join(pkg.name, subpath)] = [join(repo, source)];
  }
  return paths;
}

/** The scratch project's compiler options: the repository's, without its file layout. */
export function docCompilerOptions(repo: string): Record<string, unknown> {
  const config = ts.readConfigFile(join(repo, 'tsconfig.json'), ts.sys.readFile);
  if (config.error)
    throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const options = {
    ...(config.config as { compilerOptions: Record<string, unknown> }).compilerOptions,
  };
  for (const key of ['outDir', 'rootDir', 'declaration', 'sourceMap']) delete options[key];
  return { ...options, noEmit: true, paths: packagePaths(repo) };
}

/** Writes the project into `dir` (an empty folder) and returns the block modules. */
export function writeDocProject(
  repo: string,
  dir: string,
  blocks: readonly DocBlock[],
): BlockModule[] {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: docCompilerOptions(repo), include: ['**/*.ts'] }, null, 2),
  );
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return blocks.map((block) => {
    const page = block.file.replace(/[^\w.-]+/g, '_');
    // A block named with `file=` is that file of its page's folder, where the page's other
    // blocks import it; the rest are named after their line.
    const named = blockFile(block);
    const path = named ? join(dir, page, named) : join(dir, `${page}_line${block.line}.ts`);
    mkdirSync(join(path, '..'), { recursive: true });
    // An `export {}` keeps a block without imports a module (top-level await, own scope).
    writeFileSync(path, `${block.code}\nexport {};\n`);
    return { block, path };
  });
}

/** One diagnostic of a block, at the page's line. */
export interface BlockDiagnostic {
  block: DocBlock;
  /** The page's 1-based line the diagnostic points at. */
  line: number;
  /** `TS2304: Cannot find name 'x'.` */
  message: string;
}

/** Type-checks every block module in one program; the diagnostics of the blocks only. */
export function typeCheck(dir: string, modules: readonly BlockModule[]): BlockDiagnostic[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(dir, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!parsed) throw new Error(`no tsconfig in ${dir}`);
  const program = ts.createProgram(
    modules.map((m) => m.path),
    parsed.options,
  );
  const found: BlockDiagnostic[] = [];
  for (const { block, path } of modules) {
    const source = program.getSourceFile(path);
    if (!source) throw new Error(`the program lost ${path}`);
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    for (const d of diagnostics) {
      const at = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
      found.push({
        block,
        line: block.line + 1 + at,
        message: `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      });
    }
  }
  return found;
}
