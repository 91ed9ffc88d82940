/** Issue 13 item 22: an `apiKey` option that is set but empty says so at once. */
import { describe, expect, it } from 'vitest';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';

describe('an empty apiKey option', () => {
  it('is a ConfigError saying it is empty and where a key may come from', () => {
    for (const apiKey of ['', '   ']) {
      expect(() => resolveAgentOptions({ model: 'gpt-4o', apiKey })).toThrow(
        /apiKey is empty: pass the provider's key .*or leave apiKey out to read OPENAI_API_KEY or ANTHROPIC_API_KEY/,
      );
    }
  });
});
