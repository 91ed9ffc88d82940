/**
 * The workflow code a worker runs: the bundle prebuilt by `npm run build` and shipped in the
 * package when it matches the workflow code installed next to it, otherwise one bundle
 * built from the workflow sources per process (about 1 s on a quiet machine, several under
 * load).
 *
 * `npm run build` bundles `dist/workflows/index.js` and writes `dist/workflow-bundle.js`
 * and its manifest `dist/workflow-bundle.json`: the SHA-256 of every file of the package
 * that went into the bundle, the name, version and importer of every package bundled with
 * it (and of the bundler, `@temporalio/worker`), and the SHA-256 of the bundle itself.
 * A worker uses the prebuilt bundle only if every listed file still has its hash, every
 * listed package resolves (Node's lookup, from its importer's folder) to the same version,
 * and the bundle has its hash; otherwise it says why on stderr and bundles from the
 * sources. A clone run from `src/` (tsx) has no prebuilt bundle and always bundles.
 *
 * The prebuilt bundle holds only this package's workflow code. Workflow interceptors, a
 * custom payload or failure converter, or bundler plugins need a bundle of your own: build
 * it with `bundleWorkflowCode({ workflowsPath: agentWorkflowsPath(), ... })` and pass it
 * as `advanced.temporal.workflowBundle`.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type BundlerPlugin } from '@temporalio/worker';
import { encodingFailureConverterPath } from '../payloads/data-converter.js';
import type { Compiler, NormalModule, WebpackPluginInstance } from 'webpack';
import { messageOf } from '../common/errors.js';

/** File name of the prebuilt bundle, next to the `workflows/` folder it was built from. */
export const WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';
/** File name of the prebuilt bundle's manifest, beside the bundle. */
export const WORKFLOW_BUNDLE_MANIFEST_FILE = 'workflow-bundle.json';
const MANIFEST_FORMAT = 1;

/**
 * Path of the workflow entry file: `dist/workflows/index.js` in the built package,
 * `workflows/index.ts` in a clone run from sources.
 *
 * Pass it as `workflowsPath` to `bundleWorkflowCode` (from `@temporalio/worker`) to build a
 * bundle of your own, e.g. with `workflowInterceptorModules`, and give that bundle to
 * `advanced.temporal.workflowBundle`.
 *
 * @throws Error when neither file exists next to the package.
 */
export function workflowsPath(): string {
  for (const candidate of ['../../workflows/index.js', '../../workflows/index.ts']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('durable-agent-sdk: workflows/index.{js,ts} not found next to the package');
}

/** A workflow bundle as `Worker.create` takes it. */
export type WorkflowBundleOption = { code: string } | { codePath: string };

/**
 * Where a worker's workflow code came from.
 * - `package`: the bundle prebuilt by `npm run build` (`codePath`), checked against the
 *   installed workflow code.
 * - `environment`: the file named by `DURABLE_AGENT_WORKFLOW_BUNDLE`, not checked.
 * - `option`: `advanced.temporal.workflowBundle`, not checked.
 * - `sources`: bundled from the workflow sources at startup; `reason` says why no prebuilt
 *   bundle was used.
 */
export type WorkflowBundleSource =
  | { from: 'package'; codePath: string }
  | { from: 'environment'; codePath: string }
  | { from: 'option' }
  | { from: 'sources'; reason: string };

/** A package bundled into the workflow code, as the manifest records it. */
export interface BundledPackage {
  /** The folder name under `node_modules` (the name it is imported by). */
  name: string;
  version: string;
  /** `.` when the package's own files import it, else `name@version` of the package that does. */
  from: string;
}

/** What `dist/workflow-bundle.json` holds. */
export interface WorkflowBundleManifest {
  format: typeof MANIFEST_FORMAT;
  /** The bundle's file name, beside the manifest. */
  bundle: string;
  bundleSha256: string;
  /** SHA-256 of `sources` and `packages` together: one value naming the workflow code. */
  sourcesSha256: string;
  /** Every file of the package in the bundle, by path relative to the manifest's folder, with its SHA-256. */
  sources: Record<string, string>;
  /** Every package in the bundle, and the bundler, sorted by `name@version`. */
  packages: BundledPackage[];
}

/** The outcome of {@link checkPrebuiltBundle}. */
export type PrebuiltBundleCheck = { ok: true; codePath: string } | { ok: false; reason: string };

/**
 * Whether the prebuilt bundle described by `manifestPath` matches the workflow code beside
 * it: same files (by hash), same package versions (resolved as Node would from each
 * importer's folder), the bundle intact. Never throws; `reason` names the first mismatch.
 */
export function checkPrebuiltBundle(manifestPath: string): PrebuiltBundleCheck {
  if (!existsSync(manifestPath)) return { ok: false, reason: `${manifestPath} does not exist` };
  let manifest: WorkflowBundleManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as WorkflowBundleManifest;
  } catch (error) {
    return { ok: false, reason: `${manifestPath} is unreadable: ${messageOf(error)}` };
  }
  if (
    manifest?.format !== MANIFEST_FORMAT ||
    typeof manifest.bundle !== 'string' ||
    typeof manifest.sources !== 'object' ||
    !Array.isArray(manifest.packages)
  ) {
    return { ok: false, reason: `${manifestPath} is not a format-${MANIFEST_FORMAT} manifest` };
  }
  const dir = dirname(manifestPath);
  for (const [path, hash] of Object.entries(manifest.sources)) {
    const file = join(dir, path);
    if (!existsSync(file)) return { ok: false, reason: `${path} is missing` };
    if (sha256(readFileSync(file)) !== hash) {
      return { ok: false, reason: `${path} changed since the bundle was built` };
    }
  }
  const packageMismatch = checkPackages(manifest.packages, dir);
  if (packageMismatch) return { ok: false, reason: packageMismatch };
  const codePath = join(dir, manifest.bundle);
  if (!existsSync(codePath)) return { ok: false, reason: `${manifest.bundle} is missing` };
  if (sha256(readFileSync(codePath)) !== manifest.bundleSha256) {
    return { ok: false, reason: `${manifest.bundle} does not match its manifest` };
  }
  return { ok: true, codePath };
}

