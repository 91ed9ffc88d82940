/**
 * The cross-process stream transport: Redis Streams. Each send's stream is one Redis
 * stream (`XADD ... MAXLEN ~ n`, expiring after its last write); readers `XREAD BLOCK` from
 * the last entry id they saw, so a reader that reconnects with that id gets the rest, as
 * the Vercel AI SDK's resumable streams do.
 *
 * The Redis client is node-redis (`redis` on npm, v5), loaded when the transport first
 * connects: install it beside the SDK (`npm install redis@5`) or pass `createClient`.
 *
 * @module
 */
import { ConfigError, EngineError, messageOf } from '../common/errors.js';
import type { StreamEvent } from './events.js';
import {
  keyString,
  type StreamEntry,
  type StreamKey,
  type StreamReadOptions,
  type StreamTransport,
} from './transport.js';

/** The parts of a node-redis v5 client the transport uses. */
export interface RedisClientLike {
  /** Open the connection; called once per client before its first command. */
  connect(): Promise<unknown>;
  /** Send one command (`XADD`, `PEXPIRE`, `XREAD`) and resolve with its raw reply. */
  sendCommand(args: string[]): Promise<unknown>;
  /** A new client with the same options: each reader reads on a connection of its own. */
  duplicate(): RedisClientLike;
  /** Close the connection at once, dropping what is in flight. */
  destroy(): void;
  /** Close the writing connection after its pending replies; `destroy()` when absent. */
  close?(): Promise<void>;
  /** Listen for connection errors; the transport adds a listener that ignores them. */
  on?(event: 'error', listener: (error: unknown) => void): unknown;
}

/** Options of {@link redisStreams}. */
export interface RedisStreamsOptions {
  /** The server, e.g. `redis://127.0.0.1:6379` (`rediss://` for TLS, `redis://:pass@host`). */
  url: string;
  /**
   * node-redis's `createClient` (from `redis` v5), to use instead of loading the `redis`
   * package: for a bundled or otherwise installed copy.
   * @default `createClient` of the `redis` package, imported on first use
   */
  createClient?: (options: { url: string }) => RedisClientLike;
  /**
   * Entries kept per stream, approximately (`XADD ... MAXLEN ~`): Redis trims in whole
   * nodes, so a stream may hold somewhat more. @default 10000
   */
  maxLenPerStream?: number;
  /** A stream not written for this long expires (`PEXPIRE` on every write), ms. @default 600000 (10 min) */
  ttlMs?: number;
  /**
   * Writes queued in this process while Redis is slow or away: past it new entries are
   * dropped (the stream is best effort; the session is not), and the drops are counted in
   * `dropped`. @default 10000
   */
  maxQueued?: number;
  /** Prefix of the Redis keys. @default `durable-agent:stream:` */
  keyPrefix?: string;
  /** How long one `XREAD BLOCK` waits before it asks again, ms. @default 5000 */
  blockMs?: number;
}

/** A Redis Streams transport, with its counters. */
export interface RedisStreamTransport extends StreamTransport {
  /** Entries dropped because `maxQueued` writes were pending, or a write failed. */
  readonly dropped: number;
  /** Write what is queued (at most 1 s), then close every connection. */
  close(): Promise<void>;
}

/**
 * A {@link StreamTransport} on Redis Streams. Entry ids are Redis stream ids
 * (`<ms>-<seq>`). Writes go through one connection, pipelined, in order; each reader holds
 * a connection of its own while it reads (blocking reads need one) and closes it when it
 * ends. A slow or vanished reader costs the writer nothing; each stream keeps about
 * `maxLenPerStream` entries and expires `ttlMs` after its last write.
 *
 * @throws {ConfigError} when `url` is not a `redis://` or `rediss://` URL or a bound is not
 *   a positive integer; the first use rejects with a {@link ConfigError} when the `redis`
 *   package is not installed and no `createClient` is given.
 */
