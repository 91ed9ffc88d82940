/** The workflow-safe sha256 gives node:crypto's digest for every length a padding case can hit. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/common/sha256.js';

const node = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

describe('sha256Hex', () => {
  it('gives the FIPS 180-4 vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it("equals node:crypto's for every length from 0 to 300 bytes (every padding case)", () => {
    for (let length = 0; length <= 300; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(sha256Hex(bytes), `length ${length}`).toBe(node(bytes));
    }
  });

  it("hashes a string's UTF-8 bytes, as node:crypto does", () => {
    for (const text of ['é', '日本語のテキスト', '😀 emoji', 'a'.repeat(100_000)]) {
      expect(sha256Hex(text)).toBe(node(text));
    }
  });
});
