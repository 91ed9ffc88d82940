/**
 * A history's payloads decoded by a data converter's codecs (encrypted or offloaded payloads
 * made readable), and a history parsed from JSON turned into Temporal's proto objects: what
 * every reader of a recorded history (`src/history/`, the CLI, the session page) runs first.
 *
 * @module
 */
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { historyFromJSON, type History, type Payload } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';

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
 * A copy of `history` with every payload run through `codecs`' decode, as a worker or client
 * with that data converter would see it: in reverse order (the last codec of a data
 * converter's `payloadCodecs` decodes first). Covers every payload list (`input`, `result`,
 * `details`, ...), memo and header fields, events' user metadata (summary, details), and failures whose message and stack trace were
 * moved into `encodedAttributes` (`DefaultFailureConverter({ encodeCommonAttributes: true })`):
 * those get their `message` and `stackTrace` back. Search attributes are left alone (codecs
 * never see them). With no codecs, the history is returned as it is.
 *
 * Run it before `decodePayload`, the timeline or the golden reader on a history from an
 * agent with encryption or offloaded payloads: they decode with the payload converter alone.
 *
 * @param history proto objects, or JSON parsed by `JSON.parse` alone (see `normalizeHistory`)
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
  const value = decodedAttributes(attributes);
  if (typeof value?.message !== 'string') {
    failure.encodedAttributes = attributes;
    return;
  }
  failure.message = value.message;
  if (typeof value.stack_trace === 'string') failure.stackTrace = value.stack_trace;
  delete failure.encodedAttributes;
}

/** A failure's `encodedAttributes` as Temporal's failure converter wrote them, if it can read them. */
function decodedAttributes(
  attributes: Payload | undefined,
): { message?: unknown; stack_trace?: unknown } | undefined {
  if (!attributes) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(attributes);
  } catch {
    return undefined;
  }
}