function checkPackages(packages: BundledPackage[], baseDir: string): string | undefined {
  const byId = new Map(packages.map((p) => [`${p.name}@${p.version}`, p]));
  const dirs = new Map<string, string>([['.', baseDir]]);
  const resolve = (id: string, depth: number): string => {
    const known = dirs.get(id);
    if (known) return known;
    const pkg = byId.get(id);
    if (!pkg || depth > byId.size) throw new Error(`the manifest's package ${id} is malformed`);
    const from = resolve(pkg.from, depth + 1);
    const found = lookupPackage(pkg.name, from);
    if (!found)
      throw new Error(`${pkg.name} (${pkg.version}) is not installed where Node finds it`);
    const version = packageVersion(found);
    if (version !== pkg.version) {
      throw new Error(`${pkg.name} is ${version} here, the bundle was built with ${pkg.version}`);
    }
    dirs.set(id, found);
    return found;
  };
  try {
    for (const id of byId.keys()) resolve(id, 0);
    return undefined;
  } catch (error) {
    return messageOf(error);
  }
}

/** Node's lookup of package `name` from folder `from`: the first `node_modules/<name>` going up. */
function lookupPackage(name: string, from: string): string | undefined {
  for (let dir = from; ;) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', name);
      // Node walks on from the package's real folder (pnpm links packages from a store).
      if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

function packageVersion(dir: string): string {
  return String(
    (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version,
  );
}

/** A module webpack put into a bundle, and the module that first imported it. */
interface BundledModule {
  resource: string;
  issuer: string | undefined;
}

/**
 * Bundle the workflow code at `path` the one way this package does (in the build, in the
 * CI check and at startup): Temporal's bundler, module ids relative to the package rather
 * than the working folder, so the same files give the same bytes wherever it runs from.
 * @throws when webpack fails or the code imports a module the workflow sandbox refuses.
 */
export async function bundleWorkflowSources(
  path: string,
  options: { failureConverterPath?: string } = {},
): Promise<{ code: string; modules: BundledModule[] }> {
  const modules: BundledModule[] = [];
  const collect: WebpackPluginInstance = {
    apply(compiler: Compiler) {
      compiler.hooks.done.tap('durable-agent-sdk', ({ compilation }) => {
        for (const module of compilation.modules) {
          const resource = (module as NormalModule).resource;
          if (typeof resource !== 'string') continue;
          const issuer = compilation.moduleGraph.getIssuer(module) as NormalModule | null;
          modules.push({
            resource,
            issuer: typeof issuer?.resource === 'string' ? issuer.resource : undefined,
          });
        }
      });
    },
  };
  const { code } = await bundleWorkflowCode({
    workflowsPath: path,
    ...(options.failureConverterPath ? { failureConverterPath: options.failureConverterPath } : {}),
    logger: quietLogger,
    webpackConfigHook: (config) => ({
      ...config,
      context: dirname(dirname(path)),
      plugins: [...(config.plugins ?? []), collect],
    }),
  });
  return { code, modules };
}

/**
 * Bundle the workflow code at `workflowsPath` and write {@link WORKFLOW_BUNDLE_FILE} and its
 * manifest into `outDir` (run by `npm run build` with `dist/workflows/index.js` and `dist`).
 * @throws when bundling fails, or when the bundle includes a file that is neither under
 *   `outDir` nor in a `node_modules` folder (the manifest could not describe it).
 */
export async function buildWorkflowBundle(options: {
  workflowsPath: string;
  outDir: string;
}): Promise<{ codePath: string; manifestPath: string; manifest: WorkflowBundleManifest }> {
  const { code, modules } = await bundleWorkflowSources(options.workflowsPath);
  const { sources, packages } = describeModules(modules, options.outDir);
  const manifest: WorkflowBundleManifest = {
    format: MANIFEST_FORMAT,
    bundle: WORKFLOW_BUNDLE_FILE,
    bundleSha256: sha256(code),
    sourcesSha256: sha256(JSON.stringify({ sources, packages })),
    sources,
    packages,
  };
  mkdirSync(options.outDir, { recursive: true });
  const codePath = join(options.outDir, WORKFLOW_BUNDLE_FILE);
  const manifestPath = join(options.outDir, WORKFLOW_BUNDLE_MANIFEST_FILE);
  writeFileSync(codePath, code);
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  return { codePath, manifestPath, manifest };
}

const ENTRYPOINT_SUFFIX = '-autogenerated-entrypoint.cjs';

function describeModules(
  modules: BundledModule[],
  outDir: string,
): Pick<WorkflowBundleManifest, 'sources' | 'packages'> {
  const base = realpathSync(outDir);
  const sources: Record<string, string> = {};
  const found = new Map<string, { name: string; version: string; importers: Set<string> }>();
  // '.' for the package's own files (and Temporal's generated entrypoint), else name@version.
  const ownerOf = (resource: string | undefined): string => {
    if (resource === undefined || resource.endsWith(ENTRYPOINT_SUFFIX)) return '.';
    const rel = relative(base, resource);
    const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
    if (inside && !rel.split(sep).includes('node_modules')) {
      sources[rel.split(sep).join('/')] ??= sha256(readFileSync(resource));
      return '.';
    }
    const parts = resource.split(sep);
    const at = parts.lastIndexOf('node_modules');
    const first = parts[at + 1];
    if (at < 0 || first === undefined) {
      throw new Error(
        `durable-agent-sdk: the workflow bundle includes ${resource}, which is neither under ${base} nor in node_modules`,
      );
    }
    const nameParts = first.startsWith('@') ? 2 : 1;
    const name = parts.slice(at + 1, at + 1 + nameParts).join('/');
    const version = packageVersion(parts.slice(0, at + 1 + nameParts).join(sep));
    const id = `${name}@${version}`;
    if (!found.has(id)) found.set(id, { name, version, importers: new Set() });
    return id;
  };
  for (const { resource, issuer } of modules) {
    if (resource.endsWith(ENTRYPOINT_SUFFIX)) continue;
    const owner = ownerOf(resource);
    const importer = ownerOf(issuer);
    if (owner !== '.' && importer !== owner) found.get(owner)?.importers.add(importer);
  }
  const bundler = lookupPackage('@temporalio/worker', base);
  if (bundler) {
    const version = packageVersion(bundler);
    const id = `@temporalio/worker@${version}`;
    if (!found.has(id))
      found.set(id, { name: '@temporalio/worker', version, importers: new Set() });
    found.get(id)?.importers.add('.');
  }
  // Each package's `from` is an importer nearest to the package's own files, so the chain
  // of lookups the check walks has no cycles.
  const from = new Map<string, string>();
  for (let reached = new Set(['.']); reached.size > 0;) {
    const next = new Set<string>();
    for (const [id, pkg] of found) {
      if (from.has(id)) continue;
      const importer = [...pkg.importers].filter((i) => reached.has(i)).sort()[0];
      if (importer !== undefined) {
        from.set(id, importer);
        next.add(id);
      }
    }
    reached = next;
  }
  const packages = [...found]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, { name, version }]) => {
      const importer = from.get(id);
      if (importer === undefined) throw new Error(`durable-agent-sdk: no importer of ${id} found`);
      return { name, version, from: importer };
    });
  const sorted = Object.fromEntries(Object.entries(sources).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { sources: sorted, packages };
}

