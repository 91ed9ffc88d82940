/**
 * Where a send's stream travels between the worker's activities and its readers: a small
 * append-only log per stream, read from an entry id on. The in-memory default
 * ({@link memoryStreams}) serves one process; {@link redisStreams} serves many.
 *
 * @module
 */
import type { StreamEvent } from './events.js';

/** Which stream: one per `send()` of a session. */
export interface StreamKey {
  /** The session's id. */
  sessionId: string;
  /** The send's request id (its Update id). */
  requestId: string;
}

/** One entry of a stream. */
export interface StreamEntry {
  /**
   * The entry's id, increasing within the stream. An opaque string: compare ids only by
   * handing one back as `after`.
   */
  id: string;
  /** The event the entry holds. */
  event: StreamEvent;
}

/** Options of {@link StreamTransport.read}. */
export interface StreamReadOptions {
  /** Start after this entry id. @default the stream's start (every retained entry) */
  after?: string;
  /** Stop reading (the iterator then returns). */
  signal?: AbortSignal;
}

/**
 * A stream transport. Writers never wait for readers: `append` returns at once, and a
 * reader that is slow or gone costs the writer nothing (each reader keeps its own position;
 * the transport keeps a bounded window of each stream).
 */
export interface StreamTransport {
  /** For errors and logs, e.g. `memory` or `redis`. */
  readonly name: string;
  /**
   * Append `event` to the stream `key`. Never throws and never blocks: a transport that
   * writes over the network queues the write (a bounded queue; past its bound it drops
   * entries and says so once on the next successful write's log).
   */
  append(key: StreamKey, event: StreamEvent): void;
  /**
   * Wait until the entries appended so far are written, at most `timeoutMs` (then give up
   * quietly: the stream is best effort, the session's result is not). Activities call it
   * before they complete, so a reader sees an activity's entries before the `finish` entry.
   */
  flush(timeoutMs: number): Promise<void>;
  /**
   * The entries of `key` after `options.after`, in order, waiting for new ones, until the
   * signal aborts or the caller stops iterating. Entries that left the retention window
   * before they were read are skipped.
   */
  read(key: StreamKey, options?: StreamReadOptions): AsyncIterable<StreamEntry>;
  /** Release connections and timers. */
  close?(): Promise<void>;
}

/** Whether `value` implements {@link StreamTransport}. */
export function isStreamTransport(value: unknown): value is StreamTransport {
  const t = value as StreamTransport | undefined;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.append === 'function' &&
    typeof t.read === 'function' &&
    typeof t.flush === 'function'
  );
}

/** The one string form of a key (`<sessionId>/<requestId>`), for maps and Redis keys. */
export function keyString(key: StreamKey): string {
  return `${key.sessionId}/${key.requestId}`;
}
