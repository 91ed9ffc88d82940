/** Sub-agents' pure rules: ids, paths, a child's workflow input, a Task call's refusals. */
import { describe, expect, it } from 'vitest';
import {
  agentPathOf,
  childInputOf,
  childLineageOf,
  childSessionIdOf,
  taskCallRefusal,
  taskInputProblem,
  taskTimeoutMessage,
} from '../../../src/common/subagents.js';
import type {
  SessionLineage,
  SessionWorkflowInput,
  SubagentSpec,
  SubagentsSpec,
} from '../../../src/common/workflow-io.js';

const researcher: SubagentSpec = {
  name: 'researcher',
  tools: [
    { name: 'Read', kind: 'readonly' },
    { name: 'Grep', kind: 'readonly' },
  ],
  maxTurns: 5,
  timeoutMs: 60_000,
  hookCounts: { PreToolUse: 2 },
  permission: { preset: 'plan' },
  mayUse: ['writer'],
};
const writer: SubagentSpec = {
  ...researcher,
  name: 'writer',
  tools: [{ name: 'Write', kind: 'write' }],
  mayUse: [],
  permission: { handler: 'session' },
};
const spec = (over: Partial<SubagentsSpec> = {}): SubagentsSpec => ({
  maxDepth: 2,
  maxConcurrent: 2,
  timeoutMs: 3_600_000,
  agents: [researcher, writer],
  ...over,
});

/** A top session's input with every field a child might copy set. */
const parent: SessionWorkflowInput = {
  sessionId: 'p',
  agentName: 'agent',
  version: 'v1',
  fingerprint: '0123456789abcdef',
  manifest: { hooks: {}, permission: 'preset:default', tools: {}, options: {} as never },
  upgrades: [
    {
      fromVersion: 'v0',
      fromFingerprint: 'a',
      toVersion: 'v1',
      toFingerprint: 'b',
      by: 'me',
      at: 1,
      afterPrompts: 1,
    },
  ],
  hookCounts: { SessionStart: 1, PreToolUse: 1 },
  hookTimeoutMs: 1_000,
  sessionEndHookTimeoutMs: 2_000,
  idleTimeoutMs: 9_000,
  maxTurns: 50,
  taskQueue: 'q2',
  isResume: true,
  resumeSessionId: 'old',
  dispatchHeartbeatTimeoutMs: 3_000,
  modelHeartbeatTimeoutMs: 4_000,
  toolHeartbeatTimeoutMs: 5_000,
  tools: [{ name: 'Read', kind: 'readonly' }],
  permission: { handler: 'function' },
  permissionTimeoutMs: 86_400_000,
  toolTimeoutMs: 6_000,
  modelTimeoutMs: 7_000,
  maxContextTokens: 8_000,
  continueAsNewAfterPrompts: 3,
  toolHookErrors: 'reject',
  localDispatch: ['PreToolUse'],
  inlineDispatch: ['PostToolUse'],
  turnStatus: true,
  carry: {} as never,
  subagents: spec(),
};

const lineage = (over: Partial<SessionLineage> = {}): SessionLineage => ({
  parentSessionId: 'p',
  rootSessionId: 'p',
  agentPath: 'main/researcher',
  depth: 1,
  subagent: 'researcher',
  toolUseId: 'call_1',
  stream: { sessionId: 'p', requestId: 'r1' },
  ...over,
});

describe('childSessionIdOf and agentPathOf', () => {
  it('is <parent>/<modelStepIndex>-<toolUseId>, unique when a provider reuses call ids', () => {
    expect(childSessionIdOf('p', 3, 'call_0')).toBe('p/3-call_0');
    expect(childSessionIdOf('p', 4, 'call_0')).not.toBe(childSessionIdOf('p', 3, 'call_0'));
  });

  it('paths start at main and add one name a level', () => {
    expect(agentPathOf(undefined, 'researcher')).toBe('main/researcher');
    expect(agentPathOf(lineage(), 'writer')).toBe('main/researcher/writer');
  });
});