/** The workflow bundle and where it came from. */
export interface ResolvedWorkflowBundle {
  bundle: WorkflowBundleOption;
  source: WorkflowBundleSource;
}

let resolved: Promise<ResolvedWorkflowBundle> | undefined;
let resolvedEncoding: Promise<ResolvedWorkflowBundle> | undefined;
const warned = new Set<string>();

/**
 * The workflow code for this process's workers: the file `DURABLE_AGENT_WORKFLOW_BUNDLE`
 * names if it exists, else the package's prebuilt bundle if it matches the workflow code
 * ({@link checkPrebuiltBundle}), else a bundle built from the sources once per process.
 * With `encodeFailures` (encryption on), the named file only if it was bundled with the
 * encoding failure converter, else a bundle built from the sources once per process
 * with `encodingFailureConverterPath()` as its failure converter (the prebuilt bundle
 * has Temporal's default, which leaves failure messages plaintext).
 * A prebuilt bundle that is present but does not match is reported on stderr once.
 * @throws when bundling from the sources fails (a later call tries again).
 */
export function resolveWorkflowBundle(
  options: { encodeFailures?: boolean } = {},
): Promise<ResolvedWorkflowBundle> {
  const named = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE;
  // An encrypting worker takes the named bundle only when it has the encoding converter.
  const fits = (path: string) =>
    !options.encodeFailures || readFileSync(path, 'utf8').includes('payloads/failure-converter');
  if (named && existsSync(named) && fits(named)) {
    return Promise.resolve({
      bundle: { codePath: named },
      source: { from: 'environment', codePath: named },
    });
  }
  if (named && !existsSync(named))
    warnOnce(`DURABLE_AGENT_WORKFLOW_BUNDLE names ${named}, which does not exist; ignored`);
  if (options.encodeFailures) {
    if (resolvedEncoding) return resolvedEncoding;
    const attempt = bundleWorkflowSources(workflowsPath(), {
      failureConverterPath: encodingFailureConverterPath(),
    }).then(({ code }): ResolvedWorkflowBundle => ({
      bundle: { code },
      source: {
        from: 'sources',
        reason:
          'encryption is on: the workflow code is bundled with the encoding failure converter',
      },
    }));
    resolvedEncoding = attempt;
    attempt.catch(() => {
      if (resolvedEncoding === attempt) resolvedEncoding = undefined;
    });
    return attempt;
  }
  if (resolved) return resolved;
  const attempt = resolveFromPackage();
  resolved = attempt;
  attempt.catch(() => {
    if (resolved === attempt) resolved = undefined;
  });
  return attempt;
}

