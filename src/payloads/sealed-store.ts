/**
 * The payload store as the SDK's own code reads and writes it (full tool outputs, full hook
 * outputs, run archives): with encryption on, each value is sealed with the agent's
 * encryption codec before it reaches the store, so the store holds ciphertext only.
 *
 * Values the payload codec offloads do not pass through here: the encryption codec sealed
 * them already, before the payload-store codec moved them out of history.
 *
 * @module
 */
import type { PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { PayloadDecryptionError, payloadKeyId } from './encryption.js';
import type { PayloadStore } from './store.js';

/** First bytes of a sealed value in the store; what follows is the sealed payload (protobuf). */
const SEALED_PREFIX = Buffer.from('durable-agent-sealed-value:1\n', 'utf8');

const encoder = new TextEncoder();

function sealedPayloadOf(data: Uint8Array): proto.temporal.api.common.v1.Payload | undefined {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (
    bytes.length < SEALED_PREFIX.length ||
    !bytes.subarray(0, SEALED_PREFIX.length).equals(SEALED_PREFIX)
  ) {
    return undefined;
  }
  return proto.temporal.api.common.v1.Payload.decode(bytes.subarray(SEALED_PREFIX.length));
}

/**
 * `store` with values sealed by `codec` (the agent's encryption codec) on `put` and opened on
 * `get`; values written before encryption was turned on are read as they are. Without a
 * codec, values pass through unchanged, and a sealed value read back is an error rather than
 * ciphertext handed over as text.
 *
 * References name the sealed bytes: the same value put twice gets two references (each seal
 * has a fresh IV), and a reference says nothing about the plaintext.
 *
 * @throws {PayloadDecryptionError} (code `PAYLOAD_UNDECRYPTABLE`) from `get`, naming the key
 *   id, for a sealed value this process has no key (or no encryption) to open.
 */
export function sealedStore(store: PayloadStore, codec: PayloadCodec | undefined): PayloadStore {
  return {
    async put(data) {
      if (!codec) return store.put(data);
      const [sealed] = await codec.encode([
        { metadata: { encoding: encoder.encode('binary/plain') }, data },
      ]);
      const body = proto.temporal.api.common.v1.Payload.encode(sealed!).finish();
      return store.put(Buffer.concat([SEALED_PREFIX, body]));
    },
    async get(ref) {
      const data = await store.get(ref);
      const sealed = sealedPayloadOf(data);
      if (!sealed) return data;
      if (!codec) {
        const keyId = payloadKeyId(sealed);
        throw new PayloadDecryptionError(
          `Payload '${ref}' is encrypted with key id '${keyId ?? '(none)'}', and this process ` +
            `has no encryption on: give the agent the key ring (the encryption option) to read it`,
          keyId,
        );
      }
      const [opened] = await codec.decode([sealed]);
      return opened?.data ?? new Uint8Array();
    },
  };
}
