/**
 * An identity for an `AgentRegistry` of one agent in activity tests and benchmarks, whose
 * tasks carry no version (nothing compares it there).
 */
import { identityOf } from '../../src/definition/fingerprint.js';

/** Version `test`, the fingerprint of an empty definition. */
export const testIdentity = identityOf(
  {
    hooks: {},
    tools: [],
    permission: 'default',
    hookTimeoutMs: 1,
    sessionEndHookTimeoutMs: 1,
    toolHookErrors: 'tool-error',
    permissionTimeoutMs: 1,
    maxTurns: 1,
  },
  'test',
);
