/**
 * A real multi-process Temporal cluster on this machine, without Docker: PostgreSQL from the
 * machine's packages, the Temporal server (pinned {@link TEMPORAL_SERVER_VERSION}) and its SQL
 * schema tool built from the Go module proxy into `.temporal/cluster/`, and the frontend,
 * history, matching and worker services as four processes. They run the same server config
 * (deploy/temporal/config.yaml), dynamic config (deploy/dynamicconfig/development-sql.yaml)
 * and schema setup (deploy/temporal/setup-postgres.sh) as docker-compose.yml.
 *
 *   npx tsx scripts/cluster.ts start [--tls] [--dir D] [--port 7233] [--namespace default]
 *   npx tsx scripts/cluster.ts restart frontend|history|matching|worker [--dir D]
 *   npx tsx scripts/cluster.ts check [--dir D]
 *   npx tsx scripts/cluster.ts stop  [--dir D] [--clean]
 *   npx tsx scripts/cluster.ts build                 (only build and cache the binaries)
 *   npx tsx scripts/cluster.ts certs [--dir D]       (only make the certificates, in D/tls)
 *
 * `--tls` turns on mTLS at the frontend, with a CA and certificates the script makes with
 * openssl (in `<dir>/tls`: ca.pem, frontend.pem/.key, system-worker.pem/.key, client.pem/.key).
 * `start` prints the address and, with `--tls`, the client settings as `export` lines for
 * `eval "$(...)"` ({@link clusterExports}; progress goes to stderr); `restart` stops one service
 * and starts it again on the same config and ports ({@link restartService}); `stop` stops every
 * process it started (the services, then PostgreSQL) and leaves nothing running; `--clean`
 * also removes the folder (the cluster's data). Tests use the same functions
 * ({@link startCluster}, {@link stopCluster}, {@link killService}, {@link startService},
 * {@link restartService}).
 *
 * In a clone, run it with `npm run cluster -- <command>` or `npx tsx scripts/cluster.ts`. The
 * installed package ships it with `deploy/` and its build: from an app's folder,
 * `npx tsx node_modules/durable-agent-sdk/scripts/cluster.ts <command>`; the binaries are then
 * cached in the SDK's cache folder (`DURABLE_AGENT_CACHE_DIR`, else
 * `~/.cache/durable-agent-sdk/temporal`), and the default `--dir` is `.temporal/cluster/run`
 * in the current folder.
 *
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
// Types only (erased): the modules load from src/ or dist/ at run time (sdkModules).
import type * as SearchAttributesModule from '../src/common/search-attributes.js';
import type * as TemporalCliModule from '../src/server/temporal-cli.js';

const run = promisify(execFile);

/** The Temporal server the cluster runs: the newest this machine's Go builds. */
export const TEMPORAL_SERVER_VERSION = '1.31.0';

/** The services, one process each, in the order they are started. */
export const CLUSTER_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;

/** One of {@link CLUSTER_SERVICES}. */
export type ClusterService = (typeof CLUSTER_SERVICES)[number];

/** The clone, or the installed package (node_modules/durable-agent-sdk), this script is in. */
const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * Whether the script runs in a clone (the TypeScript sources beside it) rather than in the
 * installed package, which ships the build (`dist/`) and `deploy/` instead of `src/`.
 */
const inClone = existsSync(join(packageRoot, 'src', 'index.ts'));

/** The SDK modules the script uses: the sources in a clone, the build in the package. */
type SdkModules = typeof SearchAttributesModule & typeof TemporalCliModule;

async function sdkModules(): Promise<SdkModules> {
  if (inClone) {
    return {
      ...(await import('../src/common/search-attributes.js')),
      ...(await import('../src/server/temporal-cli.js')),
    };
  }
  const files = ['common/search-attributes.js', 'server/temporal-cli.js'].map((file) =>
    join(packageRoot, 'dist', 'src', file),
  );
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(
      `scripts/cluster.ts runs from a clone of durable-agent-sdk (with src/) or from the ` +
        `installed package (with dist/); ${packageRoot} has no src/ and no ${missing.join(', ')} ` +
        '(an unbuilt checkout? run `npm run build`)',
    );
  }
  const loaded = await Promise.all(
    files.map((file) => import(pathToFileURL(file).href) as Promise<Partial<SdkModules>>),
  );
  return Object.assign({}, ...loaded) as SdkModules;
}

/**
 * The cache of the built binaries and the Temporal CLI: `<repo>/.temporal` in a clone; in the
 * installed package, the SDK's cache folder (`DURABLE_AGENT_CACHE_DIR`, else
 * `~/.cache/durable-agent-sdk/temporal`), which a reinstall does not wipe.
 */
async function defaultCacheDir(): Promise<string> {
  if (inClone) return join(packageRoot, '.temporal');
  return (await sdkModules()).defaultTemporalCacheDir();
}

/** The server config shared with docker-compose.yml. */
export const SERVER_CONFIG_FILE = join(packageRoot, 'deploy', 'temporal', 'config.yaml');
/** The dynamic config shared with docker-compose.yml. */
export const DYNAMIC_CONFIG_FILE = join(
  packageRoot,
  'deploy',
  'dynamicconfig',
  'development-sql.yaml',
);
/** The schema setup shared with docker-compose.yml. */
export const SCHEMA_SETUP_SCRIPT = join(packageRoot, 'deploy', 'temporal', 'setup-postgres.sh');

