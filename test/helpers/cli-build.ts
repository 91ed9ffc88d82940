/**
 * The `durable-agent` CLI built from this checkout's sources, for the tests that run it as a
 * process. Run from source (`node --import tsx src/cli/main.ts`) every call compiles the
 * TypeScript it loads again; on a loaded machine that alone took seconds per call. The test
 * run builds the CLI once instead (test/global-setup.ts), from the sources of that run.
 *
 * @module
 */
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { glob } from 'tinyglobby';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Environment variable naming the built CLI's entry file (set by the test run's setup). */
export const BUILT_CLI_VARIABLE = 'DURABLE_AGENT_TEST_CLI';

/**
 * Compile `src`, `workflows` and `activities` into `<outDir>/dist/` as the package ships them
 * (one `.js` per `.ts`, the same folders: the code finds its workflow code and workers by
 * paths relative to itself), with the package's package.json above (the CLI reads its version
 * there) and `node_modules` linked to this checkout's.
 * @param outDir an empty folder.
 * @returns the path of the CLI's entry file, `<outDir>/dist/src/cli/main.js`.
 * @throws what esbuild throws when a source does not compile.
 */
export async function buildCli(outDir: string): Promise<string> {
  const entryPoints = await glob(['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'], {
    cwd: repoRoot,
    absolute: true,
  });
  await build({
    entryPoints,
    outdir: join(outDir, 'dist'),
    outbase: repoRoot,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
  });
  mkdirSync(outDir, { recursive: true });
  copyFileSync(join(repoRoot, 'package.json'), join(outDir, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(outDir, 'node_modules'), 'dir');
  return join(outDir, 'dist', 'src', 'cli', 'main.js');
}
