/** hookInputOf: a callback's input rebuilt from a dispatch's recorded input. */
import { describe, expect, it } from 'vitest';
import { HookEvent } from '../../../src/common/hook-events.js';
import { hookInputOf } from '../../../src/common/hook-input.js';
import type { SessionLineage } from '../../../src/common/workflow-io.js';

const lineage: SessionLineage = {
  parentSessionId: 'p',
  rootSessionId: 'p',
  agentPath: 'main/researcher',
  depth: 1,
  subagent: 'researcher',
  toolUseId: 'call_1',
  stream: { sessionId: 'p', requestId: 'r1' },
};
const payload = { toolName: 'Read', toolInput: { file_path: 'a.ts' }, toolUseId: 'call_2' };

describe('hookInputOf', () => {
  it("gives a top session's callbacks no lineage fields", () => {
    const input = hookInputOf({ payload, event: HookEvent.PreToolUse, sessionId: 'p' });
    expect(input).toEqual({ ...payload, event: 'PreToolUse', sessionId: 'p' });
    for (const key of ['parentSessionId', 'agentPath', 'depth']) {
      expect(input).not.toHaveProperty(key);
    }
  });

  it("gives a sub-agent's callbacks parentSessionId, agentPath and depth from its lineage", () => {
    const input = hookInputOf({
      payload,
      event: HookEvent.PreToolUse,
      sessionId: 'p/0-call_1',
      lineage,
    });
    expect(input).toEqual({
      ...payload,
      event: 'PreToolUse',
      sessionId: 'p/0-call_1',
      parentSessionId: 'p',
      agentPath: 'main/researcher',
      depth: 1,
    });
    expect(input).not.toHaveProperty('lineage');
  });

  it('gives each call a fresh copy of the payload', () => {
    const a = hookInputOf({ payload, event: HookEvent.PreToolUse, sessionId: 'p', lineage });
    (a.toolInput as Record<string, unknown>).file_path = 'changed';
    expect(payload.toolInput.file_path).toBe('a.ts');
  });
});
