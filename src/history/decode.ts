/**
 * Reading what a Temporal history records: a payload as a value, a protobuf int64 as a
 * number, the session a history belongs to, and the history's form (proto objects, or
 * JSON parsed by `JSON.parse` alone); and running a data converter's codecs over every
 * payload of a history (encrypted or offloaded payloads), before any of that reads it. Pure
 * apart from what the codecs do (a payload store reads its files). The timeline, the
 * nondeterminism messages, history files, golden sessions and the assertions all read
 * histories through these.
 *
 * @module
 */
import { defaultPayloadConverter, type PayloadConverter } from '@temporalio/common';
import type { History, Payload } from '@temporalio/common/lib/proto-utils.js';
import type { SessionWorkflowInput } from '../common/workflow-io.js';
import { PAYLOAD_REF_ENCODING } from '../payloads/codec.js';
import { normalizeHistory } from '../payloads/history-payloads.js';

// Where a history is turned into proto objects and its payloads decoded: the payloads part
// owns it (its public entry exports it); read here with the rest.
export { decodeHistoryPayloads, normalizeHistory } from '../payloads/history-payloads.js';

/** An event's list of payloads (`input`, `result`, `details`), as history records it. */
export type PayloadList = { payloads?: Payload[] | null } | null | undefined;

/** One event of a history. */
export type HistoryEvent = NonNullable<History['events']>[number];

/**
 * One payload of a history event as a value, or `undefined` when it is absent or cannot be
 * decoded (another encoding, such as a payload-store reference without the codec).
 *
 * @param converter @default Temporal's default payload converter (JSON, binary, null)
 */
export function decodePayload<T>(
  payload: Payload | null | undefined,
  converter: PayloadConverter = defaultPayloadConverter,
): T | undefined {
  if (!payload) return undefined;
  try {
    return converter.fromPayload<T>(payload);
  } catch {
    return undefined;
  }
}

/**
 * The first payload of an event's payload list (an activity's input, a result, details) as
 * a value; `undefined` as `decodePayload` gives it.
 */
export function decodeFirstPayload<T>(
  payloads: PayloadList,
  converter: PayloadConverter = defaultPayloadConverter,
): T | undefined {
  return decodePayload<T>(payloads?.payloads?.[0], converter);
}

/** A protobuf int64 (Long, number, bigint or string) as a number; 0 when it is none. */
export function numberOf(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  if (typeof value === 'bigint') return Number(value);
  if (value && typeof value === 'object') {
    const long = value as { toNumber?: () => number; low?: number; high?: number };
    if (typeof long.toNumber === 'function') return long.toNumber();
    if (typeof long.low === 'number' && typeof long.high === 'number') {
      return long.high * 2 ** 32 + (long.low >>> 0);
    }
  }
  return 0;
}

/**
 * The session id a session's history carries: its start input's `sessionId`, else its
 * memo's; `undefined` when neither is a non-empty string (not a session's history).
 *
 * @param converter @default Temporal's default payload converter
 */
export function sessionIdOfHistory(
  history: History,
  converter: PayloadConverter = defaultPayloadConverter,
): string | undefined {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) return undefined;
  const input = decodeFirstPayload<Partial<SessionWorkflowInput>>(started.input, converter);
  if (typeof input?.sessionId === 'string' && input.sessionId !== '') return input.sessionId;
  const memo = decodePayload<unknown>(started.memo?.fields?.sessionId, converter);
  return typeof memo === 'string' && memo !== '' ? memo : undefined;
}

/**
 * Whether a workflow task started in `history`: what a replay checks. A history of only
 * `WorkflowExecutionStarted` has none (and `Worker.runReplayHistories` never returns on it).
 */
export function hasWorkflowTask(history: History): boolean {
  return (history.events ?? []).some((e) => e.workflowTaskStartedEventAttributes);
}

/**
 * Ids of the events of `history` (as stored, before {@link decodeHistoryPayloads}) whose
 * result the agent's payload store holds: the history has only a reference to it. Only
 * activity results are looked at (what `inspect` marks `offloaded`).
 */
export function storedPayloadEventIds(history: History): Set<number> {
  const ids = new Set<number>();
  for (const event of normalizeHistory(history).events ?? []) {
    const payloads = event.activityTaskCompletedEventAttributes?.result?.payloads ?? [];
    if (payloads.some(isReference)) ids.add(numberOf(event.eventId));
  }
  return ids;
}

const textDecoder = new TextDecoder();

function isReference(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return !!encoding && textDecoder.decode(encoding) === PAYLOAD_REF_ENCODING;
}
