import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fileStore,
  payloadRef,
  PayloadNotFoundError,
  payloadStoreCodec,
  PAYLOAD_REF_ENCODING,
} from '../../../src/payloads/index.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const dir = () => tempDir('payload-store');
const bytes = (text: string) => new TextEncoder().encode(text);

describe('fileStore', () => {
  it('stores by content: the same bytes give the same sha256 reference, and read back whole', async () => {
    const store = fileStore(dir());
    const data = bytes('x'.repeat(3_000_000));
    const ref = await store.put(data);
    expect(ref).toBe(payloadRef(data));
    expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await store.put(data)).toBe(ref);
    expect(Buffer.from(await store.get(ref)).equals(Buffer.from(data))).toBe(true);
  });

  it('leaves no temporary files behind', async () => {
    const root = dir();
    const store = fileStore(root);
    const ref = await store.put(bytes('hello'));
    const hex = ref.slice('sha256:'.length);
    expect(readdirSync(join(root, hex.slice(0, 2)))).toEqual([hex]);
  });

  it('an unknown or malformed reference throws PayloadNotFoundError naming it', async () => {
    const store = fileStore(dir());
    const missing = payloadRef(bytes('never stored'));
    await expect(store.get(missing)).rejects.toBeInstanceOf(PayloadNotFoundError);
    await expect(store.get(missing)).rejects.toMatchObject({
      code: 'PAYLOAD_NOT_FOUND',
      ref: missing,
    });
    await expect(store.get('not-a-ref')).rejects.toMatchObject({ code: 'PAYLOAD_NOT_FOUND' });
  });

  it('a value whose content no longer matches its reference is reported corrupt', async () => {
    const root = dir();
    const store = fileStore(root);
    const ref = await store.put(bytes('original'));
    const hex = ref.slice('sha256:'.length);
    writeFileSync(join(root, hex.slice(0, 2), hex), 'tampered');
    await expect(store.get(ref)).rejects.toMatchObject({ code: 'PAYLOAD_CORRUPT' });
  });

  it('refuses an empty folder path', () => {
    expect(() => fileStore('')).toThrow(/dir must be a non-empty path/);
  });
});

describe('payloadStoreCodec', () => {
  const payload = (size: number) => ({
    metadata: { encoding: bytes('json/plain') },
    data: bytes(`"${'a'.repeat(size)}"`),
  });

  it('passes payloads at or under the threshold through untouched', async () => {
    const codec = payloadStoreCodec(fileStore(dir()), 1024);
    const small = payload(100);
    const [encoded] = await codec.encode([small]);
    expect(encoded).toBe(small);
  });

  it('replaces a larger payload by a small reference and decodes it back exactly', async () => {
    const store = fileStore(dir());
    const codec = payloadStoreCodec(store, 1024);
    const big = payload(5_000_000);
    const [encoded] = await codec.encode([big]);
    expect(new TextDecoder().decode(encoded!.metadata!.encoding!)).toBe(PAYLOAD_REF_ENCODING);
    expect(encoded!.data!.length).toBeLessThan(300);
    const [decoded] = await codec.decode([encoded!]);
    expect(Buffer.from(decoded!.data!).equals(Buffer.from(big.data))).toBe(true);
    expect(new TextDecoder().decode(decoded!.metadata!.encoding!)).toBe('json/plain');
  });

  it('decoding a reference missing from the store fails with PAYLOAD_NOT_FOUND', async () => {
    const [encoded] = await payloadStoreCodec(fileStore(dir()), 1024).encode([payload(4096)]);
    await expect(
      payloadStoreCodec(fileStore(dir()), 1024).decode([encoded!]),
    ).rejects.toMatchObject({
      code: 'PAYLOAD_NOT_FOUND',
    });
  });

  it('in a mixed batch moves only the larger payloads, and decodes only references back', async () => {
    const codec = payloadStoreCodec(fileStore(dir()), 1024);
    const [small, big, other] = [payload(10), payload(4096), payload(20)];
    // An encoding as long as the reference's, one byte off: not a reference.
    const lookalike = {
      metadata: { encoding: bytes(PAYLOAD_REF_ENCODING.slice(0, -1) + 'X') },
      data: bytes('{}'),
    };
    const encoded = await codec.encode([small, big, other, lookalike]);
    expect(encoded[0]).toBe(small);
    expect(encoded[2]).toBe(other);
    expect(encoded[3]).toBe(lookalike);
    expect(new TextDecoder().decode(encoded[1]!.metadata!.encoding!)).toBe(PAYLOAD_REF_ENCODING);
    const decoded = await codec.decode(encoded);
    expect([decoded[0], decoded[2], decoded[3]]).toEqual([small, other, lookalike]);
    expect(Buffer.from(decoded[1]!.data!).equals(Buffer.from(big.data))).toBe(true);
  });
});

describe('long-session options', () => {
  const base = { model: scriptedModel([]) };
  it('default: 100,000 context tokens, 256 KiB offload, a file store, no prompt bound', () => {
    const resolved = resolveAgentOptions(base);
    expect(resolved.maxContextTokens).toBe(100_000);
    expect(resolved.offloadPayloadBytes).toBe(262_144);
    expect(resolved.continueAsNewAfterPrompts).toBeUndefined();
    expect(typeof resolved.payloadStore.put).toBe('function');
  });

  it('names each bad value', () => {
    expect(() => resolveAgentOptions({ ...base, advanced: { maxContextTokens: 0 } })).toThrow(
      /advanced.maxContextTokens must be a positive integer, got 0/,
    );
    expect(() =>
      resolveAgentOptions({ ...base, advanced: { continueAsNewAfterPrompts: 1.5 } }),
    ).toThrow(/advanced.continueAsNewAfterPrompts must be a positive integer, got 1.5/);
    expect(() =>
      resolveAgentOptions({ ...base, advanced: { offloadPayloadBytes: 3_000_000 } }),
    ).toThrow(/advanced.offloadPayloadBytes must be an integer from 1024 to 1572864/);
    expect(() =>
      resolveAgentOptions({
        ...base,
        advanced: { payloadStore: {} as never },
      }),
    ).toThrow(/advanced.payloadStore must have put\(data\) and get\(ref\)/);
  });
});