describe('childLineageOf', () => {
  it("under a top session: depth 1, the parent as root, the top send's stream", () => {
    expect(
      childLineageOf({ sessionId: 'p' }, 'researcher', 'call_1', {
        sessionId: 'p',
        requestId: 'r1',
      }),
    ).toEqual(lineage());
  });

  it("under a sub-agent: one deeper, the same root and the root's stream", () => {
    const child = childLineageOf(
      { sessionId: 'p/0-call_1', lineage: lineage() },
      'writer',
      'call_9',
      { sessionId: 'p/0-call_1', requestId: 'task' },
    );
    expect(child).toEqual({
      parentSessionId: 'p/0-call_1',
      rootSessionId: 'p',
      agentPath: 'main/researcher/writer',
      depth: 2,
      subagent: 'writer',
      toolUseId: 'call_9',
      stream: { sessionId: 'p', requestId: 'r1' },
    });
  });
});

describe('childInputOf', () => {
  const task = { requestId: 'task-1', prompt: 'find x' };
  const child = childInputOf(parent, researcher, {
    sessionId: 'p/0-call_1',
    lineage: lineage(),
    task,
  });

  it("copies the parent's identity, budgets, dispatch modes, task queue and limits", () => {
    expect(child).toMatchObject({
      agentName: 'agent',
      version: 'v1',
      fingerprint: '0123456789abcdef',
      manifest: parent.manifest,
      hookTimeoutMs: 1_000,
      sessionEndHookTimeoutMs: 2_000,
      taskQueue: 'q2',
      dispatchHeartbeatTimeoutMs: 3_000,
      modelHeartbeatTimeoutMs: 4_000,
      toolHeartbeatTimeoutMs: 5_000,
      toolTimeoutMs: 6_000,
      modelTimeoutMs: 7_000,
      maxContextTokens: 8_000,
      toolHookErrors: 'reject',
      localDispatch: ['PreToolUse'],
      inlineDispatch: ['PostToolUse'],
      turnStatus: true,
      subagents: parent.subagents,
    });
  });

  it("takes the sub-agent's hook counts, permission and maxTurns, and its own id, lineage and task", () => {
    expect(child).toMatchObject({
      sessionId: 'p/0-call_1',
      hookCounts: { PreToolUse: 2 },
      permission: { preset: 'plan' },
      maxTurns: 5,
      lineage: lineage(),
      task,
    });
  });

  it('bounds an ask by the Task budget when that is shorter than permissionTimeoutMs', () => {
    expect(child.permissionTimeoutMs).toBe(60_000);
    const long = childInputOf({ ...parent, permissionTimeoutMs: 1_000 }, researcher, {
      sessionId: 'c',
      lineage: lineage(),
      task,
    });
    expect(long.permissionTimeoutMs).toBe(1_000);
  });

  it("takes the top session's approval stages (advanced.approvals), only when it has them", () => {
    const approvals = { remindAfterMs: 1_000, escalateAfterMs: 2_000, escalateTo: 'ops' };
    const staged = childInputOf({ ...parent, approvals }, researcher, {
      sessionId: 'c',
      lineage: lineage(),
      task,
    });
    expect(staged.approvals).toEqual(approvals);
    expect(child).not.toHaveProperty('approvals');
  });

  it("takes nothing of the parent's own life: carry, upgrades, idle timeout, rollover, resume", () => {
    for (const key of [
      'carry',
      'upgrades',
      'abandonedUpgrades',
      'idleTimeoutMs',
      'continueAsNewAfterPrompts',
      'isResume',
      'resumeSessionId',
    ]) {
      expect(child).not.toHaveProperty(key);
    }
  });

  it('adds the Task tool only under maxDepth and with sub-agents to start', () => {
    expect(child.tools).toEqual([...researcher.tools, { name: 'Task', kind: 'readonly' }]);
    const atDepth = childInputOf({ ...parent, subagents: spec({ maxDepth: 1 }) }, researcher, {
      sessionId: 'c',
      lineage: lineage(),
      task,
    });
    expect(atDepth.tools).toEqual(researcher.tools);
    const none = childInputOf(parent, writer, {
      sessionId: 'c',
      lineage: lineage({ subagent: 'writer' }),
      task,
    });
    expect(none.tools).toEqual(writer.tools);
  });

  it('leaves out what the parent leaves out', () => {
    const bare: SessionWorkflowInput = {
      sessionId: 'p',
      agentName: 'a',
      hookCounts: {},
      hookTimeoutMs: 1,
      sessionEndHookTimeoutMs: 1,
      maxTurns: 1,
      taskQueue: 'q',
      dispatchHeartbeatTimeoutMs: 1,
    };
    const input = childInputOf(bare, researcher, { sessionId: 'c', lineage: lineage(), task });
    for (const key of ['version', 'toolHookErrors', 'localDispatch', 'turnStatus', 'subagents']) {
      expect(input).not.toHaveProperty(key);
    }
    expect(input.permissionTimeoutMs).toBe(60_000);
  });
});

