/**
 * A Temporal server binary run as a child of this process (the dev server, the time-skipping
 * test server): spawned with its output kept for error messages, waited on until it answers,
 * stopped without leaving a process behind, and killed when this process exits.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { EngineError, messageOf } from '../common/errors.js';
import { cutSuffix } from '../common/text.js';

/** A server process this process started. */
interface ServerProcess {
  readonly child: ChildProcess;
  /** The last 4,000 characters it wrote (stdout and stderr). */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves when it exited. Idempotent. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Spawn `path args` with its output collected, to be killed when this process exits. */
export function spawnServer(path: string, args: readonly string[]): ServerProcess {
  const child = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  running.add(child);
  installExitHook();
  let output = '';
  const collect = (chunk: Buffer) => {
    output = cutSuffix(output + chunk.toString(), 4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Wait until the server accepts TCP connections on `port` and `probe` succeeds, polling.
 * Waiting for the port first matters: gRPC keeps retrying a refused port until its connect
 * timeout, a second lost per early attempt.
 *
 * @returns what `probe` returned.
 * @throws {EngineError} `TEMPORAL_SERVER_START_FAILED` when the process exits first, or the
 *   probe has not succeeded within `timeoutMs` (the server is stopped then); the message
 *   carries the last error and the end of the server's output.
 */
export async function waitUntilReady<T>(
  server: ServerProcess,
  port: number,
  probe: () => Promise<T>,
  options: { name: string; timeoutMs: number },
): Promise<T> {
  const { child } = server;
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new EngineError(
        'TEMPORAL_SERVER_START_FAILED',
        `${options.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${server.output()}`,
      );
    }
    try {
      await portOpen(port);
      return await probe();
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new EngineError(
        'TEMPORAL_SERVER_START_FAILED',
        `${options.name} on 127.0.0.1:${port} was not ready within ${options.timeoutMs} ms ` +
          `(last error: ${messageOf(lastError)}):\n${server.output()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
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

/** Kill every server this process started when the process exits, however it exits. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const child of running) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
    });
  }
}
