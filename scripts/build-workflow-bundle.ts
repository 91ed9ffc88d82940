/**
 * The last step of `npm run build`: bundle the compiled workflow code
 * (`dist/workflows/index.js`) into `dist/workflow-bundle.js` with its manifest
 * `dist/workflow-bundle.json` (hashes of the bundled files and versions of the bundled
 * packages), which a worker of the installed package loads instead of bundling at startup.
 *
 *   npx tsx scripts/build-workflow-bundle.ts           # write the bundle (after tsc)
 *   npx tsx scripts/build-workflow-bundle.ts --check   # exit 1 unless dist's bundle is what
 *                                                       # bundling dist's sources gives now
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  WORKFLOW_BUNDLE_FILE,
  WORKFLOW_BUNDLE_MANIFEST_FILE,
  buildWorkflowBundle,
  bundleWorkflowSources,
  checkPrebuiltBundle,
  type WorkflowBundleManifest,
} from '../src/worker/workflow-code.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(repo, 'dist');
const workflowsPath = join(dist, 'workflows', 'index.js');
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

if (!existsSync(workflowsPath)) {
  console.error(
    `${relative(repo, workflowsPath)} does not exist: run tsc -p tsconfig.build.json first`,
  );
  process.exit(2);
}

const started = performance.now();
if (process.argv.includes('--check')) {
  const manifestPath = join(dist, WORKFLOW_BUNDLE_MANIFEST_FILE);
  const check = checkPrebuiltBundle(manifestPath);
  if (!check.ok) {
    console.error(`workflow bundle check failed: ${check.reason}`);
    process.exit(1);
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as WorkflowBundleManifest;
  const fresh = sha256((await bundleWorkflowSources(workflowsPath)).code);
  const built = sha256(readFileSync(check.codePath));
  if (fresh !== built) {
    console.error(
      `workflow bundle check failed: dist/${WORKFLOW_BUNDLE_FILE} (sha256 ${built}) is not what ` +
        `bundling dist/workflows gives now (sha256 ${fresh}): run npm run build`,
    );
    process.exit(1);
  }
  console.log(
    `dist/${WORKFLOW_BUNDLE_FILE} matches a fresh bundle of its sources ` +
      `(bundle sha256 ${fresh.slice(0, 12)}, sources sha256 ${manifest.sourcesSha256.slice(0, 12)}, ` +
      `${Math.round(performance.now() - started)} ms)`,
  );
} else {
  const { codePath, manifest } = await buildWorkflowBundle({ workflowsPath, outDir: dist });
  const bytes = readFileSync(codePath).length;
  console.log(
    `${relative(repo, codePath)}: ${(bytes / 1024 / 1024).toFixed(1)} MB, ` +
      `${Object.keys(manifest.sources).length} files of the package and ${manifest.packages.length} packages, ` +
      `sources sha256 ${manifest.sourcesSha256.slice(0, 12)} (${Math.round(performance.now() - started)} ms)`,
  );
}
