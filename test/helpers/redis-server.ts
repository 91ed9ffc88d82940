/**
 * A real Redis server for the stream tests: `redis-server` from the machine's packages
 * (`.ci/run` installs it), on a free loopback port, no persistence; stopped by the test.
 * And node-redis's `createClient`, from the `redis` package or `REDIS_CLIENT_MODULE`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { RedisClientLike } from '../../src/stream/redis.js';

/** A running Redis server. */
export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Start `redis-server` on a free port and wait until it accepts connections (10 s bound). */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`redis-server not ready in 10 s:\n${output}`)),
      10_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new Error(`redis-server did not start (apt-get install redis-server): ${error.message}`),
      );
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}):\n${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The module that gives node-redis: `redis`, or the file `REDIS_CLIENT_MODULE` names. */
export const redisClientModule = process.env.REDIS_CLIENT_MODULE ?? 'redis';

/** node-redis's `createClient` (the `redis` devDependency, or `REDIS_CLIENT_MODULE`). */
export async function loadRedisClient(): Promise<(options: { url: string }) => RedisClientLike> {
  // A devDependency: a missing client is a broken install, never a reason to skip the tests.
  const module = (await import(redisClientModule)) as {
    createClient: (options: { url: string }) => RedisClientLike;
  };
  return module.createClient;
}
