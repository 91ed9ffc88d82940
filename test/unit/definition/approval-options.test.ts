/**
 * `advanced.approvals` as an option: its ConfigErrors (each naming the field), the policy a
 * session records, the fingerprint (changed only when set; the callback's source is not part
 * of it) and the session's workflow input (carried only when set).
 */
import { describe, expect, it } from 'vitest';
import { sessionWorkflowInput } from '../../../src/client/session-input.js';
import { ConfigError } from '../../../src/common/errors.js';
import { manifestDifferences } from '../../../src/common/identity.js';
import type { AgentOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { definition } from '../../fixtures/version-definition.js';

const withApprovals = (approvals: unknown, permissionTimeoutMs = 60_000): AgentOptions =>
  ({
    ...definition,
    advanced: { ...definition.advanced, permissionTimeoutMs, approvals },
  }) as AgentOptions;

function configErrorOf(options: AgentOptions): ConfigError {
  try {
    resolveAgentOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but the options resolved');
}

describe('advanced.approvals', () => {
  it.each([
    ['a value that is not an object', 'soon', "advanced.approvals must be an object, got 'soon'"],
    ['an unknown key', { remindAfter: 5 }, "advanced.approvals has an unknown key 'remindAfter'"],
    [
      'a negative reminder',
      { remindAfterMs: -1 },
      'advanced.approvals.remindAfterMs must be a positive integer of ms, got -1',
    ],
    [
      'a reminder that is not an integer',
      { remindAfterMs: 1.5 },
      'advanced.approvals.remindAfterMs must be a positive integer of ms, got 1.5',
    ],
    [
      'an escalation of zero',
      { escalateAfterMs: 0 },
      'advanced.approvals.escalateAfterMs must be a positive integer of ms, got 0',
    ],
    [
      'an escalation before the reminder',
      { remindAfterMs: 2000, escalateAfterMs: 1000 },
      'advanced.approvals.escalateAfterMs must come after remindAfterMs (2000), got 1000',
    ],
    [
      'a reminder past the deadline',
      { remindAfterMs: 60_000 },
      'advanced.approvals.remindAfterMs must come before the deadline (advanced.permissionTimeoutMs, 60000 ms), got 60000',
    ],
    [
      'an escalation past the deadline',
      { escalateAfterMs: 90_000 },
      'advanced.approvals.escalateAfterMs must come before the deadline',
    ],
    [
      'an empty group',
      { escalateAfterMs: 1000, escalateTo: ' ' },
      'advanced.approvals.escalateTo must be a non-empty string',
    ],
    [
      'a group with no escalation',
      { escalateTo: 'ops' },
      'advanced.approvals.escalateTo needs escalateAfterMs',
    ],
    [
      'a notify that is not a function',
      { remindAfterMs: 1000, notify: 'https://chat.example/hook' },
      "advanced.approvals.notify must be a function, got 'https://chat.example/hook'",
    ],
    [
      'another deadline outcome',
      { deadlineOutcome: 'allow' },
      "advanced.approvals.deadlineOutcome must be 'deny', got 'allow'",
    ],
  ])('refuses %s with a ConfigError naming the field', (_what, approvals, message) => {
    const error = configErrorOf(withApprovals(approvals));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(message);
  });

  it('resolves to the policy a session records, the callback beside it', () => {
    const notify = () => undefined;
    const resolved = resolveAgentOptions(
      withApprovals({ remindAfterMs: 1000, escalateAfterMs: 2000, escalateTo: 'ops', notify }),
    ).approvals;
    expect(resolved).toEqual({
      policy: { remindAfterMs: 1000, escalateAfterMs: 2000, escalateTo: 'ops', notify: true },
      notify,
    });
    expect(resolveAgentOptions(withApprovals({ remindAfterMs: 1000 })).approvals).toEqual({
      policy: { remindAfterMs: 1000 },
    });
    expect(resolveAgentOptions(definition)).not.toHaveProperty('approvals');
    expect(resolveAgentOptions(withApprovals({}))).not.toHaveProperty('approvals');
    // A notify alone: no timed stage, but the deadline notifies.
    expect(resolveAgentOptions(withApprovals({ notify: () => undefined })).approvals).toMatchObject(
      { policy: { notify: true } },
    );
  });

  it("leaves the fingerprint as it was when unset, changes it with the timing, not the callback's source", () => {
    const base = resolveAgentOptions(withApprovals(undefined));
    expect(base.manifest).not.toHaveProperty('approvals');
    const remind = resolveAgentOptions(withApprovals({ remindAfterMs: 1000, notify: () => 1 }));
    const otherSource = resolveAgentOptions(
      withApprovals({ remindAfterMs: 1000, notify: () => 2 }),
    );
    const later = resolveAgentOptions(withApprovals({ remindAfterMs: 2000, notify: () => 1 }));
    expect(remind.fingerprint).not.toBe(base.fingerprint);
    expect(otherSource.fingerprint).toBe(remind.fingerprint);
    expect(later.fingerprint).not.toBe(remind.fingerprint);
    expect(manifestDifferences(base.manifest, remind.manifest)).toEqual([
      'approval stages (only in the second)',
    ]);
    expect(manifestDifferences(remind.manifest, later.manifest)).toEqual([
      'approval stages (remindAfterMs, escalateAfterMs, escalateTo or notify)',
    ]);
  });

  it("goes into the session's workflow input only when set, without the callback", () => {
    const options = resolveAgentOptions(
      withApprovals({ escalateAfterMs: 5000, escalateTo: 'ops', notify: () => undefined }),
    );
    expect(sessionWorkflowInput(options, 's', {}).approvals).toEqual({
      escalateAfterMs: 5000,
      escalateTo: 'ops',
      notify: true,
    });
    expect(sessionWorkflowInput(resolveAgentOptions(definition), 's', {})).not.toHaveProperty(
      'approvals',
    );
  });
});
