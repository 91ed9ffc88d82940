/**
 * Every ```ts run block of README.md and docs/**\/*.md runs to completion: written into the
 * scratch project of test/helpers/doc-project.ts (the package's names mapped to `src/`), run
 * with tsx against this run's Temporal server (`TEMPORAL_ADDRESS`, set by
 * test/global-setup.ts), it must exit 0 by itself within RUN_BOUND_MS. A failure shows the
 * block's page and line, how it ended and everything it printed. When a ```text output block
 * follows it, its standard output must be that block's lines (trailing space aside).
 *
 * The block convention is in test/unit/repo/docs-blocks.test.ts. To run the blocks of some
 * pages only, set DOC_BLOCKS_ONLY to a comma-separated list of them, e.g.
 * `DOC_BLOCKS_ONLY=docs/testing-hooks.md npx vitest run test/integration/docs/docs-run.test.ts`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { docBlocks, expectedOutput } from '../../helpers/doc-blocks.js';
import { writeDocProject } from '../../helpers/doc-project.js';
import { tempDir } from '../../helpers/temp-dirs.js';

/** A bound on one block's run, not what is tested: the convention asks for about 60 s. */
const RUN_BOUND_MS = 90_000;

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const blocks = docBlocks(repo);
const runnable = blocks.filter((block) => block.language === 'ts' && block.flags.includes('run'));
const modules = runnable.length > 0 ? writeDocProject(repo, tempDir('doc-run'), runnable) : [];

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  stdout: string;
  timedOut: boolean;
}

/** Runs `path` with tsx in its folder (so tsx reads the scratch tsconfig and its paths). */
function runBlock(path: string, cwd: string): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(repo, 'node_modules', '.bin', 'tsx'), [path], {
      cwd,
      env: { ...process.env, TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group: a timeout ends tsx and the node it starts
    });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, RUN_BOUND_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output, stdout, timedOut });
    });
  });
}

describe('the ```ts run blocks of README.md and docs/', () => {
  it('has a Temporal server to run against', () => {
    expect(process.env.TEMPORAL_ADDRESS).toBeTruthy();
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.each(modules.map((m) => [`${m.block.file}:${m.block.line}`, m] as const))(
    '%s runs and exits 0',
    async (where, { path, block }) => {
      const ended = await runBlock(path, join(path, '..'));
      const how = ended.timedOut
        ? `did not exit within ${RUN_BOUND_MS} ms (killed)`
        : `exited with ${ended.signal ?? `code ${ended.code}`}`;
      if (ended.timedOut || ended.code !== 0) {
        throw new Error(`${where} ${how}. Its output:\n${ended.output}`);
      }
      const shown = expectedOutput(blocks, block);
      if (shown) {
        const lines = (text: string) =>
          text
            .replace(/\s+$/, '')
            .split('\n')
            .map((l) => l.trimEnd());
        expect(
          lines(ended.stdout),
          `${where} prints what ${shown.file}:${shown.line} shows`,
        ).toEqual(lines(shown.code));
      }
    },
    RUN_BOUND_MS + 10_000,
  );
});