/**
 * The folder `start`, `restart`, `check`, `stop` and `certs` use without `--dir`: in a clone
 * `<repo>/.temporal/cluster/run` (docker compose mounts its `tls`); run from the installed
 * package, `.temporal/cluster/run` in the current folder.
 */
export const DEFAULT_CLUSTER_DIR = join(
  inClone ? packageRoot : process.cwd(),
  '.temporal',
  'cluster',
  'run',
);

/** What {@link makeCertificates} writes (docker compose and deploy/temporal/ read these names). */
export const CERTIFICATE_FILES = [
  'ca.pem',
  'ca.key',
  'frontend.pem',
  'frontend.key',
  'system-worker.pem',
  'system-worker.key',
  'client.pem',
  'client.key',
] as const;

/** The name the frontend's certificate carries (and clients verify). */
export const TLS_SERVER_NAME = 'localhost';

/** Where the built binaries and the schema files are cached. */
export interface ClusterBinaries {
  /** The `server` binary (`go.temporal.io/server/cmd/server`). */
  server: string;
  /** The SQL schema tool (`go.temporal.io/server/cmd/tools/sql`). */
  sql: string;
  /** The server module's `schema` folder. */
  schemaDir: string;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** The cluster's folder: PostgreSQL data, logs, certificates, `cluster.json`. */
  dir: string;
  /**
   * The frontend's gRPC port on 127.0.0.1; the other ports follow Temporal's layout around it
   * (history +1, matching +2, worker +6, HTTP +10, membership -300.., PostgreSQL -1801,
   * metrics +767..). @default 7233 (PostgreSQL then on 5432)
   */
  frontendPort?: number;
  /** mTLS at the frontend, with certificates made in `<dir>/tls`. @default false */
  tls?: boolean;
  /** Namespace created on start. @default `default` */
  namespace?: string;
  /**
   * The cache folder of the built binaries and the Temporal CLI. @default `<repo>/.temporal`
   * in a clone; in the installed package `DURABLE_AGENT_CACHE_DIR`, else
   * `~/.cache/durable-agent-sdk/temporal`
   */
  cacheDir?: string;
  /** The server's log level. @default `info` */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Progress lines. @default none */
  log?: (line: string) => void;
}

/** The ports of one cluster. */
export interface ClusterPorts {
  postgres: number;
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: Record<ClusterService, number>;
  metrics: Record<ClusterService, number>;
}

/** Client-side TLS files of a cluster started with `tls: true`. */
export interface ClusterTls {
  /** Folder of the certificates. */
  dir: string;
  /** The CA that signed the frontend's and the clients' certificates. */
  caFile: string;
  /** A client certificate the frontend accepts, and its key. */
  clientCertFile: string;
  clientKeyFile: string;
  /** The name to verify the frontend's certificate against. */
  serverName: string;
}

/** What `cluster.json` in the cluster's folder records. */
export interface ClusterState {
  version: string;
  dir: string;
  /** `127.0.0.1:<frontend port>`. */
  address: string;
  namespace: string;
  ports: ClusterPorts;
  tls: ClusterTls | undefined;
  logLevel: string;
  /** The server binary the services run. */
  serverBin: string;
  /** PostgreSQL's binaries folder. */
  pgBin: string;
  /** Process ids of the services (PostgreSQL's is in its own `postmaster.pid`). */
  pids: Partial<Record<ClusterService, number>>;
}

/** The port layout around `frontend`. */
export function clusterPorts(frontend: number): ClusterPorts {
  // The membership table stores ports as a (signed) smallint: the server dies at start
  // ("value is out of range for type smallint") with a membership port above 32767.
  if (!Number.isInteger(frontend) || frontend < 2_000 || frontend > 32_000) {
    throw new Error(
      `the frontend port must be an integer from 2000 to 32000 (the layout puts PostgreSQL 1801 ` +
        `below it, and membership ports, which the server stores as a smallint, 300 below), got ${frontend}`,
    );
  }
  const offsets: Record<ClusterService, number> = {
    frontend: 0,
    history: 1,
    matching: 2,
    worker: 6,
  };
  const membership = {} as Record<ClusterService, number>;
  const metrics = {} as Record<ClusterService, number>;
  CLUSTER_SERVICES.forEach((service, i) => {
    membership[service] = frontend - 300 + offsets[service];
    metrics[service] = frontend + 767 + i;
  });
  return {
    postgres: frontend - 1801,
    frontend,
    frontendHttp: frontend + 10,
    history: frontend + 1,
    matching: frontend + 2,
    worker: frontend + 6,
    membership,
    metrics,
  };
}

function allPorts(ports: ClusterPorts): number[] {
  return [
    ports.postgres,
    ports.frontend,
    ports.frontendHttp,
    ports.history,
    ports.matching,
    ports.worker,
    ...Object.values(ports.membership),
    ...Object.values(ports.metrics),
  ];
}

/** Whether nothing listens on 127.0.0.1:`port`. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolvePort(true)));
  });
}

/** A frontend port whose whole layout is free (for tests). */
export async function freeClusterPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const frontend = 10_000 + Math.floor(Math.random() * 21_000);
    const free = await Promise.all(allPorts(clusterPorts(frontend)).map(portFree));
    if (free.every(Boolean)) return frontend;
  }
  throw new Error('found no free port layout for a cluster in 50 tries');
}

// ---------------------------------------------------------------------------------------------
// Binaries