export function redisStreams(options: RedisStreamsOptions): RedisStreamTransport {
  const url = options?.url;
  if (typeof url !== 'string' || !/^rediss?:\/\//.test(url)) {
    throw new ConfigError(
      `redisStreams: url must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`,
    );
  }
  const redis: RedisTransportState = {
    url,
    createClient: options.createClient,
    maxLen: bound('maxLenPerStream', options.maxLenPerStream, 10_000),
    ttlMs: bound('ttlMs', options.ttlMs, 600_000),
    maxQueued: bound('maxQueued', options.maxQueued, 10_000),
    blockMs: bound('blockMs', options.blockMs, 5_000),
    prefix: options.keyPrefix ?? 'durable-agent:stream:',
    closed: false,
    dropped: 0,
    pending: new Set(),
    readers: new Set(),
  };
  return {
    name: 'redis',
    append: (key, event) => append(redis, key, event),
    flush: (timeoutMs) => flush(redis, timeoutMs),
    read: (key, readOptions) => read(redis, key, readOptions),
    get dropped() {
      return redis.dropped;
    },
    close: () => close(redis),
  };
}

/** The state of one {@link redisStreams} transport: its settings, connections and queue. */
interface RedisTransportState {
  readonly url: string;
  readonly createClient: RedisStreamsOptions['createClient'];
  readonly maxLen: number;
  readonly ttlMs: number;
  readonly maxQueued: number;
  readonly blockMs: number;
  readonly prefix: string;
  /** The writing connection, once asked for (readers duplicate it). */
  base?: Promise<RedisClientLike>;
  closed: boolean;
  dropped: number;
  /** Writes not yet answered. */
  readonly pending: Set<Promise<unknown>>;
  /** The connections of the readers now reading. */
  readonly readers: Set<RedisClientLike>;
}

function redisKey(redis: RedisTransportState, key: StreamKey): string {
  return `${redis.prefix}${keyString(key)}`;
}

async function newClient(redis: RedisTransportState): Promise<RedisClientLike> {
  const create = redis.createClient ?? (await loadCreateClient());
  const client = create({ url: redis.url });
  // node-redis reconnects by itself; without a listener an 'error' event would throw.
  client.on?.('error', () => undefined);
  await client.connect();
  return client;
}

function writer(redis: RedisTransportState): Promise<RedisClientLike> {
  redis.base ??= newClient(redis);
  redis.base.catch(() => (redis.base = undefined)); // a failed connect is tried again on the next write
  return redis.base;
}

function append(redis: RedisTransportState, key: StreamKey, event: StreamEvent): void {
  if (redis.closed) return;
  if (redis.pending.size >= redis.maxQueued) {
    redis.dropped += 1;
    return;
  }
  const name = redisKey(redis, key);
  const data = JSON.stringify(event);
  // Chained on one connection, in call order: node-redis pipelines them in that order.
  const write = writer(redis)
    .then((client) =>
      Promise.all([
        client.sendCommand(['XADD', name, 'MAXLEN', '~', String(redis.maxLen), '*', 'e', data]),
        client.sendCommand(['PEXPIRE', name, String(redis.ttlMs)]),
      ]),
    )
    .catch(() => {
      redis.dropped += 1;
    });
  redis.pending.add(write);
  void write.finally(() => redis.pending.delete(write));
}

async function flush(redis: RedisTransportState, timeoutMs: number): Promise<void> {
  if (redis.pending.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all([...redis.pending]),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]);
  clearTimeout(timer);
}

