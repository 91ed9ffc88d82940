/**
 * The workflow's side of approvals bound to the call: which digest an ask gets, and what a
 * refused answer is told (what changed since the call its digest names, or where that call
 * waits now). Pure: plain session state, no Temporal.
 */
import { describe, expect, it } from 'vitest';
import { approvalDigest, shortDigest } from '../../../../src/common/approval-digest.js';
import type { PendingPermission } from '../../../../src/common/permission.js';
import type { SessionWorkflowInput } from '../../../../src/common/workflow-io.js';
import {
  askedCall,
  digestRefusal,
  reaskedNote,
  rememberAsk,
  type BindingState,
} from '../../../../workflows/prompt/approval-binding.js';

function stateAt(version: string, fingerprint = `fp-${version}`): BindingState {
  return {
    input: { sessionId: 's1', version, fingerprint } as SessionWorkflowInput,
  };
}

function pending(state: BindingState, input: PendingPermission['input']): PendingPermission {
  const call = { toolUseId: 'call-1', toolName: 'Write', input };
  return {
    requestId: 'r2',
    ...call,
    toolKind: 'write',
    affectedPaths: [],
    askedAt: 0,
    deadline: 1,
    digest: rememberAsk(state, askedCall(state, call)),
  };
}

describe('rememberAsk', () => {
  it("gives the digest of the call at the session's version and fingerprint", () => {
    const state = stateAt('1.0');
    const call = { toolUseId: 'call-1', toolName: 'Write', input: { content: 'A' } };
    expect(rememberAsk(state, askedCall(state, call))).toBe(
      approvalDigest({ sessionId: 's1', ...call, version: '1.0', fingerprint: 'fp-1.0' }),
    );
  });

  it('keeps the newest 16 asks only', () => {
    const state = stateAt('1.0');
    const digests = Array.from({ length: 20 }, (_, i) =>
      rememberAsk(state, askedCall(state, { toolUseId: `c${i}`, toolName: 'W', input: {} })),
    );
    expect([...state.askedCalls!.keys()]).toEqual(digests.slice(4));
  });
});

describe('digestRefusal', () => {
  it("takes the request's own digest, whole or by its first 12 digits", () => {
    const state = stateAt('1.0');
    const request = pending(state, { content: 'B' });
    expect(digestRefusal(state, request, request.digest!)).toBeUndefined();
    expect(digestRefusal(state, request, shortDigest(request.digest!))).toBeUndefined();
  });

  it('names the input keys that changed since the ask the answer names', () => {
    const state = stateAt('1.0');
    const asked = pending(state, { file_path: 'a', content: 'A' });
    const now = pending(state, { file_path: 'a', content: 'B' });
    expect(digestRefusal(state, now, asked.digest!)).toBe(
      `Permission request 'r2' (Write a) in session 's1' has approval digest ${shortDigest(now.digest!)}, ` +
        `not ${shortDigest(asked.digest!)}: since the call the answer names was asked, the input ` +
        '(keys: content) changed; nothing was decided',
    );
  });

  it('names the agent version when an upgrade came between the ask and the request', () => {
    const before = stateAt('1.0');
    const asked = pending(before, { content: 'A' });
    const after: BindingState = { ...stateAt('1.1'), askedCalls: before.askedCalls! };
    const now = pending(after, { content: 'A' });
    expect(digestRefusal(after, now, asked.digest!)).toMatch(
      /since the call the answer names was asked, the agent version \(1\.0 -> 1\.1\) changed; nothing was decided$/,
    );
  });

  it('says when the digest names no call the session asked about', () => {
    const state = stateAt('1.0');
    const now = pending(state, { content: 'A' });
    expect(digestRefusal(state, now, 'a'.repeat(64))).toMatch(
      /not aaaaaaaaaaaa: the answer names no call this session asked about; nothing was decided$/,
    );
  });

  it('takes any answer to a request from before digests', () => {
    const state = stateAt('1.0');
    const { digest: _digest, ...old } = pending(state, { content: 'A' });
    expect(digestRefusal(state, old, 'a'.repeat(64))).toBeUndefined();
  });
});

describe('reaskedNote', () => {
  it('names the request the call waits as now, and what changed', () => {
    const state = stateAt('1.0');
    const asked = pending(state, { content: 'A' });
    const now = pending(state, { content: 'B' });
    expect(reaskedNote(state, [now], asked.digest)).toBe(
      `; the call now waits as request 'r2' with approval digest ${shortDigest(now.digest!)}; ` +
        'the input (keys: content) changed',
    );
  });

  it('says nothing without a digest, for an unknown one, or when the call does not wait', () => {
    const state = stateAt('1.0');
    const asked = pending(state, { content: 'A' });
    expect(reaskedNote(state, [], asked.digest)).toBe('');
    expect(reaskedNote(state, [asked], undefined)).toBe('');
    expect(reaskedNote(state, [asked], 'b'.repeat(64))).toBe('');
  });
});
