/**
 * The writing side of a send's stream, as the activities use it: one writer per activity
 * run, bound to its session and send, that never throws and never waits on readers.
 *
 * @module
 */
import type { StreamEvent } from './events.js';
import type { StreamTransport } from './transport.js';

/**
 * How long an activity waits, at most, for its entries to be written before it completes,
 * ms. Only a network transport waits at all; past it the stream may miss entries, the
 * session never does.
 */
export const STREAM_FLUSH_MS = 1000;

/** Appends one send's events. */
export interface SendStreamWriter {
  /** Append an event (never throws, never blocks). */
  emit(event: StreamEvent): void;
  /** Wait (at most {@link STREAM_FLUSH_MS}) until what was emitted is written. */
  flush(): Promise<void>;
}

/**
 * A writer for the send `requestId` of `sessionId`, or `undefined` when there is nothing to
 * write to: no transport (streaming off), or no send (SessionStart, SessionEnd).
 */
export function streamWriter(
  transport: StreamTransport | undefined,
  sessionId: string,
  requestId: string | undefined,
): SendStreamWriter | undefined {
  if (!transport || requestId === undefined) return undefined;
  const key = { sessionId, requestId };
  return {
    emit(event) {
      try {
        transport.append(key, event);
      } catch {
        // A transport that throws despite its contract must not fail the work it reports on.
      }
    },
    flush: () => transport.flush(STREAM_FLUSH_MS).catch(() => undefined),
  };
}

/**
 * What the model step activity hands its model for the stream: `onTextDelta` publishing
 * each piece as a `text-delta` of the step (none when streaming is off), after a `restart`
 * marker when this is not the step's first attempt; and `flush`, to await before the
 * activity completes. The first attempt first publishes the events the workflow handed the
 * step (`streamEvents`); a retry does not again (they are on the stream once).
 */
export function modelStepStream(
  transport: StreamTransport | undefined,
  input: { sessionId: string; requestId: string; step: number; streamEvents?: StreamEvent[] },
  attempt: number,
): { request: { onTextDelta?: (text: string) => void }; flush: () => Promise<void> } {
  const writer = streamWriter(transport, input.sessionId, input.requestId);
  if (!writer) return { request: {}, flush: () => Promise.resolve() };
  const { step } = input;
  if (attempt === 1) for (const event of input.streamEvents ?? []) writer.emit(event);
  if (attempt > 1) writer.emit({ type: 'restart', step, attempt });
  return {
    request: { onTextDelta: (text) => writer.emit({ type: 'text-delta', text, step }) },
    flush: () => writer.flush(),
  };
}