async function* read(
  redis: RedisTransportState,
  key: StreamKey,
  readOptions: StreamReadOptions = {},
): AsyncGenerator<StreamEntry> {
  const { signal } = readOptions;
  let last = readOptions.after ?? '0-0';
  if (!/^\d+-\d+$/.test(last)) {
    throw new ConfigError(
      `stream read: 'after' must be an entry id of this stream (a Redis stream id such as 1700000000000-0), got '${last}'`,
    );
  }
  if (signal?.aborted) return;
  const client = await openReader(redis);
  // A blocked XREAD holds its connection: destroying it is how an abort interrupts it.
  const onAbort = () => destroy(client);
  signal?.addEventListener('abort', onAbort, { once: true });
  const name = redisKey(redis, key);
  try {
    while (!signal?.aborted && !redis.closed) {
      const entries = await xread(redis, client, name, last, signal);
      if (entries === undefined) return;
      for (const [id, event] of entries) {
        last = id;
        yield { id, event };
        if (signal?.aborted) return;
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    redis.readers.delete(client);
    destroy(client);
  }
}

/** A connection of a reader's own (a blocking read holds it), counted in `readers`. */
async function openReader(redis: RedisTransportState): Promise<RedisClientLike> {
  const base = await writer(redis);
  const client = base.duplicate();
  client.on?.('error', () => undefined);
  await client.connect();
  redis.readers.add(client);
  return client;
}

/**
 * One `XREAD BLOCK` of stream `name` after entry `last`: the entries it returned, or
 * `undefined` when it failed because the read was aborted or the transport closed.
 *
 * @throws {EngineError} when it failed otherwise.
 */
async function xread(
  redis: RedisTransportState,
  client: RedisClientLike,
  name: string,
  last: string,
  signal: AbortSignal | undefined,
): Promise<Array<[string, StreamEvent]> | undefined> {
  let reply: unknown;
  try {
    reply = await client.sendCommand([
      'XREAD',
      'COUNT',
      '512',
      'BLOCK',
      String(redis.blockMs),
      'STREAMS',
      name,
      last,
    ]);
  } catch (error) {
    if (signal?.aborted || redis.closed) return undefined;
    throw new EngineError(
      'ENGINE_ERROR',
      `redisStreams: reading ${name} failed: ${messageOf(error)}`,
      { cause: error },
    );
  }
  return entriesOf(reply);
}

/** Write what is queued (at most 1 s), then close every connection. */
async function close(redis: RedisTransportState): Promise<void> {
  await flush(redis, 1000);
  redis.closed = true;
  for (const client of redis.readers) destroy(client);
  redis.readers.clear();
  const client = await redis.base?.catch(() => undefined);
  redis.base = undefined;
  if (client) await (client.close?.().catch(() => undefined) ?? destroy(client));
}

/** Close a connection now; one closed already is left as it is. */
function destroy(client: RedisClientLike): void {
  try {
    client.destroy();
  } catch {
    // closed already (node-redis throws ClientClosedError)
  }
}

/** The entries of an `XREAD` reply (RESP2 arrays: `[[key, [[id, [field, value]], ...]]]`). */
function entriesOf(reply: unknown): Array<[string, StreamEvent]> {
  if (!Array.isArray(reply)) return [];
  const out: Array<[string, StreamEvent]> = [];
  for (const stream of reply as unknown[]) {
    const entries = Array.isArray(stream) ? (stream[1] as unknown) : undefined;
    if (!Array.isArray(entries)) continue;
    for (const entry of entries as unknown[]) {
      if (!Array.isArray(entry)) continue;
      const id = String(entry[0]);
      const fields = entry[1] as unknown[];
      const at = Array.isArray(fields) ? fields.findIndex((f) => String(f) === 'e') : -1;
      if (at < 0) continue;
      out.push([id, JSON.parse(String(fields[at + 1])) as StreamEvent]);
    }
  }
  return out;
}

async function loadCreateClient(): Promise<(options: { url: string }) => RedisClientLike> {
  // A variable, so that the SDK builds without the optional `redis` package installed.
  const name = 'redis';
  try {
    const module = (await import(name)) as {
      createClient: (options: { url: string }) => RedisClientLike;
    };
    return module.createClient;
  } catch (error) {
    throw new ConfigError(
      `redisStreams needs the 'redis' package (node-redis v5): npm install redis@5, or pass createClient (${messageOf(error)})`,
    );
  }
}

function bound(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new ConfigError(`redisStreams: ${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