/**
 * The workflow code bundled at startup with the application's workflow interceptor modules
 * (`advanced.temporal.interceptors.workflowModules`) and bundler plugins (plugins with
 * `configureBundler`): the prebuilt bundle has neither. Not cached: each worker bundles.
 * With `encodeFailures` (encryption on) the bundle's failure converter is the encoding one.
 * @throws when webpack fails, e.g. a module that does not resolve.
 */
export async function bundleWithExtras(
  workflowInterceptorModules: string[],
  plugins: BundlerPlugin[],
  options: { encodeFailures?: boolean } = {},
): Promise<ResolvedWorkflowBundle> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: workflowsPath(),
    workflowInterceptorModules,
    plugins,
    ...(options.encodeFailures ? { failureConverterPath: encodingFailureConverterPath() } : {}),
    logger: quietLogger,
  });
  const why = [
    ...(workflowInterceptorModules.length > 0
      ? ['advanced.temporal.interceptors.workflowModules']
      : []),
    ...(plugins.length > 0 ? [`bundler plugins (${plugins.map((p) => p.name).join(', ')})`] : []),
  ];
  return {
    bundle: { code },
    source: { from: 'sources', reason: `bundled with ${why.join(' and ')}` },
  };
}

/** {@link resolveWorkflowBundle}'s bundle alone. */
export async function workflowBundle(): Promise<WorkflowBundleOption> {
  return (await resolveWorkflowBundle()).bundle;
}

async function resolveFromPackage(): Promise<ResolvedWorkflowBundle> {
  const path = workflowsPath();
  const manifestPath = join(dirname(dirname(path)), WORKFLOW_BUNDLE_MANIFEST_FILE);
  const check = checkPrebuiltBundle(manifestPath);
  if (check.ok) {
    return {
      bundle: { codePath: check.codePath },
      source: { from: 'package', codePath: check.codePath },
    };
  }
  const reason = existsSync(manifestPath)
    ? `the prebuilt workflow bundle does not match the workflow code: ${check.reason}`
    : `no prebuilt workflow bundle (${manifestPath} does not exist)`;
  if (existsSync(manifestPath)) warnOnce(`${reason}; bundling ${path} instead (slower startup)`);
  const { code } = await bundleWorkflowSources(path);
  return { bundle: { code }, source: { from: 'sources', reason } };
}

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`[durable-agent-sdk] ${message}`);
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
