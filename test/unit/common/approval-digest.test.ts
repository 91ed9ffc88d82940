/** The approval digest: what it is the hash of, how an answer names it, what a change is called. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  approvalDigest,
  digestChanges,
  digestMatches,
  shortDigest,
  whyNotDigest,
  type ApprovalDigestParts,
} from '../../../src/common/approval-digest.js';
import { canonicalJson } from '../../../src/common/json.js';

const call: ApprovalDigestParts = {
  sessionId: 's1',
  toolUseId: 'call-1',
  toolName: 'Write',
  input: { file_path: 'a.txt', content: 'A' },
  version: '1.0',
  fingerprint: '0123456789abcdef',
};

describe('approvalDigest', () => {
  it('is the sha256 of the canonical JSON of the call', () => {
    const expected = createHash('sha256').update(canonicalJson(call)).digest('hex');
    expect(approvalDigest(call)).toBe(expected);
    expect(approvalDigest(call)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on the order of the input keys', () => {
    expect(approvalDigest({ ...call, input: { content: 'A', file_path: 'a.txt' } })).toBe(
      approvalDigest(call),
    );
  });

  it.each<[string, Partial<ApprovalDigestParts>]>([
    ['the session', { sessionId: 's2' }],
    ['the tool call id', { toolUseId: 'call-2' }],
    ['the tool', { toolName: 'Edit' }],
    ['the input', { input: { file_path: 'a.txt', content: 'B' } }],
    ['a nested input value', { input: { file_path: 'a.txt', content: 'A', opts: { x: 1 } } }],
    ['the version', { version: '1.1' }],
    ['the fingerprint', { fingerprint: 'fedcba9876543210' }],
  ])('changes with %s', (_what, change) => {
    expect(approvalDigest({ ...call, ...change })).not.toBe(approvalDigest(call));
  });

  it('leaves out a version a session from before versions lacks', () => {
    const { version: _v, fingerprint: _f, ...unversioned } = call;
    expect(approvalDigest({ ...unversioned, version: undefined })).toBe(
      createHash('sha256').update(canonicalJson(unversioned)).digest('hex'),
    );
  });
});

describe('digestMatches and whyNotDigest', () => {
  const digest = approvalDigest(call);

  it('takes the whole digest or its first 12 or more hex digits', () => {
    expect(digestMatches(digest, digest)).toBe(true);
    expect(digestMatches(shortDigest(digest), digest)).toBe(true);
    expect(shortDigest(digest)).toHaveLength(12);
    expect(digestMatches(digest.slice(0, 20), digest)).toBe(true);
  });

  it('refuses fewer than 12 digits, another digest, and what is not lowercase hex', () => {
    expect(digestMatches(digest.slice(0, 11), digest)).toBe(false);
    expect(digestMatches(approvalDigest({ ...call, toolUseId: 'x' }), digest)).toBe(false);
    expect(digestMatches(digest.toUpperCase(), digest)).toBe(false);
    expect(digestMatches('', digest)).toBe(false);
  });

  it('says why a value is not a digest', () => {
    expect(whyNotDigest(digest)).toBeUndefined();
    expect(whyNotDigest(shortDigest(digest))).toBeUndefined();
    expect(whyNotDigest(42)).toMatch(/must be a string, got number/);
    expect(whyNotDigest('abc')).toMatch(/12 to 64 lowercase hex digits .* got 'abc'/);
  });
});

describe('digestChanges', () => {
  it('names nothing for the same call', () => {
    expect(digestChanges(call, { ...call, input: { ...call.input } })).toEqual([]);
  });

  it('names the input keys added, removed or changed', () => {
    expect(
      digestChanges(call, { ...call, input: { file_path: 'a.txt', content: 'B', mode: 'x' } }),
    ).toEqual(['the input (keys: content, mode)']);
    expect(digestChanges(call, { ...call, input: { content: 'A' } })).toEqual([
      'the input (keys: file_path)',
    ]);
  });

  it('names the version, else the fingerprint', () => {
    expect(digestChanges(call, { ...call, version: '1.1', fingerprint: 'ffff' })).toEqual([
      'the agent version (1.0 -> 1.1)',
    ]);
    expect(digestChanges(call, { ...call, fingerprint: 'ffff' })).toEqual([
      'the agent definition (fingerprint 0123456789abcdef -> ffff)',
    ]);
  });

  it('names another call, tool or session', () => {
    expect(digestChanges(call, { ...call, toolUseId: 'call-2', toolName: 'Edit' })).toEqual([
      "the tool call ('call-1' -> 'call-2')",
      'the tool (Write -> Edit)',
    ]);
    expect(digestChanges(call, { ...call, sessionId: 's2' })).toEqual([
      "the session ('s1' -> 's2')",
    ]);
  });
});
