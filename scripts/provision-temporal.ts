/**
 * Make the pinned Temporal CLI and test server available in `<repo>/.temporal` and print
 * where they came from. Idempotent: a cached copy answers in well under a second.
 *
 *   npx tsx scripts/provision-temporal.ts
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { ensureTemporalCli, describeProvisioningFailure } from '../src/server/temporal-cli.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = Date.now();
const found = await ensureTemporalCli({
  cacheDir: join(repoRoot, '.temporal'),
  log: (line) => console.log(`[temporal-cli] ${line}`),
});
for (const failure of found.failures) console.log(`[temporal-cli] tried: ${failure}`);
if (found.temporalPath === undefined) {
  console.error(describeProvisioningFailure(found.failures));
  console.error("[temporal-cli] only the Temporal SDK's own download is left (needs internet)");
  process.exit(1);
}
console.log(`[temporal-cli] temporal: ${found.temporalPath}`);
console.log(`[temporal-cli] temporal-test-server: ${found.testServerPath ?? '(not available)'}`);
console.log(`[temporal-cli] source: ${found.origin} (${Date.now() - started} ms)`);
