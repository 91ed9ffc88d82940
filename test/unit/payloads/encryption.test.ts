import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { ConfigError } from '../../../src/common/errors.js';
import {
  ENCRYPTED_ENCODING,
  ENCRYPTION_KEYS_VARIABLE,
  PayloadDecryptionError,
  encryptionCodec,
  keyRingFromEnv,
  payloadKeyId,
} from '../../../src/payloads/encryption.js';

const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const secret = 'sk-planted-4f9c2e';

function payloadOf(value: unknown) {
  return defaultPayloadConverter.toPayload(value);
}

describe('encryptionCodec', () => {
  it('seals a payload so neither its data nor its encoding is readable, and opens it back', async () => {
    const codec = encryptionCodec({ currentKeyId: 'k1', keys: { k1: oldKey } });
    const original = payloadOf({ prompt: secret });
    const [sealed] = await codec.encode([original]);
    const raw = Buffer.from(JSON.stringify(sealed));
    expect(Buffer.from(sealed!.data!).includes(secret)).toBe(false);
    expect(Buffer.from(sealed!.data!).includes('json/plain')).toBe(false);
    expect(raw.includes(secret)).toBe(false);
    expect(new TextDecoder().decode(sealed!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(payloadKeyId(sealed!)).toBe('k1');
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ prompt: secret });
  });

  it('after a rotation seals with the current key and still opens payloads of the old one', async () => {
    const before = encryptionCodec({ currentKeyId: 'k1', keys: { k1: oldKey } });
    const after = encryptionCodec({ currentKeyId: 'k2', keys: { k2: newKey, k1: oldKey } });
    const [old] = await before.encode([payloadOf('written before')]);
    const [fresh] = await after.encode([payloadOf('written after')]);
    expect(payloadKeyId(fresh!)).toBe('k2');
    const opened = await after.decode([old!, fresh!]);
    expect(opened.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      'written before',
      'written after',
    ]);
  });

  it('passes unencrypted payloads through on decode (histories from before encryption)', async () => {
    const codec = encryptionCodec({ currentKeyId: 'k1', keys: { k1: oldKey } });
    const plain = payloadOf({ a: 1 });
    const [out] = await codec.decode([plain]);
    expect(out).toBe(plain);
  });

  it('a payload of a key id the ring lacks fails naming that key id', async () => {
    const writer = encryptionCodec({ currentKeyId: 'k1', keys: { k1: oldKey } });
    const reader = encryptionCodec({ currentKeyId: 'k2', keys: { k2: newKey } });
    const [sealed] = await writer.encode([payloadOf('x')]);
    const failure = await reader.decode([sealed!]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PayloadDecryptionError);
    expect((failure as PayloadDecryptionError).code).toBe('PAYLOAD_UNDECRYPTABLE');
    expect((failure as PayloadDecryptionError).keyId).toBe('k1');
    expect((failure as Error).message).toMatch(/key id 'k1'.*\(its keys: k2\)/);
  });

  it('a wrong key under the right id fails naming the key id, never returning garbage', async () => {
    const writer = encryptionCodec({ currentKeyId: 'k1', keys: { k1: oldKey } });
    const reader = encryptionCodec({ currentKeyId: 'k1', keys: { k1: newKey } });
    const [sealed] = await writer.encode([payloadOf('x')]);
    await expect(reader.decode([sealed!])).rejects.toThrow(/key id 'k1' does not open/);
  });

  it('a payload relabelled with another key id of the ring fails to open', async () => {
    const codec = encryptionCodec({ currentKeyId: 'k1', keys: { k1: oldKey, k2: oldKey } });
    const [sealed] = await codec.encode([payloadOf('x')]);
    const relabelled = {
      ...sealed!,
      metadata: { ...sealed!.metadata, 'encryption-key-id': new TextEncoder().encode('k2') },
    };
    await expect(codec.decode([relabelled])).rejects.toThrow(/key id 'k2' does not open/);
  });

  it('refuses a bad key ring naming what is wrong', () => {
    expect(() => encryptionCodec({ currentKeyId: 'k1', keys: { k1: randomBytes(16) } })).toThrow(
      /key 'k1' is 16 bytes; AES-256 needs 32/,
    );
    expect(() => encryptionCodec({ currentKeyId: 'k9', keys: { k1: oldKey } })).toThrow(
      /currentKeyId 'k9' is not a key of the ring \(keys: k1\)/,
    );
    expect(() => encryptionCodec({ currentKeyId: 'a b', keys: { 'a b': oldKey } })).toThrow(
      ConfigError,
    );
    expect(() => encryptionCodec({ currentKeyId: 'k1', keys: { k1: 'not base64!' } })).toThrow(
      /key 'k1' is not base64/,
    );
  });
});

describe('keyRingFromEnv', () => {
  it('reads id:base64 entries with the first current', () => {
    const env = {
      [ENCRYPTION_KEYS_VARIABLE]: `k2:${newKey.toString('base64')}, k1:${oldKey.toString('base64')}`,
    };
    const ring = keyRingFromEnv(env);
    expect(ring?.currentKeyId).toBe('k2');
    expect(Object.keys(ring!.keys)).toEqual(['k2', 'k1']);
  });

  it('is undefined when the variable is unset, and names a malformed entry without its key', () => {
    expect(keyRingFromEnv({})).toBeUndefined();
    const env = {
      [ENCRYPTION_KEYS_VARIABLE]: `k1:${oldKey.toString('base64')},${newKey.toString('base64')}`,
    };
    expect(() => keyRingFromEnv(env)).toThrow(/entry 2 is not 'keyId:base64Key'/);
    try {
      keyRingFromEnv(env);
    } catch (error) {
      expect((error as Error).message).not.toContain(newKey.toString('base64'));
    }
  });
});
