import { describe, expect, it } from 'vitest';
import {
  hookDispatchProblem,
  inlineDispatchEvents,
  localDispatchEvents,
} from '../../../src/common/hook-dispatch-mode.js';
import { ConfigError } from '../../../src/common/errors.js';

describe('hookDispatch modes', () => {
  it("resolves 'inline' per event, the session's mode over the agent's", () => {
    expect(inlineDispatchEvents({ UserPromptSubmit: 'inline' })).toEqual(['UserPromptSubmit']);
    expect(localDispatchEvents({ UserPromptSubmit: 'inline' })).toEqual([]);
    // The session names the event: its mode wins, either way.
    expect(
      inlineDispatchEvents({ UserPromptSubmit: 'inline' }, { UserPromptSubmit: 'local' }),
    ).toEqual([]);
    expect(
      localDispatchEvents({ UserPromptSubmit: 'inline' }, { UserPromptSubmit: 'local' }),
    ).toEqual(['UserPromptSubmit']);
    expect(inlineDispatchEvents('local', { UserPromptSubmit: 'inline' })).toEqual([
      'UserPromptSubmit',
    ]);
    // 'local' for all events leaves the inline one inline when the session says so.
    expect(localDispatchEvents('local', { UserPromptSubmit: 'inline' })).not.toContain(
      'UserPromptSubmit',
    );
    expect(inlineDispatchEvents(undefined)).toEqual([]);
  });

  it("refuses 'inline' anywhere but UserPromptSubmit and PostToolUse, naming the path", () => {
    expect(hookDispatchProblem({ PreToolUse: 'inline' }, 'hookDispatch')).toBe(
      "hookDispatch.PreToolUse cannot be 'inline': only UserPromptSubmit (inside the send's first model step) and PostToolUse (inside the tool's execution) run inline",
    );
    expect(hookDispatchProblem({ PostToolUse: 'inline' }, 'hookDispatch')).toBeUndefined();
    expect(inlineDispatchEvents({ PostToolUse: 'inline', UserPromptSubmit: 'local' })).toEqual([
      'PostToolUse',
    ]);
    expect(hookDispatchProblem('inline', 'advanced.hookDispatch')).toMatch(
      /^advanced\.hookDispatch cannot be 'inline' for every event/,
    );
    expect(hookDispatchProblem({ UserPromptSubmit: 'inlined' }, 'hookDispatch')).toBe(
      "hookDispatch.UserPromptSubmit must be 'activity', 'local' or 'inline', got 'inlined'",
    );
    expect(() => inlineDispatchEvents({ PreToolUse: 'inline' } as never)).toThrow(ConfigError);
  });
});
