/**
 * The Temporal server behind a hook test env: its own time-skipping test server (the
 * default), its own dev server (restartable), or a server that runs already.
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../common/errors.js';
import { freePort, startDevServer, type DevServer } from '../server/dev-server.js';
import { startTimeSkippingServer } from '../server/test-server.js';
import { installQuietRuntime } from '../worker/runtime.js';

/**
 * Which server a hook test env runs on:
 * - `'time-skipping'`: its own Temporal test server; time moves with `env.sleep()`.
 * - `'dev'`: its own `temporal server start-dev`, state in a temporary SQLite file, so
 *   `env.restartServer()` keeps every session.
 * - `'existing'`: a server that runs already (`address`), shared with others.
 */
export type HookTestServerKind = 'time-skipping' | 'dev' | 'existing';

/** The server of one env, whatever its kind. */
export interface EnvServer {
  readonly kind: HookTestServerKind;
  readonly address: string;
  /** The dev server, when the env started one. */
  readonly devServer: DevServer | undefined;
  /** Let `ms` pass on the server's clock (skipped on the test server, waited elsewhere). */
  sleep(ms: number): Promise<void>;
  /** The server's clock, ms since the epoch. */
  currentTimeMs(): Promise<number>;
  /** Stop the server and start it again on the same port and state (`'dev'` only). */
  restart(): Promise<void>;
  /** Stop the server when the env started it; nothing otherwise. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Start (or pick) the env's server.
 * @throws {ConfigError} when `server` and an address are both given.
 * @throws {EngineError} when the server cannot be provisioned or started.
 */
export async function startEnvServer(options: {
  server: 'time-skipping' | 'dev' | undefined;
  address: string | undefined;
  cacheDir: string | undefined;
}): Promise<EnvServer> {
  if (options.address !== undefined) {
    if (options.server !== undefined) {
      throw new ConfigError(
        `createHookTestEnv: server '${options.server}' starts a server of its own, but an address ` +
          `was given too (${options.address}); pass one of them`,
      );
    }
    return existingServer(options.address);
  }
  const kind = options.server ?? 'time-skipping';
  if (kind !== 'time-skipping' && kind !== 'dev') {
    throw new ConfigError(
      `createHookTestEnv: server must be 'time-skipping' or 'dev', got ${JSON.stringify(kind)}`,
    );
  }
  // Before the test server's SDK code creates the default (chatty) runtime.
  installQuietRuntime();
  const cache = options.cacheDir ? { cacheDir: options.cacheDir } : {};
  if (kind === 'time-skipping') {
    const server = await startTimeSkippingServer(cache);
    return {
      kind,
      address: server.address,
      devServer: undefined,
      sleep: (ms) => server.sleep(ms),
      currentTimeMs: () => server.currentTimeMs(),
      restart: () => Promise.reject(restartRefused(kind)),
      stop: () => server.stop(),
    };
  }
  return ownDevServer(cache);
}

function existingServer(address: string): EnvServer {
  return {
    kind: 'existing',
    address,
    devServer: undefined,
    sleep: realSleep,
    currentTimeMs: async () => Date.now(),
    restart: () => Promise.reject(restartRefused('existing')),
    stop: async () => undefined,
  };
}

async function ownDevServer(cache: { cacheDir?: string }): Promise<EnvServer> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-agent-env-'));
  const dbFilename = join(dir, 'temporal.sqlite');
  const port = await freePort();
  let server: DevServer;
  try {
    server = await startDevServer({ ...cache, port, dbFilename });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped = false;
  return {
    kind: 'dev',
    address: server.address,
    get devServer() {
      return server;
    },
    sleep: realSleep,
    currentTimeMs: async () => Date.now(),
    async restart() {
      if (stopped) throw new Error('The env server was stopped (teardown ran)');
      await server.stop();
      server = await startDevServer({ ...cache, port, dbFilename });
    },
    async stop() {
      stopped = true;
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function restartRefused(kind: HookTestServerKind): Error {
  return new ConfigError(
    kind === 'existing'
      ? 'env.restartServer(): this env uses a server it did not start (address); create the env ' +
          "with server: 'dev' to restart its server"
      : "env.restartServer(): the time-skipping test server keeps its state in memory only; create the env with server: 'dev' to restart its server",
  );
}

function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
