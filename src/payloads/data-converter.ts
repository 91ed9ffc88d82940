/**
 * The data converter workers and clients of an agent share: Temporal's default payload
 * converter, with large payloads moved to the agent's payload store, and with encryption
 * on, every payload sealed first and failure messages encoded.
 *
 * @module
 */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import type { ResolvedAgentOptions } from '../agent/options.js';
import { ConfigError } from '../common/errors.js';
import { payloadStoreCodec } from './codec.js';
import {
  PayloadDecryptionError,
  encryptionCodec,
  isEncryptedPayload,
  openKeyRing,
  payloadKeyId,
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

type PayloadOptions = Pick<
  ResolvedAgentOptions,
  'payloadStore' | 'offloadPayloadBytes' | 'encryption'
>;

/**
 * The data converter for `options` and an opened key ring: the encryption codec BEFORE the
 * payload-store codec (encode runs the codecs in order, decode in reverse), so an offloaded
 * value is sealed before it reaches the store.
 */
export function dataConverterOf(
  options: Pick<ResolvedAgentOptions, 'payloadStore' | 'offloadPayloadBytes'>,
  encryption?: PayloadCodec,
): DataConverter {
  const offload = payloadStoreCodec(options.payloadStore, options.offloadPayloadBytes);
  if (!encryption) return { payloadCodecs: [refuseSealed, offload] };
  return {
    payloadCodecs: [encryption, offload],
    failureConverterPath: encodingFailureConverterPath(),
  };
}

/**
 * The codec of a process without encryption: encodes nothing, and refuses to decode a sealed
 * payload with an error naming its key id (rather than Temporal's `Unknown encoding`).
 */
const refuseSealed: PayloadCodec = {
  encode: async (payloads) => payloads,
  decode: async (payloads) =>
    payloads.map((payload) => {
      if (!isEncryptedPayload(payload)) return payload;
      const keyId = payloadKeyId(payload);
      throw new PayloadDecryptionError(
        `Payload encrypted with key id '${keyId ?? '(none)'}', and this process has no ` +
          `encryption on: give the agent its key ring (the encryption option) to read it`,
        keyId,
      );
    }),
};

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
  source: ResolvedAgentOptions['encryption'],
): Promise<EncryptionKeyRing | undefined> {
  if (source === undefined) return undefined;
  if (typeof source !== 'function') return source;
  let ring: EncryptionKeyRing;
  try {
    ring = await source();
  } catch (error) {
    throw new ConfigError(
      `The encryption key function threw: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
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