/**
 * The server and SQL tool of {@link TEMPORAL_SERVER_VERSION}, built once with
 * `CGO_ENABLED=0 go install` (about 5.5 min on 2 cores, cold) into
 * `<cacheDir>/cluster/v<version>/bin`, with the module's schema files copied beside them, so
 * later runs need neither Go nor the network.
 * @throws when Go is missing or the build fails (the build's output in the message).
 */
export async function ensureClusterBinaries(
  options: { cacheDir?: string; log?: (line: string) => void } = {},
): Promise<ClusterBinaries> {
  const home = join(
    options.cacheDir ?? (await defaultCacheDir()),
    'cluster',
    `v${TEMPORAL_SERVER_VERSION}`,
  );
  const bin = join(home, 'bin');
  const found: ClusterBinaries = {
    server: join(bin, 'server'),
    sql: join(bin, 'sql'),
    schemaDir: join(home, 'schema'),
  };
  if (existsSync(found.server) && existsSync(found.sql) && existsSync(found.schemaDir)) {
    return found;
  }
  const log = options.log ?? (() => undefined);
  const go = await run('go', ['version']).catch(() => undefined);
  if (!go) {
    throw new Error(
      `Temporal server ${TEMPORAL_SERVER_VERSION} is not built in ${bin}, and there is no Go ` +
        'toolchain to build it (install Go, then run `npx tsx scripts/cluster.ts build`).',
    );
  }
  mkdirSync(bin, { recursive: true });
  // Both commands in one `go install`, so the packages they share compile once; no symbol
  // table or DWARF (`-s -w`), which the cluster never needs and which the linker spends time on.
  const env = {
    ...process.env,
    CGO_ENABLED: '0',
    GOBIN: bin,
    GOFLAGS: '-buildvcs=false',
  };
  const packages = ['cmd/server', 'cmd/tools/sql'].map(
    (pkg) => `go.temporal.io/server/${pkg}@v${TEMPORAL_SERVER_VERSION}`,
  );
  const started = Date.now();
  log(`go install -trimpath -ldflags='-s -w' ${packages.join(' ')} (${go.stdout.trim()})`);
  try {
    await run('go', ['install', '-trimpath', '-ldflags=-s -w', ...packages], {
      env,
      cwd: bin,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`go install of the server failed: ${e.stderr?.trim() || e.message}`, {
      cause: error,
    });
  }
  log(`built the server and the sql tool in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const { stdout } = await run(
    'go',
    ['mod', 'download', '-json', `go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`],
    { env, cwd: bin, maxBuffer: 16 * 1024 * 1024 },
  );
  const moduleDir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!moduleDir) throw new Error('go mod download did not name the module folder');
  cpSync(join(moduleDir, 'schema'), found.schemaDir, { recursive: true });
  // The module cache's copies are read-only; the cached ones need not be.
  chmodTree(found.schemaDir);
  return found;
}

function chmodTree(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) chmodTree(path);
    else chmodSync(path, 0o644);
  }
}

// ---------------------------------------------------------------------------------------------
// Certificates

/**
 * A CA and the certificates of an mTLS frontend, made with openssl (EC P-256, valid 30 days):
 * `ca.pem`/`ca.key`; `frontend.pem`/`.key` for `localhost`, `127.0.0.1` and
 * `temporal-frontend` (the compose service); `system-worker.pem`/`.key`, the worker service's
 * client certificate; `client.pem`/`.key`, one for workers and clients. Existing files are
 * kept. Keys are readable by their owner only, unless `readableKeys` (docker compose: the
 * server images run as uid 1000 and read the bind-mounted folder).
 * @throws when openssl is missing or fails.
 */
export async function makeCertificates(
  dir: string,
  options: { readableKeys?: boolean } = {},
): Promise<ClusterTls> {
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => join(dir, name);
  const tls: ClusterTls = {
    dir,
    caFile: file('ca.pem'),
    clientCertFile: file('client.pem'),
    clientKeyFile: file('client.key'),
    serverName: TLS_SERVER_NAME,
  };
  if (
    ['ca.pem', 'frontend.pem', 'system-worker.pem', 'client.pem'].every((f) => existsSync(file(f)))
  ) {
    return tls;
  }
  const openssl = (args: string[]) =>
    run('openssl', args, { cwd: dir }).catch((error: { stderr?: string; message: string }) => {
      throw new Error(`openssl ${args[0]} failed: ${error.stderr?.trim() || error.message}`, {
        cause: error,
      });
    });
  const key = (name: string) =>
    openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', name]);
  await key('ca.key');
  await openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-sha256',
    '-days',
    '30',
    '-out',
    'ca.pem',
    '-subj',
    '/CN=durable-agent-sdk test cluster CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const leaf = async (
    name: string,
    cn: string,
    usage: 'serverAuth' | 'clientAuth',
    san?: string,
  ) => {
    await key(`${name}.key`);
    await openssl([
      'req',
      '-new',
      '-key',
      `${name}.key`,
      '-subj',
      `/CN=${cn}`,
      '-out',
      `${name}.csr`,
    ]);
    const ext = [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${usage}`,
      ...(san ? [`subjectAltName=${san}`] : []),
    ].join('\n');
    writeFileSync(file(`${name}.ext`), `${ext}\n`);
    await openssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '30',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ]);
    rmSync(file(`${name}.csr`));
    rmSync(file(`${name}.ext`));
  };
  await leaf(
    'frontend',
    TLS_SERVER_NAME,
    'serverAuth',
    'DNS:localhost,DNS:temporal-frontend,IP:127.0.0.1',
  );
  await leaf('system-worker', 'temporal-system-worker', 'clientAuth');
  await leaf('client', 'durable-agent-client', 'clientAuth');
  const keyMode = options.readableKeys ? 0o644 : 0o600;
  for (const name of readdirSync(dir))
    chmodSync(file(name), name.endsWith('.key') ? keyMode : 0o644);
  chmodSync(dir, 0o755);
  return tls;
}

