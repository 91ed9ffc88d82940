/**
 * The dispatch activity in a sub-agent's session: which callbacks run (its own agent-level
 * hooks or the agent's, then the top session's hooks), what they are given, and the refusal
 * when the worker's count differs from the session's.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createHookActivities } from '../../../activities/hook-dispatch.js';
import type { DispatchHookInput } from '../../../src/common/activity-io.js';
import { ConfigError } from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import type { HookCallback, HookInput, HookMap } from '../../../src/common/types.js';
import type { SessionLineage } from '../../../src/common/workflow-io.js';
import { AgentRegistry, type RegisteredSubagent } from '../../../src/definition/registry.js';
import { testIdentity } from '../../helpers/registry-identity.js';

/** A callback that logs its name and input, and continues. */
function logged(name: string, log: Array<[string, HookInput]>): HookCallback {
  return async (input) => {
    log.push([name, input]);
    return { action: 'continue' };
  };
}

function setup(hooks: HookMap, subagents: Record<string, Partial<RegisteredSubagent>>) {
  const registry = new AgentRegistry();
  registry.register({
    name: 'default',
    hooks,
    model: { name: 'x', step: async () => ({ text: '', finishReason: 'stop' }) },
    tools: [],
    workspaceRoots: [],
    maxToolOutputBytes: 65_536,
    subagents: new Map(
      Object.entries(subagents).map(([name, s]) => [name, { tools: [], prompt: name, ...s }]),
    ),
    ...testIdentity,
  });
  const { dispatchHook } = createHookActivities({
    registry,
    cleanupQueue: 'cq',
    heartbeatIntervalMs: 20,
  });
  const run = (input: DispatchHookInput) =>
    new MockActivityEnvironment().run<[DispatchHookInput], unknown, typeof dispatchHook>(
      dispatchHook,
      input,
    ) as ReturnType<typeof dispatchHook>;
  return { registry, run };
}

const lineage = (subagent: string): SessionLineage => ({
  parentSessionId: 'root',
  rootSessionId: 'root',
  agentPath: `main/${subagent}`,
  depth: 1,
  subagent,
  toolUseId: 'call_1',
  stream: { sessionId: 'root', requestId: 'r1' },
});

let seq = 0;
const input = (over: Partial<DispatchHookInput>): DispatchHookInput => ({
  dispatchId: `d-${++seq}`,
  sessionId: 'root/0-call_1',
  agentName: 'default',
  event: HookEvent.PreToolUse,
  payload: { toolName: 'Read', toolInput: {}, toolUseId: 'call_2' },
  budgetMs: 2_000,
  callbackCount: 1,
  ...over,
});

describe('dispatchHook in a sub-agent', () => {
  it("runs the agent's hooks for a sub-agent that inherits them, then the top session's", async () => {
    const log: Array<[string, HookInput]> = [];
    const { registry, run } = setup(
      { [HookEvent.PreToolUse]: [logged('agent', log)] },
      { researcher: {} },
    );
    registry.setSessionHooks('root', { [HookEvent.PreToolUse]: [logged('root session', log)] });
    registry.setSessionHooks('root/0-call_1', { [HookEvent.PreToolUse]: [logged('child', log)] });
    const outcome = await run(input({ lineage: lineage('researcher'), callbackCount: 2 }));
    expect(outcome.status).toBe('completed');
    expect(log.map(([name]) => name)).toEqual(['agent', 'root session']);
  });

  it("runs a sub-agent's own hooks in place of the agent's", async () => {
    const log: Array<[string, HookInput]> = [];
    const { registry, run } = setup(
      { [HookEvent.PreToolUse]: [logged('agent', log)] },
      { writer: { hooks: { [HookEvent.PreToolUse]: [logged('writer', log)] } } },
    );
    registry.setSessionHooks('root', { [HookEvent.PreToolUse]: [logged('root session', log)] });
    const outcome = await run(input({ lineage: lineage('writer'), callbackCount: 2 }));
    expect(outcome.status).toBe('completed');
    expect(log.map(([name]) => name)).toEqual(['writer', 'root session']);
  });

  it('gives its callbacks parentSessionId, agentPath and depth; a top session none', async () => {
    const log: Array<[string, HookInput]> = [];
    const { run } = setup({ [HookEvent.PreToolUse]: [logged('agent', log)] }, { researcher: {} });
    await run(input({ lineage: lineage('researcher') }));
    await run(input({ sessionId: 'root' }));
    expect(log[0]![1]).toMatchObject({
      sessionId: 'root/0-call_1',
      parentSessionId: 'root',
      agentPath: 'main/researcher',
      depth: 1,
    });
    expect(log[1]![1]).not.toHaveProperty('agentPath');
    expect(log[1]![1]).not.toHaveProperty('depth');
  });

  it('refuses with HOOK_CALLBACKS_MISSING naming the sub-agent and its top session', async () => {
    const { run } = setup({ [HookEvent.PreToolUse]: [logged('agent', [])] }, { researcher: {} });
    // The top session's hooks are held by another process: this worker has only the agent's.
    const outcome = await run(input({ lineage: lineage('researcher'), callbackCount: 2 }));
    expect(outcome).toMatchObject({
      status: 'error',
      callbackCount: 1,
      error: { code: 'HOOK_CALLBACKS_MISSING' },
    });
    const { message } = (outcome as { error: { message: string } }).error;
    expect(message).toContain(
      "This worker has 1 PreToolUse callback(s) for sub-agent researcher (main/researcher) of session 'root'",
    );
    expect(message).toContain("the process that created session 'root'");
  });
});

describe('AgentRegistry.callbacksFor with a lineage', () => {
  it('throws a ConfigError naming the sub-agents for an unknown one', () => {
    const { registry } = setup({}, { researcher: {} });
    expect(() =>
      registry.callbacksFor('default', 's', HookEvent.PreToolUse, undefined, lineage('coder')),
    ).toThrow(ConfigError);
    expect(() =>
      registry.callbacksFor('default', 's', HookEvent.PreToolUse, undefined, lineage('coder')),
    ).toThrow("has no sub-agent named 'coder' (it has: researcher)");
  });

  it('without a lineage, is the agent hooks then the session hooks as before', () => {
    const a: HookCallback = async () => ({ action: 'continue' });
    const b: HookCallback = async () => ({ action: 'continue' });
    const { registry } = setup({ [HookEvent.PreToolUse]: [a] }, {});
    registry.setSessionHooks('s', { [HookEvent.PreToolUse]: [b] });
    expect(registry.callbacksFor('default', 's', HookEvent.PreToolUse)).toEqual([a, b]);
  });
});
