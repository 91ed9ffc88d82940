/**
 * The prebuilt workflow bundle, on a built copy of the package (tsc into a temporary
 * folder, then the build's bundle step): what it records, that bundling is reproducible,
 * and that a fresh process of the built package runs its sessions on it, or on a bundle of
 * the sources (saying why) once a workflow file changed. The packed tarball installed in a
 * fresh folder is checked by scripts/check-package.ts (run by .ci/run).
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  WORKFLOW_BUNDLE_FILE,
  buildWorkflowBundle,
  bundleWorkflowSources,
  type WorkflowBundleManifest,
} from '../../../src/worker/workflow-code.js';
import { temporalAddress } from '../../helpers/common.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** A user's first script: createAgent, one send, and which bundle the worker ran. */
const FIRST = `const { createAgent } = await import('./dist/src/index.js');
const { scriptedModel } = await import('./dist/src/testing/index.js');
const agent = await createAgent({
  model: scriptedModel(['bundled answer']),
  tools: [],
  advanced: { temporal: { address: process.env.TEMPORAL_ADDRESS } },
});
const response = await agent.send('hi');
await agent.close();
console.log(JSON.stringify({ status: response.status, text: response.text(), workflowBundle: agent.worker.workflowBundle }));
`;

let tmp: string;
let built: string; // a copy of the package as `npm run build` leaves it
let manifest: WorkflowBundleManifest;

/** Lay out a package folder around `dist`: package.json, node_modules, the first script. */
function packageFolder(dir: string): void {
  cpSync(join(repo, 'package.json'), join(dir, 'package.json'));
  symlinkSync(realpathSync(join(repo, 'node_modules')), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'first.mjs'), FIRST);
}

async function runFirst(dir: string) {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['first.mjs'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), DURABLE_AGENT_WORKFLOW_BUNDLE: '' },
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as {
    status: string;
    text: string;
    workflowBundle: { from: string; codePath?: string; reason?: string };
  };
  return { ...result, stderr };
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'durable-agent-built-'));
  built = join(tmp, 'built');
  execFileSync(
    process.execPath,
    [
      join(repo, 'node_modules/typescript/bin/tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      join(built, 'dist'),
    ],
    { cwd: repo, stdio: 'inherit' },
  );
  packageFolder(built);
  const dist = join(built, 'dist');
  ({ manifest } = await buildWorkflowBundle({
    workflowsPath: join(dist, 'workflows', 'index.js'),
    outDir: dist,
  }));
}, 180_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the prebuilt workflow bundle', () => {
  it('records every bundled file of the package and the bundled package versions', () => {
    const dist = join(built, 'dist');
    // The bundle names its modules by path from the package folder (webpack's ids): the
    // package's own files among them are exactly the recorded ones.
    const code = readFileSync(join(dist, WORKFLOW_BUNDLE_FILE), 'utf8');
    const named = new Set(
      [...code.matchAll(/"\.\/((?:workflows|src\/common)\/(?:[\w-]+\/)*[\w-]+\.js)"/g)].map(
        (m) => m[1],
      ),
    );
    expect(Object.keys(manifest.sources).sort()).toEqual([...named].sort());
    expect(named).toContain('workflows/index.js');
    expect(named).toContain('workflows/prompt/run.js');
    expect(named).toContain('src/common/hook-rules.js');
    for (const path of Object.keys(manifest.sources)) {
      expect(path).toMatch(/^(workflows|src\/common)\/([\w-]+\/)*[\w-]+\.js$/);
      expect(manifest.sources[path]).toBe(sha256(readFileSync(join(dist, path))));
    }
    const version = (name: string) =>
      (
        JSON.parse(readFileSync(join(repo, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    expect(manifest.packages).toEqual(
      expect.arrayContaining([
        { name: '@temporalio/workflow', version: version('@temporalio/workflow'), from: '.' },
        { name: '@temporalio/worker', version: version('@temporalio/worker'), from: '.' },
        {
          name: '@temporalio/common',
          version: version('@temporalio/common'),
          from: `@temporalio/workflow@${version('@temporalio/workflow')}`,
        },
      ]),
    );
    expect(manifest.bundleSha256).toBe(sha256(readFileSync(join(dist, WORKFLOW_BUNDLE_FILE))));
  });

  it('is what bundling the same files again gives, byte for byte', async () => {
    const again = await bundleWorkflowSources(join(built, 'dist', 'workflows', 'index.js'));
    expect(sha256(again.code)).toBe(manifest.bundleSha256);
  }, 120_000);

  it('is what a fresh process of the built package runs its first session on', async () => {
    const result = await runFirst(built);
    expect(result.workflowBundle).toEqual({
      from: 'package',
      codePath: join(realpathSync(built), 'dist', WORKFLOW_BUNDLE_FILE),
    });
    expect(result).toMatchObject({ status: 'completed', text: 'bundled answer' });
    expect(result.stderr).not.toMatch(/prebuilt workflow bundle/);
  }, 120_000);

  it('is not used once a workflow file changed: the worker bundles the sources and says which file', async () => {
    const changed = join(tmp, 'changed');
    cpSync(join(built, 'dist'), join(changed, 'dist'), { recursive: true });
    packageFolder(changed);
    appendFileSync(join(changed, 'dist', 'workflows', 'prompt', 'run.js'), '\n// edited\n');
    const result = await runFirst(changed);
    expect(result.workflowBundle).toEqual({
      from: 'sources',
      reason:
        'the prebuilt workflow bundle does not match the workflow code: ' +
        'workflows/prompt/run.js changed since the bundle was built',
    });
    expect(result.stderr).toContain(
      '[durable-agent-sdk] the prebuilt workflow bundle does not match the workflow code: ' +
        'workflows/prompt/run.js changed since the bundle was built; bundling',
    );
    expect(result).toMatchObject({ status: 'completed', text: 'bundled answer' });
  }, 120_000);
});