/** `@temporalio/client`'s TLS settings for a cluster started with `tls: true`. */
export function clientTlsConfig(tls: ClusterTls): TLSConfig {
  return {
    serverNameOverride: tls.serverName,
    serverRootCACertificate: readFileSync(tls.caFile),
    clientCertPair: { crt: readFileSync(tls.clientCertFile), key: readFileSync(tls.clientKeyFile) },
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** The folder of PostgreSQL's server binaries (initdb, pg_ctl, postgres, psql). */
async function findPostgres(): Promise<string> {
  const candidates: string[] = [];
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    for (const version of readdirSync(root).sort((a, b) => Number(b) - Number(a))) {
      candidates.push(join(root, version, 'bin'));
    }
  }
  const onPath = await run('sh', ['-c', 'command -v initdb']).catch(() => undefined);
  if (onPath?.stdout.trim()) candidates.push(dirname(onPath.stdout.trim()));
  for (const bin of candidates) {
    if (['initdb', 'pg_ctl', 'postgres', 'psql'].every((b) => existsSync(join(bin, b)))) return bin;
  }
  throw new Error(
    'PostgreSQL is not installed (no initdb, pg_ctl, postgres and psql in /usr/lib/postgresql/*/bin ' +
      'or on PATH): install it, e.g. `apt-get install -y postgresql`.',
  );
}

const isRoot = () => process.getuid?.() === 0;

/** Run a PostgreSQL binary, as user `postgres` when this process is root (initdb refuses root). */
async function pg(bin: string, args: string[], cwd: string): Promise<string> {
  const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  try {
    return (await run(file, argv, { cwd, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(
      `${bin} ${args.join(' ')} failed: ${(e.stderr || e.stdout || e.message).trim()}`,
      {
        cause: error,
      },
    );
  }
}

async function startPostgres(state: ClusterState, log: (line: string) => void): Promise<void> {
  const data = join(state.dir, 'postgres');
  const sockets = join(state.dir, 'postgres-socket');
  const port = String(state.ports.postgres);
  mkdirSync(sockets, { recursive: true });
  if (isRoot()) {
    // PostgreSQL runs as `postgres`: it must reach the folder and own its data. The cluster's
    // own folder is made searchable (not listable) by others, which `mktemp -d` (0700) is not;
    // a folder above it is the operator's to open.
    let at = dirname(state.dir);
    for (;;) {
      const mode = statSync(at).mode;
      if ((mode & 0o001) === 0) {
        throw new Error(
          `PostgreSQL (user postgres) cannot reach ${state.dir}: ${at} is not searchable by ` +
            'others (mode ' +
            (mode & 0o777).toString(8) +
            '); choose a cluster folder under a ' +
            `world-searchable path (e.g. \`--dir "$(mktemp -d)"\`), or \`chmod o+x ${at}\`.`,
        );
      }
      if (dirname(at) === at) break;
      at = dirname(at);
    }
    const own = statSync(state.dir).mode & 0o777;
    if ((own & 0o001) === 0) {
      chmodSync(state.dir, own | 0o001);
      log(`chmod o+x ${state.dir} (PostgreSQL runs as user postgres and must reach its data)`);
    }
    const pgUser = await run('id', ['-u', 'postgres']).catch(() => undefined);
    if (!pgUser)
      throw new Error('running as root, but there is no `postgres` user to run PostgreSQL as');
    const uid = Number(pgUser.stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    mkdirSync(data, { recursive: true, mode: 0o700 });
    chownSync(data, uid, gid);
    chownSync(sockets, uid, gid);
    chownSync(join(state.dir, 'logs'), uid, gid);
  }
  if (!existsSync(join(data, 'PG_VERSION'))) {
    log('initdb');
    await pg(
      join(state.pgBin, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
      state.dir,
    );
  }
  log(`PostgreSQL on 127.0.0.1:${port}`);
  await pg(
    join(state.pgBin, 'pg_ctl'),
    [
      '-D',
      data,
      '-l',
      join(state.dir, 'logs', 'postgres.log'),
      '-w',
      '-t',
      '60',
      '-o',
      // pg_ctl hands these to /bin/sh: the folder is quoted for paths with spaces.
      `-p ${port} -k ${shellQuote(sockets)} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      'start',
    ],
    state.dir,
  );
  await pg(
    join(state.pgBin, 'psql'),
    [
      '-h',
      sockets,
      '-p',
      port,
      '-U',
      'postgres',
      '-d',
      'postgres',
      '-v',
      'ON_ERROR_STOP=1',
      '-qc',
      "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'temporal') THEN " +
        "CREATE ROLE temporal LOGIN CREATEDB PASSWORD 'temporal'; END IF; END $$;",
    ],
    state.dir,
  );
}

async function stopPostgres(state: ClusterState): Promise<void> {
  const data = join(state.dir, 'postgres');
  if (!existsSync(join(data, 'postmaster.pid'))) return;
  await pg(
    join(state.pgBin, 'pg_ctl'),
    ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'],
    state.dir,
  );
}

// ---------------------------------------------------------------------------------------------
// Services

/** The environment deploy/temporal/config.yaml reads, for one service process. */
export function serviceEnvironment(
  state: ClusterState,
  service: ClusterService,
): Record<string, string> {
  const { ports } = state;
  return {
    TEMPORAL_SERVER_CONFIG_FILE_PATH: SERVER_CONFIG_FILE,
    TEMPORAL_SERVICES: service,
    TEMPORAL_ALLOW_NO_AUTH: 'true',
    LOG_LEVEL: state.logLevel,
    BIND_ON_IP: '127.0.0.1',
    TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(ports.frontend),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    HISTORY_GRPC_PORT: String(ports.history),
    MATCHING_GRPC_PORT: String(ports.matching),
    WORKER_GRPC_PORT: String(ports.worker),
    FRONTEND_MEMBERSHIP_PORT: String(ports.membership.frontend),
    HISTORY_MEMBERSHIP_PORT: String(ports.membership.history),
    MATCHING_MEMBERSHIP_PORT: String(ports.membership.matching),
    WORKER_MEMBERSHIP_PORT: String(ports.membership.worker),
    PROMETHEUS_ENDPOINT: `127.0.0.1:${ports.metrics[service]}`,
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(ports.postgres),
    POSTGRES_USER: 'temporal',
    POSTGRES_PWD: 'temporal',
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
    TEMPORAL_TLS: state.tls ? 'mtls' : 'off',
    ...(state.tls
      ? { TEMPORAL_TLS_DIR: state.tls.dir, TEMPORAL_TLS_SERVER_NAME: state.tls.serverName }
      : {}),
  };
}

function stateFile(dir: string): string {
  return join(dir, 'cluster.json');
}

/** The state `cluster.json` in `dir` records. @throws when there is none. */
export function readClusterState(dir: string): ClusterState {
  const file = stateFile(resolve(dir));
  if (!existsSync(file)) throw new Error(`no cluster in ${dir} (no ${file}): start one first`);
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
}

function writeState(state: ClusterState): void {
  writeFileSync(stateFile(state.dir), `${JSON.stringify(state, null, 2)}\n`);
}

/** Whether process `pid` runs `binary` (its command line's first word, on Linux). */
function runs(pid: number, binary: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === binary;
  } catch {
    return true; // no /proc (not Linux): trust the recorded pid, as before
  }
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by whoever started it) counts as gone.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

async function waitUntil(
  what: string,
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return portFree(port).then((free) => !free);
}

function logTail(state: ClusterState, service: string): string {
  const file = join(state.dir, 'logs', `${service}.log`);
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
}

/**
 * Start one service process of a cluster (again, after {@link killService}), on its ports,
 * and wait until its gRPC port listens. The process outlives the caller (its output goes to
 * `<dir>/logs/<service>.log`); `cluster.json` records its pid.
 * @throws when it exits or does not listen within 60 s (with the end of its log).
 */
export async function startService(dir: string, service: ClusterService): Promise<number> {
  const state = readClusterState(dir);
  if (alive(state.pids[service]))
    throw new Error(`${service} runs already (pid ${state.pids[service]})`);
  const out = openSync(join(state.dir, 'logs', `${service}.log`), 'a');
  const child = spawn(state.serverBin, ['start'], {
    cwd: state.dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/',
      ...serviceEnvironment(state, service),
    },
    stdio: ['ignore', out, out],
  });
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the ${service} service`);
  state.pids[service] = pid;
  writeState(state);
  const port = state.ports[service];
  try {
    await waitUntil(`the ${service} service to listen on ${port}`, 60_000, async () => {
      if (!alive(pid))
        throw new Error(`the ${service} service exited:\n${logTail(state, service)}`);
      return listening(port);
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${logTail(state, service)}`, { cause: error });
  }
  return pid;
}

/**
 * Kill one service process (SIGKILL by default: no goodbye to the membership ring) and wait
 * until it is gone.
 * @throws when it does not run.
 */
export async function killService(
  dir: string,
  service: ClusterService,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<void> {
  const state = readClusterState(dir);
  const pid = state.pids[service];
  if (!alive(pid)) throw new Error(`the ${service} service does not run`);
  process.kill(pid!, signal);
  await waitUntil(`the ${service} service (pid ${pid}) to exit`, 30_000, () => !alive(pid));
  delete state.pids[service];
  writeState(state);
}

/** What {@link restartService} did. */
export interface RestartedService {
  service: ClusterService;
  /** The process it stopped; undefined when the service did not run. */
  stoppedPid: number | undefined;
  /** The new process. */
  pid: number;
}

/**
 * Restart one service of the cluster in `dir` with the config and ports `cluster.json`
 * records (what `start` gave it): stop its process when it runs (`signal`, SIGTERM by default,
 * then SIGKILL when it is still there after 15 s), start it again, and wait until it is
 * healthy: it listens on its gRPC port and, through the frontend, the namespace answers, a
 * workflow can be started (history) and a task queue described (matching). The rest of the
 * cluster (PostgreSQL and the other services) must run.
 * @param timeoutMs how long the cluster may take to serve again after the process listens.
 *   @default 60_000
 * @throws when `service` is not one of {@link CLUSTER_SERVICES}, there is no cluster in
 *   `dir`, its PostgreSQL does not listen, or the service does not come back healthy in
 *   time (with the end of its log).
 */
export async function restartService(
  dir: string,
  service: ClusterService,
  options: { signal?: NodeJS.Signals; timeoutMs?: number } = {},
): Promise<RestartedService> {
  if (!(CLUSTER_SERVICES as readonly string[]).includes(service)) {
    throw new Error(
      `no service '${String(service)}' to restart: one of ${CLUSTER_SERVICES.join(', ')}`,
    );
  }
  const state = readClusterState(dir);
  if (!(await listening(state.ports.postgres))) {
    throw new Error(
      `the cluster in ${state.dir} is not running (its PostgreSQL does not listen on ` +
        `${state.ports.postgres}): start it with \`start --dir ${state.dir}\``,
    );
  }
  // After a crash, the recorded pid may have gone to another process: signal it only while
  // it still runs this cluster's server binary.
  const recorded = state.pids[service];
  const stoppedPid = alive(recorded) && runs(recorded!, state.serverBin) ? recorded : undefined;
  if (stoppedPid !== undefined) {
    const signal = options.signal ?? 'SIGTERM';
    process.kill(stoppedPid, signal);
    try {
      await waitUntil(
        `the ${service} service (pid ${stoppedPid}) to exit`,
        15_000,
        () => !alive(stoppedPid),
      );
    } catch {
      if (alive(stoppedPid)) process.kill(stoppedPid, 'SIGKILL');
      await waitUntil(
        `the ${service} service (pid ${stoppedPid}) to exit after SIGKILL`,
        10_000,
        () => !alive(stoppedPid),
      );
    }
    delete state.pids[service];
    writeState(state);
  }
  // Its port may stay taken for a moment after the process is gone (sockets closing).
  await waitUntil(`port ${state.ports[service]} of the ${service} service to be free`, 30_000, () =>
    portFree(state.ports[service]),
  );
  const pid = await startService(dir, service);
  await waitUntilUsable(readClusterState(dir), options.timeoutMs ?? 60_000);
  return { service, stoppedPid, pid };
}

/** A client connection to the cluster's frontend (with its client certificate under TLS). */
export async function connectToCluster(state: ClusterState): Promise<Connection> {
  return Connection.connect({
    address: state.address,
    ...(state.tls ? { tls: clientTlsConfig(state.tls) } : {}),
    connectTimeout: 5_000,
  });
}

/**
 * Wait until the frontend answers, the namespace exists (registered here when missing), the
 * history service accepts a workflow in it (a probe started and terminated at once: a new
 * namespace reaches the history and matching services' caches some seconds after its
 * registration) and the matching service describes the probe's task queue.
 */
async function waitUntilUsable(state: ClusterState, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    let connection: Connection | undefined;
    try {
      connection = await connectToCluster(state);
      const service = connection.workflowService;
      try {
        await service.describeNamespace({ namespace: state.namespace });
      } catch (error) {
        if ((error as { code?: number }).code !== 5) throw error;
        await service.registerNamespace({
          namespace: state.namespace,
          workflowExecutionRetentionPeriod: msToTs('24 hours'),
        });
      }
      const client = new Client({ connection, namespace: state.namespace });
      const probe = await client.workflow.start('cluster-probe', {
        taskQueue: 'cluster-probe',
        workflowId: `cluster-probe-${Date.now()}`,
      });
      await probe.terminate('probe');
      // The frontend asks the matching service for this (the probe's start does not wait
      // for it: history hands the task to matching later).
      await service.describeTaskQueue({
        namespace: state.namespace,
        taskQueue: { name: 'cluster-probe' },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      });
      return;
    } catch (error) {
      last = error;
      await new Promise((r) => setTimeout(r, 250));
    } finally {
      await connection?.close().catch(() => undefined);
    }
  }
  throw new Error(
    `the cluster at ${state.address} was not usable within ${timeoutMs} ms: ${String((last as Error)?.message ?? last)}`,
    { cause: last },
  );
}

/**
 * Register the session search attributes in the cluster's namespace with Temporal's CLI
 * (`temporal operator search-attribute create`, one command an attribute, as an operator of
 * any cluster runs them: the README), with the client certificate under mTLS. Registering
 * one that exists with the same type succeeds, so a restarted cluster registers them again.
 * docker-compose.yml's namespace step runs the same commands (deploy/temporal/create-namespace.sh).
 * @throws when the CLI cannot be provisioned or a command fails (its output in the message).
 */
export async function registerSearchAttributes(
  state: ClusterState,
  cacheDir?: string,
): Promise<void> {
  const { ensureTemporalCli, searchAttributeCreateArgs } = await sdkModules();
  const { temporalPath, failures } = await ensureTemporalCli({
    cacheDir: cacheDir ?? (await defaultCacheDir()),
  });
  if (!temporalPath) {
    throw new Error(`no temporal CLI to register the search attributes: ${failures.join('; ')}`);
  }
  const connection = [
    '--address',
    state.address,
    ...(state.tls
      ? [
          '--tls-ca-path',
          state.tls.caFile,
          '--tls-cert-path',
          state.tls.clientCertFile,
          '--tls-key-path',
          state.tls.clientKeyFile,
          '--tls-server-name',
          state.tls.serverName,
        ]
      : []),
  ];
  for (const args of searchAttributeCreateArgs(state.namespace)) {
    await run(temporalPath, [...args, ...connection]).catch(
      (error: { stderr?: string; message: string }) => {
        throw new Error(`${args.join(' ')} failed: ${(error.stderr || error.message).trim()}`, {
          cause: error,
        });
      },
    );
  }
}

/**
 * Start a cluster in `options.dir`: PostgreSQL (initdb on first use), the schemas, the four
 * services, the namespace and its session search attributes; resolves once a workflow can be started in it. On failure,
 * whatever it started is stopped again.
 * @throws when a port of the layout is taken, PostgreSQL or Go is missing, or a part does not
 *   come up (the error carries the end of its log).
 */
export async function startCluster(options: ClusterOptions): Promise<ClusterState> {
  const log = options.log ?? (() => undefined);
  const dir = resolve(options.dir);
  const missing = [SERVER_CONFIG_FILE, DYNAMIC_CONFIG_FILE, SCHEMA_SETUP_SCRIPT].filter(
    (file) => !existsSync(file),
  );
  if (missing.length > 0) {
    throw new Error(
      `the cluster's config is missing from ${packageRoot}: ${missing.join(', ')} ` +
        '(a clone and the package ship deploy/ beside scripts/; an older package did not: ' +
        'reinstall it, or run the cluster from a clone)',
    );
  }
  if (existsSync(stateFile(dir))) {
    const old = readClusterState(dir);
    const running = CLUSTER_SERVICES.filter((s) => alive(old.pids[s]));
    if (running.length > 0) {
      throw new Error(`a cluster runs in ${dir} already (${running.join(', ')}): stop it first`);
    }
  }
  const binaries = await ensureClusterBinaries({
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    log,
  });
  const ports = clusterPorts(options.frontendPort ?? 7233);
  const taken: number[] = [];
  for (const port of allPorts(ports)) if (!(await portFree(port))) taken.push(port);
  if (taken.length > 0) {
    throw new Error(
      `ports of the cluster layout around ${ports.frontend} are taken: ${taken.join(', ')} ` +
        '(another cluster or server?); choose another --port',
    );
  }
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const state: ClusterState = {
    version: TEMPORAL_SERVER_VERSION,
    dir,
    address: `127.0.0.1:${ports.frontend}`,
    namespace: options.namespace ?? 'default',
    ports,
    tls: options.tls ? await makeCertificates(join(dir, 'tls')) : undefined,
    logLevel: options.logLevel ?? 'info',
    serverBin: binaries.server,
    pgBin: await findPostgres(),
    pids: {},
  };
  writeState(state);
  try {
    await startPostgres(state, log);
    log('schemas (deploy/temporal/setup-postgres.sh)');
    await run('sh', [SCHEMA_SETUP_SCRIPT], {
      env: {
        ...process.env,
        SQL_TOOL: binaries.sql,
        SCHEMA_DIR: binaries.schemaDir,
        POSTGRES_SEEDS: '127.0.0.1',
        DB_PORT: String(ports.postgres),
        POSTGRES_USER: 'temporal',
        POSTGRES_PWD: 'temporal',
      },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stderr?: string; stdout?: string; message: string }) => {
      throw new Error(
        `schema setup failed: ${(error.stderr || error.stdout || error.message).trim()}`,
        { cause: error },
      );
    });
    for (const service of CLUSTER_SERVICES) {
      log(`${service} service on 127.0.0.1:${ports[service]}`);
      await startService(dir, service);
    }
    await waitUntilUsable(readClusterState(dir), 60_000);
    log(`session search attributes in namespace ${state.namespace}`);
    await registerSearchAttributes(readClusterState(dir), options.cacheDir);
    log(`namespace ${state.namespace} ready at ${state.address}${state.tls ? ' (mTLS)' : ''}`);
  } catch (error) {
    await stopCluster(dir).catch(() => undefined);
    throw error;
  }
  return readClusterState(dir);
}

/** What {@link checkCluster} found. */
export interface ClusterCheck {
  ok: boolean;
  /** One line per part: `frontend: running (pid 123)`, `namespace default: usable`... */
  lines: string[];
}

/** Check every process of the cluster in `dir`, and that a workflow can be started. */
export async function checkCluster(dir: string): Promise<ClusterCheck> {
  const state = readClusterState(dir);
  const lines: string[] = [];
  let ok = true;
  for (const service of CLUSTER_SERVICES) {
    const up = alive(state.pids[service]);
    ok &&= up;
    lines.push(`${service}: ${up ? `running (pid ${state.pids[service]})` : 'not running'}`);
  }
  const pgUp = await listening(state.ports.postgres);
  ok &&= pgUp;
  lines.push(`postgres: ${pgUp ? `listening on ${state.ports.postgres}` : 'not listening'}`);
  try {
    await waitUntilUsable(state, 5_000);
    lines.push(
      `namespace ${state.namespace} at ${state.address}: usable${state.tls ? ' (mTLS)' : ''}`,
    );
  } catch (error) {
    ok = false;
    lines.push(`namespace ${state.namespace} at ${state.address}: ${(error as Error).message}`);
  }
  return { ok, lines };
}

/**
 * Stop the cluster in `dir`: the services (SIGTERM, SIGKILL after 15 s), then PostgreSQL, and
 * wait until every process is gone. With `clean`, remove the folder too. Idempotent.
 */
export async function stopCluster(dir: string, options: { clean?: boolean } = {}): Promise<void> {
  const resolved = resolve(dir);
  if (!existsSync(stateFile(resolved))) {
    if (options.clean) rmSync(resolved, { recursive: true, force: true });
    return;
  }
  const state = readClusterState(resolved);
  const pids = Object.values(state.pids).filter((pid) => alive(pid));
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  try {
    await waitUntil('the services to exit', 15_000, () => pids.every((pid) => !alive(pid)));
  } catch {
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await waitUntil('the services to exit after SIGKILL', 10_000, () =>
      pids.every((pid) => !alive(pid)),
    );
  }
  state.pids = {};
  writeState(state);
  await stopPostgres(state);
  if (options.clean) rmSync(resolved, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// Command line

/** `value` in single quotes for a POSIX shell (a `'` inside becomes `'\''`). */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The settings a client of the cluster needs, as the `export KEY='value'` lines `start`
 * prints on stdout (its progress goes to stderr), so that
 * `eval "$(npx tsx scripts/cluster.ts start ...)"` sets them in a POSIX shell, whatever the
 * paths hold (spaces, quotes): `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE` and, under TLS,
 * `TEMPORAL_TLS_SERVER_CA_CERT_PATH`, `TEMPORAL_TLS_CLIENT_CERT_PATH`,
 * `TEMPORAL_TLS_CLIENT_KEY_PATH` and `TEMPORAL_TLS_SERVER_NAME`.
 */
export function clusterExports(state: ClusterState): string[] {
  const vars: [string, string][] = [
    ['TEMPORAL_ADDRESS', state.address],
    ['TEMPORAL_NAMESPACE', state.namespace],
  ];
  if (state.tls) {
    vars.push(
      ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', state.tls.caFile],
      ['TEMPORAL_TLS_CLIENT_CERT_PATH', state.tls.clientCertFile],
      ['TEMPORAL_TLS_CLIENT_KEY_PATH', state.tls.clientKeyFile],
      ['TEMPORAL_TLS_SERVER_NAME', state.tls.serverName],
    );
  }
  return vars.map(([key, value]) => `export ${key}=${shellQuote(value)}`);
}

const USAGE = [
  'usage: tsx scripts/cluster.ts <command> [--dir D]',
  '  start [--tls] [--port 7233] [--namespace default]   start the cluster; prints export lines',
  '  restart <frontend|history|matching|worker>          stop one service, start it again, wait',
  '  check                                                every process, and a workflow can start',
  '  stop [--clean]                                       stop everything; --clean removes D',
  '  build                                                only build and cache the binaries',
  '  certs                                                only make the certificates, in D/tls',
].join('\n');

const VALUE_FLAGS = ['--dir', '--port', '--namespace'];

function flag(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const dir = resolve(flag(args, '--dir') ?? DEFAULT_CLUSTER_DIR);
  // Progress on stderr: stdout carries only what `start` gives a shell to eval.
  const log = (line: string) => console.error(`[cluster] ${line}`);
  switch (command) {
    case 'build': {
      const started = Date.now();
      const found = await ensureClusterBinaries({ log });
      log(
        `server: ${found.server}; sql: ${found.sql} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
      return 0;
    }
    case 'certs': {
      // For docker compose (which mounts .temporal/cluster/run/tls): its containers run as
      // uid 1000, so the keys are made readable to them.
      const tls = await makeCertificates(join(dir, 'tls'), { readableKeys: true });
      log(`certificates in ${tls.dir} (keys readable by all: local test certificates)`);
      return 0;
    }
    case 'start': {
      const port = flag(args, '--port');
      if (port !== undefined && !/^\d+$/.test(port))
        throw new Error(`--port must be a number, got '${port}'`);
      const started = Date.now();
      const state = await startCluster({
        dir,
        tls: args.includes('--tls'),
        ...(port ? { frontendPort: Number(port) } : {}),
        ...(flag(args, '--namespace') ? { namespace: flag(args, '--namespace')! } : {}),
        log,
      });
      log(
        `started in ${((Date.now() - started) / 1000).toFixed(1)} s; logs in ${join(dir, 'logs')}`,
      );
      for (const line of clusterExports(state)) console.log(line);
      return 0;
    }
    case 'restart': {
      const service = args.find(
        (arg, i) => !arg.startsWith('--') && !VALUE_FLAGS.includes(args[i - 1] ?? ''),
      );
      if (!service || !(CLUSTER_SERVICES as readonly string[]).includes(service)) {
        throw new Error(
          `restart needs the service to restart, one of ${CLUSTER_SERVICES.join(', ')}` +
            (service ? `, got '${service}'` : ''),
        );
      }
      const started = Date.now();
      const done = await restartService(dir, service as ClusterService);
      log(
        `${service} restarted (pid ${done.pid}` +
          (done.stoppedPid === undefined ? ', it was not running' : `, was ${done.stoppedPid}`) +
          `) and the cluster serves, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      return 0;
    }
    case 'check': {
      const result = await checkCluster(dir);
      for (const line of result.lines) console.log(line);
      return result.ok ? 0 : 1;
    }
    case 'stop':
      await stopCluster(dir, { clean: args.includes('--clean') });
      log(`stopped${args.includes('--clean') ? ` and removed ${dir}` : ''}`);
      return 0;
    default:
      console.error(USAGE);
      return 2;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`[cluster] ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
