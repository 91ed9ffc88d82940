/**
 * The embedded stream transport: an in-memory bus keyed by session id and send id, for a
 * client and a worker in one process. Nothing to install, nothing to start.
 *
 * @module
 */
import { ConfigError } from '../common/errors.js';
import type { StreamEvent } from './events.js';
import {
  keyString,
  type StreamEntry,
  type StreamKey,
  type StreamReadOptions,
  type StreamTransport,
} from './transport.js';

/** Options of {@link memoryStreams}. Every bound holds whatever readers do. */
export interface MemoryStreamsOptions {
  /**
   * Entries kept per stream: past it the oldest leave (a reader that had not read them
   * skips them). @default 10000
   */
  maxEntriesPerStream?: number;
  /** Streams kept: past it the one written least recently is dropped. @default 1000 */
  maxStreams?: number;
  /**
   * Bytes kept over all streams (estimated as the JSON length of each event): past it the
   * streams written least recently are dropped. @default 67108864 (64 MiB)
   */
  maxBytes?: number;
  /** A stream not written for this long is dropped, ms. @default 600000 (10 min) */
  ttlMs?: number;
}

interface Stream {
  entries: StreamEntry[];
  /** Sequence number of `entries[0]`. */
  firstSeq: number;
  nextSeq: number;
  bytes: number;
  lastAppend: number;
}

/**
 * An in-memory {@link StreamTransport}. Entry ids are decimal sequence numbers from `1`
 * within each stream. `append` is synchronous (a reader woken by it sees the entry at
 * once) and `flush` has nothing to wait for. Readers hold only their position: a slow or
 * abandoned reader keeps nothing alive, and the bounds of {@link MemoryStreamsOptions}
 * hold the memory.
 *
 * @throws {ConfigError} when a bound is not a positive integer.
 */
export function memoryStreams(options: MemoryStreamsOptions = {}): StreamTransport {
  const bus: MemoryBus = {
    maxEntries: bound('maxEntriesPerStream', options.maxEntriesPerStream, 10_000),
    maxStreams: bound('maxStreams', options.maxStreams, 1000),
    maxBytes: bound('maxBytes', options.maxBytes, 64 * 1024 * 1024),
    ttlMs: bound('ttlMs', options.ttlMs, 600_000),
    streams: new Map(),
    waiters: new Map(),
    totalBytes: 0,
    lastSweep: Date.now(),
  };
  const transport: StreamTransport = {
    name: 'memory',
    append: (key, event) => append(bus, key, event),
    flush: () => Promise.resolve(),
    read: (key, readOptions) => read(bus, key, readOptions),
    close: async () => {
      bus.streams.clear();
      bus.totalBytes = 0;
    },
  };
  inProcessOnly.add(transport);
  return transport;
}

/** The state of one {@link memoryStreams} transport: its bounds, streams and readers. */
interface MemoryBus {
  readonly maxEntries: number;
  readonly maxStreams: number;
  readonly maxBytes: number;
  readonly ttlMs: number;
  /** Least recently written first: a write moves its stream to the end. */
  readonly streams: Map<string, Stream>;
  /** Per stream name, the readers waiting for its next entry. */
  readonly waiters: Map<string, Set<() => void>>;
  totalBytes: number;
  lastSweep: number;
}

function append(bus: MemoryBus, key: StreamKey, event: StreamEvent): void {
  const name = keyString(key);
  const now = Date.now();
  let stream = bus.streams.get(name);
  if (stream) bus.streams.delete(name);
  else stream = { entries: [], firstSeq: 1, nextSeq: 1, bytes: 0, lastAppend: now };
  bus.streams.set(name, stream);
  const bytes = JSON.stringify(event).length;
  stream.entries.push({ id: String(stream.nextSeq), event });
  stream.nextSeq += 1;
  stream.bytes += bytes;
  stream.lastAppend = now;
  bus.totalBytes += bytes;
  trim(bus, stream);
  evict(bus, name);
  sweep(bus, now);
  wake(bus, name);
}

/** Cut `stream` back to `maxEntries`, in batches (an eighth of the bound at a time), so a long stream costs O(1) a write. */
function trim(bus: MemoryBus, stream: Stream): void {
  if (stream.entries.length <= bus.maxEntries + Math.ceil(bus.maxEntries / 8)) return;
  const cut = stream.entries.length - bus.maxEntries;
  for (const entry of stream.entries.splice(0, cut)) {
    const size = JSON.stringify(entry.event).length;
    stream.bytes -= size;
    bus.totalBytes -= size;
  }
  stream.firstSeq += cut;
}

/** Drop the streams written least recently while over `maxStreams` or `maxBytes`; never `name`, just written. */
function evict(bus: MemoryBus, name: string): void {
  while (
    bus.streams.size > bus.maxStreams ||
    (bus.totalBytes > bus.maxBytes && bus.streams.size > 1)
  ) {
    const oldest = bus.streams.keys().next().value;
    if (oldest === undefined || oldest === name) break;
    drop(bus, oldest);
  }
}

function drop(bus: MemoryBus, name: string): void {
  const stream = bus.streams.get(name);
  if (!stream) return;
  bus.totalBytes -= stream.bytes;
  bus.streams.delete(name);
}

