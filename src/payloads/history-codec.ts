/**
 * Reading a history an agent with encryption on wrote: every payload in it opened with the
 * data converter's codecs, and every failure's encoded message and stack trace put back, so
 * the history readers (timeline, golden sessions, assertions) see what an unencrypted
 * history holds.
 *
 * @module
 */
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';

function isPayload(value: unknown): value is Payload {
  if (typeof value !== 'object' || value === null) return false;
  const { metadata, data } = value as { metadata?: unknown; data?: unknown };
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return false;
  if (data !== undefined && data !== null && !(data instanceof Uint8Array)) return false;
  const values = Object.values(metadata);
  return values.length > 0 && values.every((v) => v instanceof Uint8Array);
}

/**
 * `history` with its payloads decoded by `codecs` (as a data converter's `payloadCodecs`:
 * the last one decodes first, as Temporal decodes), e.g. `[encryptionCodec(ring)]`, and each failure's `encodedAttributes` (message and stack trace, when a
 * failure converter encoded them) put back into `message` and `stackTrace`. Payloads no
 * codec recognises are left as they are, so a history written without encryption comes back
 * unchanged. The history is changed in place and returned.
 *
 * @throws {PayloadDecryptionError} (code `PAYLOAD_UNDECRYPTABLE`) naming the key id, when a
 *   payload is sealed with a key the codecs lack.
 */
export async function decodeHistoryPayloads(
  history: History,
  payloadCodecs: readonly PayloadCodec[],
): Promise<History> {
  const codecs = [...payloadCodecs].reverse();
  if (codecs.length === 0) return history;
  const decodeOne = async (payload: Payload): Promise<Payload> => {
    let payloads = [payload];
    for (const codec of codecs) payloads = await codec.decode(payloads);
    return payloads[0]!;
  };
  const walk = async (node: unknown, depth: number): Promise<void> => {
    if (depth > 64 || typeof node !== 'object' || node === null) return;
    if (node instanceof Uint8Array) return;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (isPayload(value)) {
        record[key] = await decodeOne(value);
      } else if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (isPayload(value[i])) value[i] = await decodeOne(value[i] as Payload);
          else await walk(value[i], depth + 1);
        }
      } else {
        await walk(value, depth + 1);
      }
    }
    const encoded = record.encodedAttributes;
    if (isPayload(encoded) && typeof record.message === 'string') {
      try {
        const attributes = defaultPayloadConverter.fromPayload<{
          message?: unknown;
          stack_trace?: unknown;
        }>(encoded);
        if (typeof attributes?.message === 'string') record.message = attributes.message;
        if (typeof attributes?.stack_trace === 'string') {
          record.stackTrace = attributes.stack_trace;
        }
        record.encodedAttributes = null;
      } catch {
        // Not attributes the default converter reads: leave the failure as it is.
      }
    }
  };
  await walk(history, 0);
  return history;
}
