/**
 * The reading side of a send's stream: what `send()` returns besides its promise, and what
 * `Session.stream()` reads.
 *
 * @module
 */
import { deserializeError, serializeError } from '../common/errors.js';
import type { SendResult } from '../common/messages.js';
import { isFinal, type ErrorEvent, type FinishEvent, type StreamedEvent } from './events.js';
import type { StreamKey, StreamTransport } from './transport.js';
import { STREAM_FLUSH_MS } from './writer.js';

/** Options of the stream readers. */
export interface StreamOptions {
  /** Stop reading: the iteration ends (without a final event). */
  signal?: AbortSignal;
}

/** Options of `Session.stream()`. */
export interface ResumeOptions extends StreamOptions {
  /** Resume after this entry id (the `id` of the last event seen). @default the stream's start */
  after?: string;
}

/**
 * The streaming side of `send()`'s answer. Each method starts a reader of its own from the
 * stream's start (within the transport's retention), so they can be called more than once
 * and after the send has finished.
 *
 * Iterating either throws a `ConfigError` (naming `advanced.stream` and `redisStreams`
 * of `durable-agent-sdk/stream`) when the client's transport is the in-memory one (the
 * default) and no worker of the agent runs in this process: that worker publishes to its
 * own process's memory, so the stream would stay empty. The send itself runs either way.
 */
export interface SendStream {
  /** The send's request id: the stream's key, with the session id (for `session.stream()`). */
  readonly requestId: string;
  /**
   * The model's text as it is produced: every `text-delta` of every model step of this
   * send, in order; its sub-agents' text is not (it has their `agentPath`: see `stream()`). Ends when the send resolves; throws the send's error when it rejects.
   * A `restart` (a step run again after its worker was lost) is not visible here: its
   * earlier deltas have been yielded already; use `stream()` to drop them.
   */
  textStream(options?: StreamOptions): AsyncIterable<string>;
  /**
   * Every event of the send as it happens (see {@link StreamedEvent}), each with its entry
   * `id`, its sub-agents' events included (tagged with their `agentPath`); the last is
   * `finish` (the send resolved) or `error` (it rejected).
   */
  stream(options?: StreamOptions): AsyncIterable<StreamedEvent>;
}

/** What a settled send's response offers the stream (a `SendResponse`). */
interface SettledSend {
  readonly status: SendResult['status'];
  readonly toolCalls: readonly SendResult['toolCalls'][number][];
  text(): string;
}

/** What `send()` returns: awaited, the `SendResponse` as before; besides, its live stream. */
export type SendCall<Response> = Promise<Response> & SendStream;

/** The final event of a send that resolved with `result`. */
export function finishEventOf(result: SendResult): FinishEvent {
  return {
    type: 'finish',
    status: result.status,
    text: result.text,
    toolCalls: result.toolCalls,
  };
}

/** The final event of a send that rejected with `error`. */
export function errorEventOf(error: unknown): ErrorEvent {
  return { type: 'error', error: serializeError(error) };
}

/**
 * Read the stream `key` from `after` on, until its final event or the signal. With no
 * transport (streaming off) there is nothing to read: use {@link sendCall}'s fallback.
 */
export async function* readStream(
  transport: StreamTransport,
  key: StreamKey,
  options: ResumeOptions = {},
): AsyncGenerator<StreamedEvent> {
  for await (const entry of transport.read(key, options)) {
    yield { ...entry.event, id: entry.id };
    if (isFinal(entry.event)) return;
  }
}

/**
 * `response` with its stream attached. `response` itself publishes the final event when it
 * settles; a reader here also ends on its own once the response has settled and the final
 * event did not arrive within a grace (a transport that lost it), with that event made
 * from the response (`id` `'final'`).
 */
export function sendCall<Response extends SettledSend>(
  response: Promise<Response>,
  transport: StreamTransport | undefined,
  key: StreamKey,
): SendCall<Response> {
  const finalOf = async (): Promise<StreamedEvent> => {
    try {
      const settled = await response;
      return {
        type: 'finish',
        status: settled.status,
        text: settled.text(),
        toolCalls: [...settled.toolCalls],
        id: 'final',
      };
    } catch (error) {
      return { ...errorEventOf(error), id: 'final' };
    }
  };

  async function* events(options: StreamOptions = {}): AsyncGenerator<StreamedEvent> {
    if (!transport) {
      yield await finalOf();
      return;
    }
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) return;
    let grace: NodeJS.Timeout | undefined;
    void finalOf().then(() => {
      grace = setTimeout(() => stop.abort(), 2 * STREAM_FLUSH_MS);
      grace.unref?.();
    });
    let ended = false;
    try {
      for await (const event of readStream(transport, key, { signal: stop.signal })) {
        yield event;
        if (isFinal(event)) {
          ended = true;
          return;
        }
      }
      // Stopped by the grace, not by the caller: the response says how it ended.
      if (!ended && !options.signal?.aborted) yield await finalOf();
    } finally {
      clearTimeout(grace);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async function* textStream(options: StreamOptions = {}): AsyncGenerator<string> {
    for await (const event of events(options)) {
      // A sub-agent's text (tagged with its path) is its own answer, not the send's.
      if (event.type === 'text-delta' && event.agentPath === undefined) yield event.text;
      else if (event.type === 'error') {
        // The very error when this process holds it; else one rebuilt from the stream.
        await response;
        throw deserializeError(event.error);
      }
    }
  }

  return Object.assign(response, {
    requestId: key.requestId,
    textStream,
    stream: events,
  });
}