/** Drop the streams not written for `ttlMs`, at most every tenth of it (10 s at most). */
function sweep(bus: MemoryBus, now: number): void {
  if (now - bus.lastSweep < Math.min(bus.ttlMs / 10, 10_000)) return;
  bus.lastSweep = now;
  for (const [name, stream] of bus.streams) {
    if (now - stream.lastAppend < bus.ttlMs) break;
    drop(bus, name);
  }
}

function wake(bus: MemoryBus, name: string): void {
  const waiting = bus.waiters.get(name);
  if (!waiting) return;
  bus.waiters.delete(name);
  for (const resolve of waiting) resolve();
}

/** Resolves at the next append to stream `name`, or when `signal` aborts. */
function nextAppend(bus: MemoryBus, name: string, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    let set = bus.waiters.get(name);
    if (!set) bus.waiters.set(name, (set = new Set()));
    const done = () => {
      signal?.removeEventListener('abort', done);
      set.delete(done);
      if (set.size === 0 && bus.waiters.get(name) === set) bus.waiters.delete(name);
      resolve();
    };
    set.add(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

async function* read(
  bus: MemoryBus,
  key: StreamKey,
  readOptions: StreamReadOptions = {},
): AsyncGenerator<StreamEntry> {
  const { signal } = readOptions;
  const name = keyString(key);
  let next = readOptions.after === undefined ? 1 : seqOf(readOptions.after) + 1;
  while (!signal?.aborted) {
    const stream = bus.streams.get(name);
    if (stream) {
      if (next < stream.firstSeq) next = stream.firstSeq;
      while (next < stream.nextSeq && !signal?.aborted) {
        const entry = stream.entries[next - stream.firstSeq];
        next += 1;
        if (entry) yield entry;
      }
      if (signal?.aborted) return;
    }
    await nextAppend(bus, name, signal);
  }
}

/** The transports {@link memoryStreams} made: they reach readers of this process only. */
const inProcessOnly = new WeakSet<StreamTransport>();
/** Per such transport, the agents whose workers in this process publish to it, counted. */
const publishers = new WeakMap<StreamTransport, Map<string, number>>();

/**
 * A worker of agent `agentName` in this process publishes its sends' streams to
 * `transport` (until the returned function is called: the worker stopped). What
 * {@link sharedStreams} checks for an in-memory transport.
 */
export function publishInProcess(transport: StreamTransport, agentName: string): () => void {
  let agents = publishers.get(transport);
  if (!agents) publishers.set(transport, (agents = new Map()));
  agents.set(agentName, (agents.get(agentName) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (agents.get(agentName) ?? 1) - 1;
    if (left > 0) agents.set(agentName, left);
    else agents.delete(agentName);
  };
}

/**
 * The client side of `transport` for agent `agentName`: `transport` itself when it reaches
 * other processes (Redis, a transport of the application's own); for an in-memory one
 * ({@link memoryStreams}, the default), the same transport whose reads first check that a
 * worker of `agentName` in this process publishes to it. Without one (a client in a process
 * of its own, its workers elsewhere) the worker publishes to its own process's memory and a
 * read here would wait on an empty stream: it throws instead.
 *
 * @throws {ConfigError} from `read()` (so from iterating `textStream()`, `stream()`,
 *   `session.stream()`), naming `advanced.stream` and `redisStreams` of
 *   `durable-agent-sdk/stream`, when no worker of `agentName` in this process publishes to
 *   the in-memory `transport`.
 */
export function sharedStreams(transport: StreamTransport, agentName: string): StreamTransport {
  if (!inProcessOnly.has(transport)) return transport;
  return {
    name: transport.name,
    append: (key, event) => transport.append(key, event),
    flush: (timeoutMs) => transport.flush(timeoutMs),
    read(key, options) {
      if (!publishers.get(transport)?.get(agentName)) {
        throw new ConfigError(
          `stream of send '${key.requestId}' (session '${key.sessionId}'): no worker of agent ` +
            `'${agentName}' runs in this process, and this client's stream transport is the ` +
            'in-memory one (advanced.stream, default memoryStreams()), which reaches only workers ' +
            "of this process: the agent's worker publishes the stream in its own process's " +
            'memory, so nothing would arrive here. Give the client and its workers one shared ' +
            "transport: advanced.stream: { transport: redisStreams({ url }) } from 'durable-agent-sdk/stream' " +
            '(the send itself runs either way: await it for the response)',
        );
      }
      return transport.read(key, options);
    },
  };
}

/** The sequence number of a memory entry id. */
function seqOf(id: string): number {
  if (!/^\d+$/.test(id)) {
    throw new ConfigError(
      `stream read: 'after' must be an entry id of this stream (a decimal number for the in-memory transport), got '${id}'`,
    );
  }
  return Number(id);
}

function bound(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new ConfigError(
      `memoryStreams: ${name} must be a positive integer, got ${String(value)}`,
    );
  }
  return value;
}

let processStreams: StreamTransport | undefined;

/**
 * The process's shared in-memory transport (created on first use, default bounds): what
 * every agent of this process uses unless `advanced.stream` says otherwise, so a client and
 * a worker of the same agent in one process meet on it.
 */
export function processMemoryStreams(): StreamTransport {
  processStreams ??= memoryStreams();
  return processStreams;
}
