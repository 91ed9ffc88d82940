import { describe, expect, it } from 'vitest';
import { capOutput } from '../../../src/tools/output.js';

describe('capOutput', () => {
  it('returns text within the cap unchanged', () => {
    expect(capOutput('hello', 5)).toEqual({ text: 'hello', truncated: false, totalBytes: 5 });
  });

  it('cuts longer text, marker included in the budget, and says how much there was', () => {
    const text = 'x'.repeat(10_000);
    const capped = capOutput(text, 1000);
    expect(capped.truncated).toBe(true);
    expect(capped.totalBytes).toBe(10_000);
    expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(1000);
    expect(capped.text).toMatch(
      /\n\[\.\.\. output truncated: 10000 bytes total, first \d+ shown \.\.\.\]$/,
    );
    const shown = Number(/first (\d+) shown/.exec(capped.text)?.[1]);
    expect(capped.text.startsWith('x'.repeat(shown))).toBe(true);
  });

  it('cuts at a UTF-8 character boundary, never inside a character', () => {
    const text = '€'.repeat(1000); // 3 bytes each
    for (const max of [200, 201, 202, 203]) {
      const capped = capOutput(text, max);
      const body = capped.text.slice(0, capped.text.indexOf('\n[...'));
      expect(body).toBe('€'.repeat(body.length));
      expect(capped.text).not.toContain('\uFFFD');
      expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(max);
    }
  });

  it('counts bytes, not characters', () => {
    expect(capOutput('€€', 6).truncated).toBe(false);
    expect(capOutput('€€', 5).truncated).toBe(true);
  });

  it('never caps with a non-finite budget', () => {
    expect(capOutput('abc', Infinity).truncated).toBe(false);
  });
});
