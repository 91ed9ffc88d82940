/**
 * How encryption at rest is wired into an agent: the `encryption` option, the data
 * converter's codec order, the sealed payload store, the encoding failure converter and the
 * history decoder. Pure: an in-memory store, no server.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import { ConfigError } from '../../../src/common/errors.js';
import type { AgentOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import {
  ENCRYPTION_KEYS_VARIABLE,
  PayloadDecryptionError,
  encryptionCodec,
  type EncryptionKeyRing,
} from '../../../src/payloads/encryption.js';
import { agentPayloadsOf, dataConverterOf } from '../../../src/payloads/data-converter.js';
import { failureConverter } from '../../../src/payloads/failure-converter.js';
import { decodeHistoryPayloads } from '../../../src/history/decode.js';
import { sealedStore } from '../../../src/payloads/sealed-store.js';
import { payloadRef, type PayloadStore } from '../../../src/payloads/store.js';
import { scriptedModel } from '../../../src/testing/index.js';

const SECRET = 'sk-planted-0c1d2e';
const ring: EncryptionKeyRing = { currentKeyId: 'k1', keys: { k1: randomBytes(32) } };

function memoryStore(): PayloadStore & { values: Map<string, Uint8Array> } {
  const values = new Map<string, Uint8Array>();
  return {
    values,
    async put(data) {
      const ref = payloadRef(data);
      values.set(ref, Buffer.from(data));
      return ref;
    },
    async get(ref) {
      const value = values.get(ref);
      if (!value) throw new Error(`no ${ref}`);
      return value;
    },
  };
}

const agent = (encryption: AgentOptions['encryption']): AgentOptions => ({
  model: scriptedModel(['ok']),
  encryption,
});

describe('the encryption option', () => {
  const saved = process.env[ENCRYPTION_KEYS_VARIABLE];
  afterEach(() => {
    if (saved === undefined) delete process.env[ENCRYPTION_KEYS_VARIABLE];
    else process.env[ENCRYPTION_KEYS_VARIABLE] = saved;
  });

  it('is off when left out or false, even with the variable set', () => {
    process.env[ENCRYPTION_KEYS_VARIABLE] = `k1:${randomBytes(32).toString('base64')}`;
    expect(resolveAgentOptions(agent(undefined)).encryption).toBeUndefined();
    expect(resolveAgentOptions(agent(false)).encryption).toBeUndefined();
  });

  it("reads the ring from the variable with 'env', the first key current", () => {
    const a = randomBytes(32).toString('base64');
    const b = randomBytes(32).toString('base64');
    process.env[ENCRYPTION_KEYS_VARIABLE] = `new:${a},old:${b}`;
    expect(resolveAgentOptions(agent('env')).encryption).toEqual({
      currentKeyId: 'new',
      keys: { new: a, old: b },
    });
  });

  it("refuses 'env' without the variable, naming it", () => {
    delete process.env[ENCRYPTION_KEYS_VARIABLE];
    expect(() => resolveAgentOptions(agent('env'))).toThrow(ConfigError);
    expect(() => resolveAgentOptions(agent('env'))).toThrow(
      /encryption: 'env' needs DURABLE_AGENT_ENCRYPTION_KEYS/,
    );
  });

  it('refuses a ring whose current key is not among its keys, and a value of another kind', () => {
    expect(() => resolveAgentOptions(agent({ currentKeyId: 'nope', keys: ring.keys }))).toThrow(
      /encryption: Encryption currentKeyId 'nope' is not a key of the ring \(keys: k1\)/,
    );
    expect(() => resolveAgentOptions(agent('on' as unknown as 'env'))).toThrow(
      /encryption must be 'env', a key ring \{ currentKeyId, keys \}, a function returning one, or false, got 'on'/,
    );
  });

  it('calls a key function once for the options, and names a bad ring it returns', async () => {
    let calls = 0;
    const resolved = resolveAgentOptions(
      agent(async () => {
        calls++;
        return ring;
      }),
    );
    const [first, second] = await Promise.all([
      agentPayloadsOf(resolved),
      agentPayloadsOf(resolved),
    ]);
    expect(first).toBe(second);
    expect(calls).toBe(1);
    expect(first.encryption).toBeDefined();
    const bad = resolveAgentOptions(agent(() => ({ currentKeyId: 'x', keys: {} })));
    await expect(agentPayloadsOf(bad)).rejects.toThrow(
      /The encryption key function returned a bad key ring: Encryption currentKeyId 'x'/,
    );
  });
});

describe('the data converter with encryption on', () => {
  it('seals a payload before the payload-store codec offloads it, so the store holds ciphertext', async () => {
    const store = memoryStore();
    const converter = dataConverterOf(
      { payloadStore: store, offloadPayloadBytes: 1024 },
      encryptionCodec(ring),
    );
    expect(converter.failureConverterPath).toMatch(/payloads[/\\]failure-converter\.(ts|js)$/);
    let payloads: Payload[] = [defaultPayloadConverter.toPayload(`${SECRET} ${'x'.repeat(5000)}`)];
    for (const codec of converter.payloadCodecs!) payloads = await codec.encode(payloads);
    expect(store.values.size).toBe(1);
    const [stored] = [...store.values.values()];
    expect(Buffer.from(stored!).includes(SECRET)).toBe(false);
    for (const codec of [...converter.payloadCodecs!].reverse()) {
      payloads = await codec.decode(payloads);
    }
    expect(defaultPayloadConverter.fromPayload<string>(payloads[0]!)).toContain(SECRET);
  });

  it('without encryption, refuses a sealed payload naming its key id', async () => {
    const [sealed] = await encryptionCodec(ring).encode([defaultPayloadConverter.toPayload('x')]);
    const converter = dataConverterOf({ payloadStore: memoryStore(), offloadPayloadBytes: 1024 });
    const decoding = (async () => {
      let payloads = [sealed!];
      for (const codec of [...converter.payloadCodecs!].reverse()) {
        payloads = await codec.decode(payloads);
      }
    })();
    await expect(decoding).rejects.toThrow(PayloadDecryptionError);
    await expect(decoding).rejects.toThrow(/key id 'k1'/);
  });
});

describe('sealedStore', () => {
  it('stores ciphertext and reads the value back', async () => {
    const inner = memoryStore();
    const store = sealedStore(inner, encryptionCodec(ring));
    const ref = await store.put(Buffer.from(`full output ${SECRET}`));
    expect(Buffer.from(inner.values.get(ref)!).includes(SECRET)).toBe(false);
    expect(Buffer.from(await store.get(ref)).toString()).toBe(`full output ${SECRET}`);
  });

  it('reads values written before encryption was on as they are', async () => {
    const inner = memoryStore();
    const ref = await inner.put(Buffer.from('old plain value'));
    const store = sealedStore(inner, encryptionCodec(ring));
    expect(Buffer.from(await store.get(ref)).toString()).toBe('old plain value');
  });

  it('refuses a sealed value in a process without encryption, naming the key id', async () => {
    const inner = memoryStore();
    const ref = await sealedStore(inner, encryptionCodec(ring)).put(Buffer.from(SECRET));
    const error = await sealedStore(inner, undefined)
      .get(ref)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadDecryptionError);
    expect(error).toMatchObject({ code: 'PAYLOAD_UNDECRYPTABLE', keyId: 'k1' });
  });
});

describe('the encoding failure converter and decodeHistoryPayloads', () => {
  it('moves a failure message into a sealed payload, and the decoder puts it back', async () => {
    const failure = failureConverter.errorToFailure(
      ApplicationFailure.create({ message: `blocked: ${SECRET}`, nonRetryable: true }),
      defaultPayloadConverter,
    );
    expect(failure.message).toBe('Encoded failure');
    expect(JSON.stringify(failure)).not.toContain(SECRET);
    const codec = encryptionCodec(ring);
    const [sealed] = await codec.encode([failure.encodedAttributes!]);
    const history = {
      events: [
        {
          eventId: 1,
          workflowExecutionFailedEventAttributes: {
            failure: { ...failure, encodedAttributes: sealed },
          },
        },
      ],
    };
    const decoded = await decodeHistoryPayloads(history as never, [codec]);
    const restored = decoded.events![0]!.workflowExecutionFailedEventAttributes!.failure!;
    expect(restored.message).toBe(`blocked: ${SECRET}`);
    expect(restored.encodedAttributes ?? undefined).toBeUndefined();
  });
});
