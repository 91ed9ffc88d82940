/**
 * The writing side of a send's stream, as the activities use it: one writer per activity
 * run, bound to its session and send, that never throws and never waits on readers.
 *
 * @module
 */
import type { StreamEvent } from './events.js';
import type { StreamTransport } from './transport.js';
import { ROOT_AGENT_PATH } from '../common/subagents.js';

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
 * Where an activity's events go: the stream of a send, and the sub-agent whose events they
 * are. `requestId` is undefined outside a send (SessionStart, SessionEnd of a top session).
 */
export interface StreamTarget {
  /** The session of the send whose stream gets the events (a sub-agent's: its top session's). */
  sessionId: string;
  /** That send's request id. */
  requestId: string | undefined;
  /** Set on every event written (`main/researcher`): the events are a sub-agent's. */
  agentPath?: string;
}

/**
 * A writer for the stream of `target`, or `undefined` when there is nothing to write to: no
 * transport (streaming off), or no send (SessionStart, SessionEnd of a top session).
 */
export function streamWriter(
  transport: StreamTransport | undefined,
  target: StreamTarget,
): SendStreamWriter | undefined {
  const { sessionId, requestId, agentPath } = target;
  if (!transport || requestId === undefined) return undefined;
  const key = { sessionId, requestId };
  return {
    emit(event) {
      try {
        transport.append(key, taggedEvent(event, agentPath));
      } catch {
        // A transport that throws despite its contract must not fail the work it reports on.
      }
    },
    flush: () => transport.flush(STREAM_FLUSH_MS).catch(() => undefined),
  };
}

/**
 * `event` with the path of the sub-agent it is of: a sub-agent's events share its top
 * session's stream, and the path tells them apart. An event that names its path keeps it (a
 * parent's events a sub-agent publishes first, `SubagentTask.streamStart`); the top session's
 * path (`main`) is written as none, as the top session's own events have.
 */
function taggedEvent(event: StreamEvent, agentPath: string | undefined): StreamEvent {
  const named = (event as { agentPath?: string }).agentPath;
  const path = named ?? agentPath;
  if (path === undefined) return event;
  if (path !== ROOT_AGENT_PATH) return { ...event, agentPath: path } as StreamEvent;
  const { agentPath: _root, ...untagged } = event as StreamEvent & { agentPath?: string };
  return untagged as StreamEvent;
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
  target: StreamTarget,
  input: { step: number; streamEvents?: StreamEvent[] },
  attempt: number,
): { request: { onTextDelta?: (text: string) => void }; flush: () => Promise<void> } {
  const writer = streamWriter(transport, target);
  if (!writer) return { request: {}, flush: () => Promise.resolve() };
  const { step } = input;
  if (attempt === 1) for (const event of input.streamEvents ?? []) writer.emit(event);
  if (attempt > 1) writer.emit({ type: 'restart', step, attempt });
  return {
    request: { onTextDelta: (text) => writer.emit({ type: 'text-delta', text, step }) },
    flush: () => writer.flush(),
  };
}
