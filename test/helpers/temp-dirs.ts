/**
 * Temporary folders of one test file, removed when the file's tests are done. Importing this
 * module registers that `afterAll` in the importing file (after-hooks run in reverse order,
 * so it runs after the file's own, e.g. once its agents have shut down). Every folder is
 * named `durable-agent-<name>-…`: the global teardown (test/global-setup.ts) lists any such
 * folder a test run leaves behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

/** A new empty folder under the system's temporary folder, removed after this file's tests. */
export function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `durable-agent-${name}-`));
  made.push(dir);
  return dir;
}

/** Remove the folders made so far (also run after the file's tests). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

afterAll(removeTempDirs);
