/**
 * Encryption at rest for everything the SDK writes to Temporal: a payload codec that seals
 * each payload with AES-256-GCM under the key ring's current key and names that key in the
 * payload's metadata, so a ring with older keys still opens payloads written before a
 * rotation.
 *
 * The sealed form is Temporal's convention for encrypted payloads (metadata `encoding:
 * binary/encrypted` and `encryption-key-id`), so Temporal's own codec servers and tools
 * recognise it; the plaintext is the whole original payload (metadata and data) in
 * Temporal's protobuf encoding, so nothing of it, not even its encoding, is left readable.
 *
 * @module
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { ConfigError, EngineError } from '../common/errors.js';

/** `encoding` metadata of a sealed payload (Temporal's convention). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';

/** Metadata key naming the key a payload was sealed with (Temporal's convention). */
export const ENCRYPTION_KEY_ID_METADATA = 'encryption-key-id';

/**
 * Environment variable holding a key ring: comma-separated `keyId:base64Key` entries, the
 * first one current (it seals; every one opens). Example:
 * `DURABLE_AGENT_ENCRYPTION_KEYS=2026-12:q3…=,2026-06:Zm…=`.
 */
export const ENCRYPTION_KEYS_VARIABLE = 'DURABLE_AGENT_ENCRYPTION_KEYS';

/**
 * Keys for {@link encryptionCodec}: every key that may open a payload, by key id, and the
 * one that seals new payloads.
 *
 * Rotation: add the new key, make it current, keep the old ones for as long as histories
 * sealed under them are read (replay, `inspect`, the Web UI through a codec server).
 */
export interface EncryptionKeyRing {
  /** Id of the key that seals new payloads; must be a key of `keys`. */
  currentKeyId: string;
  /**
   * Every key that may open a payload, by id. A key is 32 bytes (AES-256), given as bytes or
   * as base64 text. Ids are written into history in the clear: name keys, never describe
   * their contents (`2026-12`, `kms-7f3a`).
   */
  keys: Record<string, Uint8Array | string>;
}

/** A key id's bytes, checked once. */
type OpenKeys = ReadonlyMap<string, Buffer>;

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A payload could not be opened: its key id is unknown here, or the key does not fit it. */
export class PayloadDecryptionError extends EngineError {
  /** The key id the payload names (`undefined` when it names none). */
  readonly keyId: string | undefined;
  constructor(message: string, keyId: string | undefined, options?: { cause?: unknown }) {
    super('PAYLOAD_UNDECRYPTABLE', message, options);
    this.keyId = keyId;
  }
}

function keyBytes(keyId: string, key: Uint8Array | string): Buffer {
  let bytes: Buffer;
  if (typeof key === 'string') {
    const text = key.trim();
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
      throw new ConfigError(`Encryption key '${keyId}' is not base64 text`);
    }
    bytes = Buffer.from(text, 'base64');
  } else {
    bytes = Buffer.from(key);
  }
  if (bytes.length !== KEY_BYTES) {
    throw new ConfigError(
      `Encryption key '${keyId}' is ${bytes.length} bytes; AES-256 needs ${KEY_BYTES} ` +
        `(make one with: node -e "console.log(crypto.randomBytes(32).toString('base64'))")`,
    );
  }
  return bytes;
}

/**
 * Check a key ring and decode its keys.
 *
 * @throws {ConfigError} when `currentKeyId` is not among the keys, a key id has characters
 *   outside `A-Z a-z 0-9 . _ : -` (or over 128), or a key is not 32 bytes.
 */
export function openKeyRing(ring: EncryptionKeyRing): OpenKeys {
  if (typeof ring !== 'object' || ring === null || typeof ring.keys !== 'object') {
    throw new ConfigError('An encryption key ring is { currentKeyId, keys: { [keyId]: key } }');
  }
  const keys = new Map<string, Buffer>();
  for (const [keyId, key] of Object.entries(ring.keys)) {
    if (!KEY_ID.test(keyId)) {
      throw new ConfigError(
        `Encryption key id '${keyId}' is not valid: 1 to 128 of A-Z a-z 0-9 . _ : -`,
      );
    }
    keys.set(keyId, keyBytes(keyId, key));
  }
  if (!keys.has(ring.currentKeyId)) {
    const known = [...keys.keys()].join(', ') || 'none';
    throw new ConfigError(
      `Encryption currentKeyId '${String(ring.currentKeyId)}' is not a key of the ring (keys: ${known})`,
    );
  }
  return keys;
}

/**
 * Read a key ring from {@link ENCRYPTION_KEYS_VARIABLE} (`id:base64,id:base64`, the first
 * current).
 *
 * @returns The ring, or `undefined` when the variable is unset or empty.
 * @throws {ConfigError} when an entry is not `id:base64` or a key is not 32 bytes, naming the
 *   entry (never its key).
 */
