/**
 * `durable-agent-sdk/payloads`: what the SDK does to payloads on their way to Temporal:
 * the payload store large values move to, the codec that moves them, and encryption at rest.
 * The agent installs these itself from its options; import them to read a history with
 * Temporal's own tools, or to build a data converter of your own.
 *
 * @module durable-agent-sdk/payloads
 */
export { fileStore, payloadRef, PayloadNotFoundError, type PayloadStore } from './store.js';
export { payloadStoreCodec, PAYLOAD_REF_ENCODING } from './codec.js';
export {
  encryptionCodec,
  keyRingFromEnv,
  openKeyRing,
  isEncryptedPayload,
  payloadKeyId,
  PayloadDecryptionError,
  ENCRYPTED_ENCODING,
  ENCRYPTION_KEY_ID_METADATA,
  ENCRYPTION_KEYS_VARIABLE,
  type EncryptionKeyRing,
} from './encryption.js';
export { decodeHistoryPayloads } from './history-payloads.js';
export { encodingFailureConverterPath } from './data-converter.js';
