/**
 * The codec chains that read (and write) encrypted sessions outside a worker: the CLI's
 * `inspect`, `replay` and `golden`, the codec server, and tests that run an encrypted agent.
 * (Failure messages and stack traces are encrypted only when the agent's failure converter
 * moves them into a payload, `encodeCommonAttributes`; reading needs nothing more: the
 * history decoder and Temporal's default failure converter put them back.)
 * The order is the agent's: the encryption codec first, the payload store's second, so on
 * encode a payload is sealed, then offloaded when large; on decode it is fetched, then opened.
 *
 * @module
 */
import type { PayloadCodec } from '@temporalio/common';
import { payloadStoreCodec } from './codec.js';
import {
  ENCRYPTION_KEYS_VARIABLE,
  PayloadDecryptionError,
  encryptionCodec,
  isEncryptedPayload,
  payloadKeyId,
  type EncryptionKeyRing,
} from './encryption.js';
import type { PayloadStore } from './store.js';

/** Where the payload store is and what it takes. */
export interface PayloadStoreSettings {
  /** The agent's payload store (references in history are read from it). */
  payloadStore: PayloadStore;
  /** Payloads larger than this, bytes, are offloaded on encode. */
  offloadPayloadBytes: number;
}

/**
 * The codecs of an encrypted agent, in data-converter order: `[encryption, payload store]`.
 *
 * @param keyRing the ring; `undefined` gives a reader without keys, whose decode refuses
 *   every encrypted payload with a {@link PayloadDecryptionError} naming its key id (and
 *   passes the rest through), so a history read without keys fails clearly, never as
 *   garbage. Such a chain's encode does not encrypt.
 * @throws {ConfigError} for a bad key ring.
 */
export function encryptedCodecs(
  keyRing: EncryptionKeyRing | undefined,
  store: PayloadStoreSettings,
): PayloadCodec[] {
  return [
    keyRing ? encryptionCodec(keyRing) : keylessCodec(),
    payloadStoreCodec(store.payloadStore, store.offloadPayloadBytes),
  ];
}

/** Decode refuses encrypted payloads (no keys here); everything else passes through. */
function keylessCodec(): PayloadCodec {
  return {
    encode: async (payloads) => payloads,
    decode: async (payloads) =>
      payloads.map((payload) => {
        if (!isEncryptedPayload(payload)) return payload;
        const keyId = payloadKeyId(payload);
        throw new PayloadDecryptionError(
          `Payload encrypted with key id '${keyId ?? '(none)'}', and no encryption keys are ` +
            `set: put that key in ${ENCRYPTION_KEYS_VARIABLE} (keyId:base64Key, comma-separated)`,
          keyId,
        );
      }),
  };
}
