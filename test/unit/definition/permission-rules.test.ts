/**
 * `advanced.permissionRules` as an option: its ConfigErrors, how it resolves, the fingerprint
 * (changed only when set) and the session's workflow input (carried only when set).
 */
import { describe, expect, it } from 'vitest';
import { sessionWorkflowInput } from '../../../src/client/session-input.js';
import { ConfigError } from '../../../src/common/errors.js';
import { manifestDifferences } from '../../../src/common/identity.js';
import type { AgentOptions, SessionOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions, validateSessionOptions } from '../../../src/definition/resolve.js';
import { definition } from '../../fixtures/version-definition.js';

const withRules = (permissionRules: unknown): AgentOptions =>
  ({
    ...definition,
    advanced: { ...definition.advanced, permissionRules },
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

describe('advanced.permissionRules', () => {
  it.each([
    [
      'a list that is not an array',
      { deny: 'mcp__notes__*' },
      'advanced.permissionRules.deny must be an array of tool name patterns',
    ],
    [
      'a pattern that is not a string',
      { allow: ['Read', 7] },
      'advanced.permissionRules.allow[1] must be a string, got 7',
    ],
    ['an empty pattern', { ask: [''] }, 'advanced.permissionRules.ask[0] is empty'],
    [
      'a pattern with other characters',
      { deny: ['Bash(rm:*)'] },
      "advanced.permissionRules.deny[0] 'Bash(rm:*)' has characters outside [A-Za-z0-9_*-]",
    ],
    [
      'an unknown key',
      { block: ['Bash'] },
      "advanced.permissionRules has an unknown key 'block' (keys: allow, ask, deny)",
    ],
    [
      'a value that is not an object',
      'mcp__notes',
      'advanced.permissionRules must be an object { allow?, ask?, deny? }',
    ],
  ])('refuses %s with a ConfigError naming the field', (_what, rules, message) => {
    const error = configErrorOf(withRules(rules));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(message);
  });

  it('resolves to all three lists (copies), and to nothing when no list has a pattern', () => {
    const deny = ['mcp__notes__write_*'];
    const resolved = resolveAgentOptions(withRules({ deny })).permissionRules;
    expect(resolved).toEqual({ allow: [], ask: [], deny: ['mcp__notes__write_*'] });
    expect(resolved?.deny).not.toBe(deny);
    expect(resolveAgentOptions(withRules({ allow: [] }))).not.toHaveProperty('permissionRules');
    expect(resolveAgentOptions(definition)).not.toHaveProperty('permissionRules');
  });

  it('leaves the fingerprint as it was when unset or empty, and changes it when set', () => {
    const base = resolveAgentOptions(definition);
    expect(base.manifest).not.toHaveProperty('permissionRules');
    expect(resolveAgentOptions(withRules(undefined)).fingerprint).toBe(base.fingerprint);
    expect(resolveAgentOptions(withRules({ deny: [] })).fingerprint).toBe(base.fingerprint);
    const deny = resolveAgentOptions(withRules({ deny: ['mcp__notes'] }));
    const allow = resolveAgentOptions(withRules({ allow: ['mcp__notes'] }));
    expect(deny.fingerprint).not.toBe(base.fingerprint);
    expect(allow.fingerprint).not.toBe(deny.fingerprint);
    expect(manifestDifferences(base.manifest, deny.manifest)).toEqual([
      'permission rules (only in the second)',
    ]);
    expect(manifestDifferences(allow.manifest, deny.manifest)).toEqual([
      'permission rules (allow, ask or deny patterns)',
    ]);
  });

  it("goes into the session's workflow input only when set", () => {
    const rules = { allow: [], ask: ['mcp__notes'], deny: [] };
    expect(sessionWorkflowInput(resolveAgentOptions(withRules(rules)), 's', {})).toMatchObject({
      permissionRules: rules,
    });
    expect(sessionWorkflowInput(resolveAgentOptions(definition), 's', {})).not.toHaveProperty(
      'permissionRules',
    );
  });

  it('is not a session option: createSession refuses it', () => {
    expect(() =>
      validateSessionOptions({ permissionRules: { deny: ['Bash'] } } as SessionOptions),
    ).toThrow(ConfigError);
  });
});
