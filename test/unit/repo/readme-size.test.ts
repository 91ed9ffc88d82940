/**
 * The README stays a front page (issue 33): what the package is, the two commands, one quick
 * start, two processes, a map of docs/ and the feature table. The manual lives in docs/, the
 * figures in bench/README.md; a README that grows past 20 KB fails here (the aim is 15 KB).
 */
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

it('README.md is at most 20 KB', () => {
  expect(statSync(README).size).toBeLessThanOrEqual(20 * 1024);
});
