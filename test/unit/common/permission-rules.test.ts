/** Permission rules' pure parts: the pattern matcher, which rule decides, what it decides. */
import { describe, expect, it } from 'vitest';
import { permissionDecidedEvent } from '../../../src/common/permission-events.js';
import {
  matchPermissionRule,
  permissionRulesProblems,
  ruleDecision,
  toolNameMatches,
} from '../../../src/common/permission-rules.js';
import { childInputOf } from '../../../src/common/subagents.js';
import type { SessionWorkflowInput, SubagentSpec } from '../../../src/common/workflow-io.js';

describe('toolNameMatches', () => {
  it.each([
    ['Read', 'Read', true],
    ['Read', 'read', false],
    ['Read', 'ReadFile', false],
    ['Rea', 'Read', false],
    ['mcp__github__*', 'mcp__github__create_issue', true],
    ['mcp__github__*', 'mcp__github__', true],
    ['mcp__github__*', 'mcp__gitlab__create_issue', false],
    ['mcp__github__*', 'mcp__github', false],
    ['mcp__*__delete_*', 'mcp__github__delete_repo', true],
    ['mcp__*__delete_*', 'mcp__notes__delete_', true],
    ['mcp__*__delete_*', 'mcp__github__undelete_repo', false],
    ['mcp__*__delete_*', 'mcp__delete_x', false],
    ['*', 'Bash', true],
    ['*_note', 'mcp__notes__write_note', true],
    ['*_note', 'mcp__notes__write_notes', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['a*b*c', 'axbyc', true],
    ['a*b*c', 'acb', false],
  ])('%s against %s: %s', (pattern, name, expected) => {
    expect(toolNameMatches(pattern, name)).toBe(expected);
  });

  it.each([
    ['mcp__notes', 'mcp__notes__write_note', true],
    ['mcp__notes', 'mcp__notes', true],
    ['mcp__notes', 'mcp__notes2__write_note', false],
    ['mcp__notes', 'mcp__other__notes', false],
    ['mcp__note*', 'mcp__notes__write_note', true],
    ['mcp__', 'mcp__notes__write_note', false],
    ['mcp__notes__write', 'mcp__notes__write_note', false],
    ['mcp__notes__write', 'mcp__notes__write__x', false],
  ])('the bare server %s against %s: %s', (pattern, name, expected) => {
    expect(toolNameMatches(pattern, name)).toBe(expected);
  });
});

describe('matchPermissionRule', () => {
  const rules = {
    allow: ['mcp__notes', 'Read'],
    ask: ['mcp__notes__write_*'],
    deny: ['mcp__notes__write_secret', 'mcp__*__delete_*'],
  };

  it('deny wins over ask over allow, whatever the order the lists were given in', () => {
    const reordered = { deny: rules.deny, allow: rules.allow, ask: rules.ask };
    for (const given of [rules, reordered]) {
      expect(matchPermissionRule(given, 'mcp__notes__write_secret')).toEqual({
        list: 'deny',
        pattern: 'mcp__notes__write_secret',
      });
      expect(matchPermissionRule(given, 'mcp__notes__write_note')).toEqual({
        list: 'ask',
        pattern: 'mcp__notes__write_*',
      });
      expect(matchPermissionRule(given, 'mcp__notes__read_note')).toEqual({
        list: 'allow',
        pattern: 'mcp__notes',
      });
      expect(matchPermissionRule(given, 'mcp__notes__delete_all')).toEqual({
        list: 'deny',
        pattern: 'mcp__*__delete_*',
      });
    }
  });

  it('names the first matching pattern of the deciding list', () => {
    expect(matchPermissionRule({ deny: ['Bash', 'B*', '*'] }, 'Bash')).toEqual({
      list: 'deny',
      pattern: 'Bash',
    });
    expect(matchPermissionRule({ deny: ['B*', 'Bash'] }, 'Bash')?.pattern).toBe('B*');
  });

  it('is undefined with no rules, empty lists, or no match (the preset or function decides)', () => {
    expect(matchPermissionRule(undefined, 'Read')).toBeUndefined();
    expect(matchPermissionRule({}, 'Read')).toBeUndefined();
    expect(matchPermissionRule({ allow: [], ask: [], deny: [] }, 'Read')).toBeUndefined();
    expect(matchPermissionRule(rules, 'Bash')).toBeUndefined();
  });
});

describe('ruleDecision', () => {
  it('deny denies naming the rule; ask asks naming it; allow allows', () => {
    expect(ruleDecision({ list: 'deny', pattern: 'mcp__github__*' })).toEqual({
      behavior: 'deny',
      message: "Denied by permissionRules.deny 'mcp__github__*'",
    });
    expect(ruleDecision({ list: 'ask', pattern: 'mcp__github' })).toEqual({
      behavior: 'ask',
      message: "Asked by permissionRules.ask 'mcp__github'",
    });
    expect(ruleDecision({ list: 'allow', pattern: 'Read' })).toEqual({ behavior: 'allow' });
  });

  it("makes a permission-decided event with decidedBy 'rules' and the rule", () => {
    const rule = { list: 'deny' as const, pattern: 'mcp__github__*' };
    expect(
      permissionDecidedEvent({ toolUseId: 'c1', toolName: 'mcp__github__x' }, ruleDecision(rule), {
        decidedBy: 'rules',
        rule,
      }),
    ).toEqual({
      type: 'permission-decided',
      toolUseId: 'c1',
      toolName: 'mcp__github__x',
      behavior: 'deny',
      decidedBy: 'rules',
      rule: { list: 'deny', pattern: 'mcp__github__*' },
      message: "Denied by permissionRules.deny 'mcp__github__*'",
      editedInput: false,
    });
  });
});

describe('permissionRulesProblems', () => {
  it('finds none in good rules or none at all', () => {
    expect(permissionRulesProblems(undefined)).toEqual([]);
    expect(permissionRulesProblems({})).toEqual([]);
    expect(
      permissionRulesProblems({ allow: ['Read', 'mcp__a-b__*'], ask: [], deny: ['*'] }),
    ).toEqual([]);
  });

  it.each([
    [null, 'advanced.permissionRules must be an object { allow?, ask?, deny? }'],
    [['Read'], 'advanced.permissionRules must be an object { allow?, ask?, deny? }'],
    [{ allow: 'Read' }, 'advanced.permissionRules.allow must be an array of tool name patterns'],
    [{ deny: [3] }, 'advanced.permissionRules.deny[0] must be a string, got 3'],
    [{ ask: ['Read', null] }, 'advanced.permissionRules.ask[1] must be a string, got null'],
    [{ deny: [''] }, 'advanced.permissionRules.deny[0] is empty'],
    [
      { allow: ['Bash(git *)'] },
      "advanced.permissionRules.allow[0] 'Bash(git *)' has characters outside [A-Za-z0-9_*-]",
    ],
    [{ allow: ['mcp.github'] }, "advanced.permissionRules.allow[0] 'mcp.github' has characters"],
    [{ permit: ['Read'] }, "advanced.permissionRules has an unknown key 'permit'"],
  ])('refuses %j, naming the field', (value, message) => {
    const problems = permissionRulesProblems(value);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });
});

describe('a sub-agent', () => {
  it("gets its parent's permissionRules in its input, and none when the parent has none", () => {
    const spec: SubagentSpec = {
      name: 'writer',
      tools: [{ name: 'Write', kind: 'write' }],
      maxTurns: 3,
      timeoutMs: 60_000,
      hookCounts: {},
      permission: { preset: 'bypass-permissions' },
      mayUse: [],
    };
    const rules = { allow: [], ask: [], deny: ['mcp__notes__write_*'] };
    const parent: SessionWorkflowInput = {
      sessionId: 'p',
      agentName: 'a',
      hookCounts: {},
      hookTimeoutMs: 1_000,
      sessionEndHookTimeoutMs: 1_000,
      maxTurns: 5,
      taskQueue: 'q',
      dispatchHeartbeatTimeoutMs: 3_000,
      permission: { preset: 'default' },
      permissionRules: rules,
      subagents: { maxDepth: 1, maxConcurrent: 1, timeoutMs: 60_000, agents: [spec] },
    };
    const child = {
      sessionId: 'p/1-c1',
      lineage: {
        parentSessionId: 'p',
        rootSessionId: 'p',
        agentPath: 'main/writer',
        depth: 1,
        subagent: 'writer',
        toolUseId: 'c1',
        stream: { sessionId: 'p', requestId: 'r' },
      },
      task: { requestId: 'task-c1', prompt: 'go' },
    };
    expect(childInputOf(parent, spec, child).permissionRules).toEqual(rules);
    const { permissionRules: _, ...without } = parent;
    expect(childInputOf(without, spec, child)).not.toHaveProperty('permissionRules');
  });
});