export function keyRingFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): EncryptionKeyRing | undefined {
  const text = env[ENCRYPTION_KEYS_VARIABLE]?.trim();
  if (!text) return undefined;
  const keys: Record<string, string> = {};
  let currentKeyId: string | undefined;
  for (const [index, entry] of text.split(',').entries()) {
    const colon = entry.lastIndexOf(':');
    const keyId = entry.slice(0, colon).trim();
    if (colon <= 0 || !keyId) {
      throw new ConfigError(
        `${ENCRYPTION_KEYS_VARIABLE} entry ${index + 1} is not 'keyId:base64Key'`,
      );
    }
    keys[keyId] = entry.slice(colon + 1).trim();
    currentKeyId ??= keyId;
  }
  const ring = { currentKeyId: currentKeyId ?? '', keys };
  openKeyRing(ring);
  return ring;
}

function metadataText(payload: Payload, key: string): string | undefined {
  const value = payload.metadata?.[key];
  return value ? decoder.decode(value) : undefined;
}

/** Whether `payload` is sealed by an encryption codec (by its `encoding` metadata). */
export function isEncryptedPayload(payload: Payload): boolean {
  return metadataText(payload, 'encoding') === ENCRYPTED_ENCODING;
}

/** The key id a sealed payload names, if any. */
export function payloadKeyId(payload: Payload): string | undefined {
  return metadataText(payload, ENCRYPTION_KEY_ID_METADATA);
}

/**
 * Build the encryption codec over a key ring.
 *
 * Encode seals every payload under the current key: `data` = 12-byte random IV, ciphertext,
 * 16-byte GCM tag; the key id is bound to the ciphertext as additional authenticated data,
 * so relabelling a payload with another key id fails to open. Decode opens sealed payloads
 * with the key they name and passes every other payload through (histories written before
 * encryption was turned on stay readable).
 *
 * Put it first in the data converter's `payloadCodecs` (before the payload store's codec) so
 * offloaded values are sealed before they leave for the store.
 *
 * @throws {ConfigError} at construction, for a bad key ring (see {@link openKeyRing}).
 * @throws {PayloadDecryptionError} (code `PAYLOAD_UNDECRYPTABLE`) from decode, naming the
 *   payload's key id, when the ring lacks that key or the key does not open the payload.
 */
export function encryptionCodec(ring: EncryptionKeyRing): PayloadCodec {
  const keys = openKeyRing(ring);
  const currentKeyId = ring.currentKeyId;
  const currentKey = keys.get(currentKeyId) as Buffer;
  const keyIdBytes = encoder.encode(currentKeyId);
  const known = [...keys.keys()].join(', ');

  function seal(payload: Payload): Payload {
    const plain = proto.temporal.api.common.v1.Payload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
    cipher.setAAD(keyIdBytes);
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        encoding: encoder.encode(ENCRYPTED_ENCODING),
        [ENCRYPTION_KEY_ID_METADATA]: keyIdBytes,
      },
      data: sealed,
    };
  }

  function open(payload: Payload): Payload {
    if (!isEncryptedPayload(payload)) return payload;
    const keyId = payloadKeyId(payload);
    if (keyId === undefined) {
      throw new PayloadDecryptionError(
        'An encrypted payload names no encryption key id',
        undefined,
      );
    }
    const key = keys.get(keyId);
    if (!key) {
      throw new PayloadDecryptionError(
        `Payload encrypted with key id '${keyId}', which this process does not have ` +
          `(its keys: ${known}); add that key to the key ring to read it`,
        keyId,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new PayloadDecryptionError(
        `Payload encrypted with key id '${keyId}' is truncated (${data.length} bytes)`,
        keyId,
      );
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAAD(encoder.encode(keyId));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return proto.temporal.api.common.v1.Payload.decode(plain) as Payload;
    } catch (error) {
      throw new PayloadDecryptionError(
        `Payload encrypted with key id '${keyId}' does not open with this process's key of ` +
          `that id: the key is wrong, or the payload was altered`,
        keyId,
        { cause: error },
      );
    }
  }

  return {
    encode: async (payloads) => payloads.map(seal),
    decode: async (payloads) => payloads.map(open),
  };
}

/** A function giving the encryption key ring: the agent's `encryption` option. */
export type EncryptionKeyFunction = () => EncryptionKeyRing | Promise<EncryptionKeyRing>;

/** Where the keys of encryption at rest come from: the agent's `encryption` option. */
export type EncryptionOption = 'env' | EncryptionKeyRing | EncryptionKeyFunction | false;
