/**
 * checkPrebuiltBundle: when a worker may load the prebuilt workflow bundle instead of
 * bundling. Each test lays out a small package on disk (files, node_modules, a manifest).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  WORKFLOW_BUNDLE_FILE,
  WORKFLOW_BUNDLE_MANIFEST_FILE,
  checkPrebuiltBundle,
  type WorkflowBundleManifest,
} from '../../../src/worker/workflow-code.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let root: string;
let dist: string;
let manifestPath: string;

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
function installPackage(at: string, name: string, version: string): void {
  write(join(at, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
}

const files = {
  'workflows/index.js': 'export * from "./session.js";',
  'workflows/session.js': 'export function sessionWorkflow() {}',
  'src/common/rules.js': 'export const rules = [];',
};
const bundleCode = '/* the bundle */';

function writeManifest(change: Partial<WorkflowBundleManifest> = {}): void {
  const manifest: WorkflowBundleManifest = {
    format: 1,
    bundle: WORKFLOW_BUNDLE_FILE,
    bundleSha256: sha256(bundleCode),
    sourcesSha256: 'not read by the check',
    sources: Object.fromEntries(Object.entries(files).map(([path, text]) => [path, sha256(text)])),
    packages: [
      { name: '@temporalio/common', version: '1.24.0', from: '@temporalio/workflow@1.24.0' },
      { name: '@temporalio/workflow', version: '1.24.0', from: '.' },
    ],
    ...change,
  };
  write(manifestPath, JSON.stringify(manifest));
}

beforeEach(() => {
  // root/node_modules holds the dependencies, root/dist the built package (as in the repo).
  root = mkdtempSync(join(tmpdir(), 'workflow-bundle-check-'));
  dist = join(root, 'dist');
  manifestPath = join(dist, WORKFLOW_BUNDLE_MANIFEST_FILE);
  for (const [path, text] of Object.entries(files)) write(join(dist, path), text);
  write(join(dist, WORKFLOW_BUNDLE_FILE), bundleCode);
  installPackage(root, '@temporalio/workflow', '1.24.0');
  installPackage(root, '@temporalio/common', '1.24.0');
  writeManifest();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('checkPrebuiltBundle', () => {
  it('accepts a bundle whose files and packages are as built, and gives its path', () => {
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: true,
      codePath: join(dist, WORKFLOW_BUNDLE_FILE),
    });
  });

  it('refuses when a bundled file changed, naming the file', () => {
    write(join(dist, 'workflows/session.js'), 'export function sessionWorkflow() { return 1; }');
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: 'workflows/session.js changed since the bundle was built',
    });
  });

  it('refuses when a bundled file is gone, naming the file', () => {
    rmSync(join(dist, 'src/common/rules.js'));
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: 'src/common/rules.js is missing',
    });
  });

  it('refuses when a bundled package resolves to another version, naming both', () => {
    installPackage(root, '@temporalio/workflow', '1.25.0');
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: '@temporalio/workflow is 1.25.0 here, the bundle was built with 1.24.0',
    });
  });

  it('resolves a package from the folder of the package that imports it, as Node does', () => {
    // The hoisted copy is another version; the importer's nested copy is the bundled one.
    installPackage(root, '@temporalio/common', '1.0.0');
    installPackage(
      join(root, 'node_modules', '@temporalio', 'workflow'),
      '@temporalio/common',
      '1.24.0',
    );
    expect(checkPrebuiltBundle(manifestPath).ok).toBe(true);
  });

  it('refuses when a bundled package is not installed', () => {
    rmSync(join(root, 'node_modules', '@temporalio', 'common'), { recursive: true });
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: '@temporalio/common (1.24.0) is not installed where Node finds it',
    });
  });

  it('refuses a bundle file that is not the one the manifest describes', () => {
    write(join(dist, WORKFLOW_BUNDLE_FILE), '/* another bundle */');
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: `${WORKFLOW_BUNDLE_FILE} does not match its manifest`,
    });
  });

  it('refuses when there is no manifest (a clone run from sources)', () => {
    rmSync(manifestPath);
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: `${manifestPath} does not exist`,
    });
  });

  it('refuses a manifest of another format or one that is not JSON', () => {
    writeManifest({ format: 2 as 1 });
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: `${manifestPath} is not a format-1 manifest`,
    });
    write(manifestPath, '{ not json');
    const check = checkPrebuiltBundle(manifestPath);
    expect(check.ok).toBe(false);
    expect(!check.ok && check.reason).toMatch(/is unreadable: .*JSON/);
  });

  it('refuses a manifest whose package chain does not lead back to the package', () => {
    writeManifest({
      packages: [{ name: '@temporalio/common', version: '1.24.0', from: 'nowhere@1.0.0' }],
    });
    expect(checkPrebuiltBundle(manifestPath)).toEqual({
      ok: false,
      reason: "the manifest's package nowhere@1.0.0 is malformed",
    });
  });
});
