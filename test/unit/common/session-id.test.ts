/** `session-<id>` (the workflow id the Web UI shows) for a session id: pure. */
import { describe, expect, it } from 'vitest';
import {
  sessionIdCandidates,
  sessionIdOf,
  sessionWorkflowId,
} from '../../../src/common/workflow-io.js';

describe('sessionIdOf', () => {
  it("strips the workflow id's session- prefix, once", () => {
    expect(sessionIdOf('session-abc')).toBe('abc');
    expect(sessionIdOf('session-session-abc')).toBe('session-abc');
    expect(sessionIdOf(sessionWorkflowId('x-1'))).toBe('x-1');
  });

  it('leaves an id without the prefix, and the bare prefix, as they are', () => {
    expect(sessionIdOf('abc')).toBe('abc');
    expect(sessionIdOf('my-session-abc')).toBe('my-session-abc');
    expect(sessionIdOf('session-')).toBe('session-');
  });
});

describe('sessionIdCandidates', () => {
  it('tries a session- argument as a workflow id first, then as a session id of its own', () => {
    expect(sessionIdCandidates('session-abc')).toEqual(['abc', 'session-abc']);
  });

  it('an argument without the prefix is only itself', () => {
    expect(sessionIdCandidates('abc')).toEqual(['abc']);
    expect(sessionIdCandidates('session-')).toEqual(['session-']);
  });
});
