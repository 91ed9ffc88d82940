/**
 * A real OpenTelemetry Collector on this machine, for the tracing test: the core collector
 * (`go.opentelemetry.io/collector/otelcol` {@link OTELCOL_VERSION}) with its OTLP receiver and
 * the contrib file exporter, the tiny program in `deploy/otel-collector/` built from the Go
 * module proxy once into `.temporal/otelcol/` (as `scripts/cluster.ts` builds the Temporal
 * server into `.temporal/cluster/`), and run with `deploy/otel-collector/config.yaml`: OTLP
 * over HTTP on a loopback port in, one OTLP/JSON line per export appended to a file out.
 *
 *   npx tsx scripts/otel-collector.ts build      (build and cache the binary)
 *   npx tsx scripts/otel-collector.ts run [--port 4318] [--file traces.jsonl]
 *
 * @module
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The collector release the program is built with (core v1.71.0, contrib v0.165.1). */
export const OTELCOL_VERSION = '0.165.0';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The collector program's Go module. */
export const COLLECTOR_SOURCE_DIR = join(repoRoot, 'deploy', 'otel-collector');
/** The collector's config; the receiver's address and the output file come from variables. */
export const COLLECTOR_CONFIG_FILE = join(COLLECTOR_SOURCE_DIR, 'config.yaml');

/**
 * The collector binary, built once with `CGO_ENABLED=0 go build` from
 * `deploy/otel-collector` (a few minutes of CPU on 2 cores, cold; the Go module cache keeps
 * its modules) into `<cacheDir>/otelcol/v<version>-<hash of the sources>/otelcol`, so a
 * change of the program or its modules builds anew and later runs need neither Go nor the
 * network.
 * @throws when Go is missing or the build fails (the build's output in the message).
 */
export async function ensureCollectorBinary(
  options: { cacheDir?: string; log?: (line: string) => void } = {},
): Promise<string> {
  const hash = createHash('sha256');
  for (const file of ['main.go', 'go.mod', 'go.sum']) {
    hash.update(readFileSync(join(COLLECTOR_SOURCE_DIR, file)));
  }
  const home = join(
    options.cacheDir ?? join(repoRoot, '.temporal'),
    'otelcol',
    `v${OTELCOL_VERSION}-${hash.digest('hex').slice(0, 12)}`,
  );
  const binary = join(home, 'otelcol');
  if (existsSync(binary)) return binary;
  const go = await run('go', ['version']).catch(() => undefined);
  if (!go) {
    throw new Error(
      `The OpenTelemetry Collector is not built in ${home}, and there is no Go toolchain to ` +
        'build it (install Go, then run `npx tsx scripts/otel-collector.ts build`).',
    );
  }
  mkdirSync(home, { recursive: true });
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  log(`go build ${COLLECTOR_SOURCE_DIR} (collector ${OTELCOL_VERSION}, ${go.stdout.trim()})`);
  try {
    // Built to a temporary name and renamed, so a build cut short leaves no binary behind.
    await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', `${binary}.partial`, '.'], {
      cwd: COLLECTOR_SOURCE_DIR,
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false -mod=readonly' },
      maxBuffer: 64 * 1024 * 1024,
    });
    renameSync(`${binary}.partial`, binary);
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`go build of the collector failed: ${e.stderr?.trim() || e.message}`, {
      cause: error,
    });
  }
  log(`built the collector in ${((Date.now() - started) / 1000).toFixed(0)} s: ${binary}`);
  return binary;
}

/** A running collector. */
export interface RunningCollector {
  /** The OTLP/HTTP base URL, e.g. `http://127.0.0.1:43187` (spans go to `/v1/traces`). */
  readonly endpoint: string;
  /** The file the collector appends its OTLP/JSON lines to. */
  readonly file: string;
  readonly pid: number;
  /** The collector's stderr so far (its own log). */
  log(): string;
  /** Stop it (SIGTERM: it flushes and exits), waiting at most 10 s, then SIGKILL. */
  stop(): Promise<void>;
}

/**
 * Start the collector: OTLP/HTTP on `127.0.0.1:<port>` (a free one by default), spans to
 * `file`. Resolves once the receiver accepts connections.
 * @throws when the binary is missing and cannot be built, or the collector exits or does not
 *   listen within 30 s (its log in the message).
 */
export async function startCollector(options: {
  file: string;
  port?: number;
  cacheDir?: string;
  log?: (line: string) => void;
}): Promise<RunningCollector> {
  const binary = await ensureCollectorBinary(options);
  const port = options.port ?? (await freePort());
  let stderr = '';
  const child: ChildProcess = spawn(binary, ['--config', COLLECTOR_CONFIG_FILE], {
    env: {
      ...process.env,
      OTELCOL_HTTP_ENDPOINT: `127.0.0.1:${port}`,
      OTELCOL_FILE: options.file,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 30_000;
  while (!(await listening(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the collector did not start on 127.0.0.1:${port}: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    file: options.file,
    pid: child.pid!,
    log: () => stderr,
    stop,
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const log = (line: string) => console.log(`[otel-collector] ${line}`);
  const flag = (name: string) => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : args[at + 1];
  };
  switch (command) {
    case 'build':
      log(`collector: ${await ensureCollectorBinary({ log })}`);
      return 0;
    case 'run': {
      const port = flag('--port');
      if (port !== undefined && !/^\d+$/.test(port)) {
        throw new Error(`--port must be a number, got '${port}'`);
      }
      const file = resolve(flag('--file') ?? 'traces.jsonl');
      closeSync(openSync(file, 'a'));
      const collector = await startCollector({
        file,
        ...(port ? { port: Number(port) } : {}),
        log,
      });
      log(`OTLP/HTTP at ${collector.endpoint}, spans to ${file}; Ctrl-C stops it`);
      console.log(`OTEL_EXPORTER_OTLP_ENDPOINT=${collector.endpoint}`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await collector.stop();
      return 0;
    }
    default:
      console.error('usage: tsx scripts/otel-collector.ts build | run [--port P] [--file F]');
      return 2;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`[otel-collector] ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
