/** `advanced.stream`: its default, `false`, a transport of one's own, and bad values. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { memoryStreams, processMemoryStreams } from '../../../src/stream/memory.js';
import { scriptedModel } from '../../../src/testing/index.js';

const model = scriptedModel(['hi']);

describe('advanced.stream', () => {
  it("defaults to the process's shared in-memory transport", () => {
    expect(resolveAgentOptions({ model }).stream).toBe(processMemoryStreams());
  });

  it('false turns streaming off', () => {
    expect(resolveAgentOptions({ model, advanced: { stream: false } }).stream).toBeUndefined();
  });

  it('takes a transport of its own', () => {
    const transport = memoryStreams({ maxStreams: 10 });
    expect(resolveAgentOptions({ model, advanced: { stream: { transport } } }).stream).toBe(
      transport,
    );
  });

  it('refuses a transport that is not one, and unknown keys, naming advanced.stream', () => {
    const bad = [{ transport: {} }, { transprt: memoryStreams() }, true, 'redis'];
    for (const value of bad) {
      const resolve = () => resolveAgentOptions({ model, advanced: { stream: value as never } });
      expect(resolve).toThrow(ConfigError);
      expect(resolve).toThrow(/advanced\.stream must be false or \{ transport\? \}/);
    }
  });
});
