/**
 * A Temporal payload codec that moves large payloads out of history into a
 * {@link PayloadStore} and leaves a small reference in their place (the claim-check
 * pattern). Workers and clients both install it, so workflow code, activities and callers
 * see the full values while history holds at most `thresholdBytes` per payload.
 *
 * @module
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { PayloadStore } from './store.js';

/** `encoding` metadata of a reference payload. */
export const PAYLOAD_REF_ENCODING = 'binary/durable-agent-payload-ref';

/** What a reference payload's data holds (JSON). */
interface RefBody {
  ref: string;
  /** Size of the stored data, bytes. */
  bytes: number;
  /** The original payload's metadata, values base64. */
  metadata: Record<string, string>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function sizeOf(payload: Payload): number {
  let size = payload.data?.length ?? 0;
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    size += key.length + (value?.length ?? 0);
  }
  return size;
}

/**
 * Build the codec.
 *
 * @param store Where payloads over the threshold go.
 * @param thresholdBytes Payloads larger than this (data plus metadata, bytes) are stored and
 *   referenced; smaller ones pass through untouched, so ordinary histories stay readable in
 *   the Temporal UI. Temporal warns at 512 KiB and fails a payload over 2 MiB.
 */
export function payloadStoreCodec(store: PayloadStore, thresholdBytes: number): PayloadCodec {
  return {
    async encode(payloads) {
      return Promise.all(
        payloads.map(async (payload) => {
          if (sizeOf(payload) <= thresholdBytes || !payload.data) return payload;
          const ref = await store.put(payload.data);
          const metadata: Record<string, string> = {};
          for (const [key, value] of Object.entries(payload.metadata ?? {})) {
            if (value) metadata[key] = Buffer.from(value).toString('base64');
          }
          const body: RefBody = { ref, bytes: payload.data.length, metadata };
          return {
            metadata: { encoding: encoder.encode(PAYLOAD_REF_ENCODING) },
            data: encoder.encode(JSON.stringify(body)),
          };
        }),
      );
    },
    async decode(payloads) {
      return Promise.all(
        payloads.map(async (payload) => {
          const encoding = payload.metadata?.encoding;
          if (!encoding || decoder.decode(encoding) !== PAYLOAD_REF_ENCODING) return payload;
          const body = JSON.parse(decoder.decode(payload.data ?? new Uint8Array())) as RefBody;
          const metadata: Record<string, Uint8Array> = {};
          for (const [key, value] of Object.entries(body.metadata)) {
            metadata[key] = Buffer.from(value, 'base64');
          }
          return { metadata, data: await store.get(body.ref) };
        }),
      );
    },
  };
}
