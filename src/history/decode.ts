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
import {
  defaultPayloadConverter,
  type PayloadCodec,
  type PayloadConverter,
} from '@temporalio/common';
import { historyFromJSON, type History, type Payload } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import type { SessionWorkflowInput } from '../common/protocol.js';
import { PAYLOAD_REF_ENCODING } from '../payloads/codec.js';

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
 * a value; `undefined` as {@link decodePayload} gives it.
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
 * A history as Temporal's proto objects: one parsed from JSON by `JSON.parse` alone (event
 * ids as strings, payloads as base64 text) is converted with Temporal's `historyFromJSON`;
 * one already converted (`fetchHistory()`, `historyFromJSON`) is returned as is.
 * @throws {TypeError} when `history` is not a history (no events).
 */
export function normalizeHistory(history: History): History {
  const events = (history as { events?: unknown } | null | undefined)?.events;
  if (!Array.isArray(events)) {
    throw new TypeError('not a workflow history: it has no events array');
  }
  const first = events[0] as { eventId?: unknown } | undefined;
  return typeof first?.eventId === 'string' ? historyFromJSON(history) : history;
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

/**
 * A copy of `history` with every payload run through `codecs`' decode, as a worker or client
 * with that data converter would see it: in reverse order (the last codec of a data
 * converter's `payloadCodecs` decodes first). Covers every payload list (`input`, `result`,
 * `details`, ...), memo and header fields, events' user metadata (summary, details), and failures whose message and stack trace were
 * moved into `encodedAttributes` (`DefaultFailureConverter({ encodeCommonAttributes: true })`):
 * those get their `message` and `stackTrace` back. Search attributes are left alone (codecs
 * never see them). With no codecs, the history is returned as it is.
 *
 * Run it before {@link decodePayload}, the timeline or the golden reader on a history from an
 * agent with encryption or offloaded payloads: they decode with the payload converter alone.
 *
 * @param history proto objects, or JSON parsed by `JSON.parse` alone (see {@link normalizeHistory})
 * @throws what a codec's decode throws, e.g. `PayloadDecryptionError` (code
 *   `PAYLOAD_UNDECRYPTABLE`, naming the key id) for a payload the key ring cannot open, or
 *   `PayloadNotFoundError` for a reference missing from the payload store.
 */
export async function decodeHistoryPayloads(
  history: History,
  codecs: readonly PayloadCodec[],
): Promise<History> {
  const normalized = normalizeHistory(history);
  if (codecs.length === 0) return normalized;
  const History = proto.temporal.api.history.v1.History;
  const copy = History.decode(
    History.encode(normalized as proto.temporal.api.history.v1.IHistory).finish(),
  );
  const decodeAll = async (payloads: Payload[]): Promise<Payload[]> => {
    let decoded = payloads;
    for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
    return decoded;
  };
  await decodeNode(copy, decodeAll);
  return copy;
}

type DecodeAll = (payloads: Payload[]) => Promise<Payload[]>;

async function decodeNode(node: unknown, decodeAll: DecodeAll): Promise<void> {
  if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) return;
  if (Array.isArray(node)) {
    for (const item of node) await decodeNode(item, decodeAll);
    return;
  }
  const record = node as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) continue;
    if (key === 'payloads' && Array.isArray(value)) {
      record[key] = await decodeAll(value as Payload[]);
    } else if (key === 'encodedAttributes') {
      const [attributes] = await decodeAll([value as Payload]);
      restoreFailureAttributes(record, attributes);
    } else if (key === 'userMetadata') {
      // An event's summary and details (a local activity's marker names its dispatch there):
      // single payloads, encoded by the worker's codecs as any other.
      const metadata = value as { summary?: Payload | null; details?: Payload | null };
      for (const field of ['summary', 'details'] as const) {
        const payload = metadata[field];
        if (payload) [metadata[field]] = await decodeAll([payload]);
      }
    } else if ((key === 'memo' || key === 'header') && isFieldMap(value)) {
      const names = Object.keys(value.fields);
      const decoded = await decodeAll(names.map((name) => value.fields[name]!));
      names.forEach((name, index) => (value.fields[name] = decoded[index]!));
    } else if (key !== 'searchAttributes') {
      await decodeNode(value, decodeAll);
    }
  }
}

function isFieldMap(value: object): value is { fields: Record<string, Payload> } {
  const fields = (value as { fields?: unknown }).fields;
  return typeof fields === 'object' && fields !== null;
}

/** A failure's encoded message and stack trace, put back where Temporal keeps them. */
function restoreFailureAttributes(failure: Record<string, unknown>, attributes?: Payload): void {
  const value = decodePayload<{ message?: unknown; stack_trace?: unknown }>(attributes);
  if (typeof value?.message !== 'string') {
    failure.encodedAttributes = attributes;
    return;
  }
  failure.message = value.message;
  if (typeof value.stack_trace === 'string') failure.stackTrace = value.stack_trace;
  delete failure.encodedAttributes;
}