describe('taskCallRefusal', () => {
  const call = (subagent_type: string) => ({ description: 'd', prompt: 'p', subagent_type });
  const top = { subagents: spec() };

  it('allows a known sub-agent under the limits', () => {
    expect(taskCallRefusal(top, call('researcher'), 1)).toBeUndefined();
  });

  it('refuses a bad input, naming the fields', () => {
    expect(taskCallRefusal(top, { prompt: 'p', subagent_type: 3 }, 0)).toEqual({
      code: 'SUBAGENT_INPUT_INVALID',
      message:
        'Task input needs non-empty strings description, prompt and subagent_type; bad or missing: description, subagent_type',
    });
  });

  it('refuses an unknown sub-agent, naming the known ones', () => {
    expect(taskCallRefusal(top, call('coder'), 0)).toEqual({
      code: 'SUBAGENT_UNKNOWN',
      message: "Unknown sub-agent 'coder'; known: researcher, writer",
    });
    expect(taskCallRefusal({}, call('coder'), 0)?.message).toBe(
      "Unknown sub-agent 'coder'; known: none",
    );
  });

  it("refuses a sub-agent outside a sub-agent's mayUse", () => {
    expect(taskCallRefusal({ ...top, lineage: lineage() }, call('researcher'), 0)).toEqual({
      code: 'SUBAGENT_NOT_ALLOWED',
      message: "main/researcher may not start sub-agent 'researcher'; it may start: writer",
    });
  });

  it('refuses past maxDepth, naming the limit and the depth', () => {
    const deep = { subagents: spec({ maxDepth: 1 }), lineage: lineage() };
    expect(taskCallRefusal(deep, call('writer'), 0)).toEqual({
      code: 'SUBAGENT_DEPTH_LIMIT',
      message: 'maxDepth 1 reached: main/researcher is at depth 1',
    });
  });

  it('refuses past maxConcurrent, naming the limit and the count', () => {
    expect(taskCallRefusal(top, call('writer'), 2)).toEqual({
      code: 'SUBAGENT_CONCURRENCY_LIMIT',
      message: 'maxConcurrent 2: 2 sub-agents of this session are running',
    });
  });

  it('checks in order: input, name, mayUse, depth, concurrency', () => {
    const deep = { subagents: spec({ maxDepth: 1 }), lineage: lineage() };
    expect(taskCallRefusal(deep, call('nobody'), 9)?.code).toBe('SUBAGENT_UNKNOWN');
    expect(taskCallRefusal(deep, call('researcher'), 9)?.code).toBe('SUBAGENT_NOT_ALLOWED');
    expect(taskCallRefusal(deep, call('writer'), 9)?.code).toBe('SUBAGENT_DEPTH_LIMIT');
  });
});

describe('messages', () => {
  it('taskInputProblem accepts three non-empty strings', () => {
    expect(taskInputProblem({ description: 'd', prompt: 'p', subagent_type: 's' })).toBeUndefined();
    expect(taskInputProblem({ description: '', prompt: 'p', subagent_type: 's' })).toContain(
      'bad or missing: description',
    );
  });

  it('the timeout message names the path and the budget', () => {
    expect(taskTimeoutMessage('main/researcher', 3_600_000)).toBe(
      'Task failed: sub-agent main/researcher did not finish within 3600000 ms (subagents.timeoutMs); it was cancelled',
    );
  });
});
