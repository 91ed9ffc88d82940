/**
 * Every fenced code block of README.md and docs/**\/*.md follows the docs' convention:
 *
 * - ```ts: a complete module (imports included) that type-checks against the package,
 *   imported by its published names (`durable-agent-sdk`, `durable-agent-sdk/testing`, ...:
 *   package.json `exports`). Top-level await is allowed. A fragment is wrapped in its imports
 *   and a `const x: Type = {...}`.
 * - ```ts run: the same, and it runs to completion against the server in `TEMPORAL_ADDRESS`
 *   (test/integration/docs/docs-run.test.ts).
 * - ```ts file=<name>.ts: a block that is that file of its page (the page's other blocks import
 *   it as `./<name>.js`, and its ```sh blocks may run it with `npx tsx <name>.ts`).
 * - ```text output, right after a ```ts run block: what that block prints on standard output,
 *   line for line (docs-run.test.ts compares them).
 * - ```sh: commands a user types; `npm run <script>`, `durable-agent <command>` and
 *   `npx tsx <file>` must name a script, a command, a file that exists (docs-shell.test.ts).
 * - ```text, ```json, ```jsonc, ```yaml: output or data, not checked.
 *
 * Any other language fails, and so does a block without one, so a typo cannot skip a check:
 * `typescript`, `js`, `tsx` are refused with "write ```ts" (one spelling; a JavaScript
 * example is TypeScript that type-checks), `bash`, `shell`, `console` with "write ```sh".
 *
 * All ```ts blocks are checked in ONE TypeScript program (test/helpers/doc-project.ts); a
 * failure names the page and line and the compiler's message.
 *
 * The pages come from the filesystem: README.md and every .md under docs/. To check some of
 * them only, set DOC_BLOCKS_ONLY to a comma-separated list of those paths, e.g.
 * `DOC_BLOCKS_ONLY=docs/testing-hooks.md npx vitest run test/unit/repo/docs-blocks.test.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, it } from 'vitest';
import { conventionError, docBlocks, strayOutputs } from '../../helpers/doc-blocks.js';
import { typeCheck, writeDocProject } from '../../helpers/doc-project.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const blocks = docBlocks(repo);
const scratch = mkdtempSync(join(tmpdir(), 'durable-agent-doc-blocks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the code blocks of README.md and docs/', () => {
  it('each has a language of the convention, with its flags, and closes', () => {
    const wrong = blocks.flatMap((block) => {
      const error = conventionError(block);
      return error ? [`${block.file}:${block.line}: ${error}`] : [];
    });
    wrong.push(...strayOutputs(blocks));
    if (wrong.length > 0) throw new Error(`${wrong.length} block(s):\n${wrong.join('\n')}`);
  });

  it('each ```ts block type-checks as a module against the package', () => {
    const modules = writeDocProject(
      repo,
      scratch,
      blocks.filter((block) => block.language === 'ts'),
    );
    const diagnostics = typeCheck(scratch, modules).map(
      ({ block, line, message }) =>
        `${block.file}:${line} (block at line ${block.line}): ${message}`,
    );
    if (diagnostics.length > 0) {
      throw new Error(`${diagnostics.length} diagnostic(s):\n${diagnostics.join('\n')}`);
    }
  }, 60_000);
});
