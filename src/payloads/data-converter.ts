/**
 * The data converter workers and clients of an agent share: Temporal's default payload
 * converter, with large payloads moved to the agent's payload store, and with encryption
 * on, every payload sealed first and failure messages encoded.
 *
 * @module
 */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { ConfigError, messageOf } from '../common/errors.js';
import { payloadStoreCodec } from './codec.js';
import {
  ENCRYPTION_KEYS_VARIABLE,
  PayloadDecryptionError,
  encryptionCodec,
  isEncryptedPayload,
  openKeyRing,
  payloadKeyId,
  type EncryptionKeyFunction,
  type EncryptionKeyRing,
} from './encryption.js';
import { sealedStore } from './sealed-store.js';
import type { PayloadStore } from './store.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Path of the failure converter module of an agent with encryption on
 * (`dist/src/payloads/failure-converter.js`, or the `.ts` file run from sources): Temporal's
 * default with `encodeCommonAttributes: true`. The agent sets it as its data converter's
 * `failureConverterPath` and bundles its workflow code with it; pass it as
 * `failureConverterPath` to `bundleWorkflowCode` when you build the bundle of an encrypting
 * agent yourself (`advanced.temporal.workflowBundle`).
 *
 * @throws Error when neither file exists next to this module.
 */
export function encodingFailureConverterPath(): string {
  for (const candidate of ['./failure-converter.js', './failure-converter.ts']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('durable-agent-sdk: src/payloads/failure-converter.{js,ts} not found');
}

/** What an agent's worker, client and test env use to read and write payloads. */
export interface AgentPayloads {
  /** For `Client`, `Worker.create` and replays. */
  dataConverter: DataConverter;
  /**
   * The payload store as the SDK's own code uses it (full tool and hook outputs, run
   * archives, `session.readPayload`): sealed when encryption is on.
   */
  payloadStore: PayloadStore;
  /** The encryption codec, when encryption is on. */
  encryption: PayloadCodec | undefined;
}

/** What the payload path reads of the agent's resolved options. */
export interface PayloadOptions {
  /** Where offloaded payloads go. */
  payloadStore: PayloadStore;
  /** Payloads larger than this, bytes, are offloaded on encode. */
  offloadPayloadBytes: number;
  /** The key ring of encryption at rest, or the function giving it; none when off. */
  encryption: EncryptionKeyRing | EncryptionKeyFunction | undefined;
}
/** Where the payload store is and what it takes. */
export interface PayloadStoreSettings {
  /** The agent's payload store (references in history are read from it). */
  payloadStore: PayloadStore;
  /** Payloads larger than this, bytes, are offloaded on encode. */
  offloadPayloadBytes: number;
}

/**
 * The data converter for `options` and an opened key ring: the encryption codec BEFORE the
 * payload-store codec (encode runs the codecs in order, decode in reverse), so an offloaded
 * value is sealed before it reaches the store.
 */
export function dataConverterOf(
  options: PayloadStoreSettings,
  encryption?: PayloadCodec,
): DataConverter {
  if (!encryption) {
    return {
      payloadCodecs: codecChain(
        options,
        undefined,
        'give the agent its key ring (the encryption option)',
      ),
    };
  }
  return {
    payloadCodecs: codecChain(options, encryption, ''),
    failureConverterPath: encodingFailureConverterPath(),
  };
}

/**
 * The codecs that read (and write) encrypted sessions outside a worker (the CLI's `inspect`,
 * `replay` and `golden`, the codec server, tests), in the agent's order: `[encryption,
 * payload store]`. Failure messages need nothing more to read: the history decoder and
 * Temporal's default failure converter put encoded attributes back.
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
  return codecChain(
    store,
    keyRing ? encryptionCodec(keyRing) : undefined,
    `put that key in ${ENCRYPTION_KEYS_VARIABLE} (keyId:base64Key, comma-separated)`,
  );
}

function codecChain(
  store: PayloadStoreSettings,
  encryption: PayloadCodec | undefined,
  howToRead: string,
): PayloadCodec[] {
  return [
    encryption ?? refuseSealed(howToRead),
    payloadStoreCodec(store.payloadStore, store.offloadPayloadBytes),
  ];
}

/**
 * The codec of a process without encryption: encodes nothing, and refuses to decode a sealed
 * payload with an error naming its key id and `howToRead` (rather than Temporal's `Unknown
 * encoding`).
 */
function refuseSealed(howToRead: string): PayloadCodec {
  return {
    encode: async (payloads) => payloads,
    decode: async (payloads) =>
      payloads.map((payload) => {
        if (!isEncryptedPayload(payload)) return payload;
        const keyId = payloadKeyId(payload);
        throw new PayloadDecryptionError(
          `Payload encrypted with key id '${keyId ?? '(none)'}', and this process has no ` +
            `encryption keys: ${howToRead} to read it`,
          keyId,
        );
      }),
  };
}

const loaded = new WeakMap<object, Promise<AgentPayloads>>();

/**
 * The payloads of an agent's options, built once per resolved options object (so a key
 * function is called once for an agent's worker and client together).
 * @throws {ConfigError} when the `encryption` function throws or returns a bad key ring.
 */
export function agentPayloadsOf(options: PayloadOptions): Promise<AgentPayloads> {
  let payloads = loaded.get(options);
  if (!payloads) {
    payloads = buildPayloads(options);
    loaded.set(options, payloads);
    payloads.catch(() => loaded.delete(options));
  }
  return payloads;
}

async function buildPayloads(options: PayloadOptions): Promise<AgentPayloads> {
  const ring = await keyRingOf(options.encryption);
  const encryption = ring ? encryptionCodec(ring) : undefined;
  return {
    dataConverter: dataConverterOf(options, encryption),
    payloadStore: sealedStore(options.payloadStore, encryption),
    encryption,
  };
}

async function keyRingOf(
  source: PayloadOptions['encryption'],
): Promise<EncryptionKeyRing | undefined> {
  if (source === undefined) return undefined;
  if (typeof source !== 'function') return source;
  let ring: EncryptionKeyRing;
  try {
    ring = await source();
  } catch (error) {
    throw new ConfigError(`The encryption key function threw: ${messageOf(error)}`, {
      cause: error,
    });
  }
  try {
    openKeyRing(ring);
  } catch (error) {
    throw new ConfigError(
      `The encryption key function returned a bad key ring: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return ring;
}
