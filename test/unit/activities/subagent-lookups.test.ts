/**
 * What a sub-agent's model steps and tool calls use, found by its lineage: its own model,
 * tools, instructions and permission function where it has them, the agent's where not.
 */
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createModelActivities } from '../../../activities/model-step.js';
import { createToolActivities } from '../../../activities/tool-exec.js';
import type {
  CheckPermissionInput,
  CheckPermissionOutput,
  DescribeToolCallInput,
  ExecuteToolInput,
  ExecuteToolOutput,
  ModelStepInput,
  ModelStepOutput,
} from '../../../src/common/activity-io.js';
import { ConfigError } from '../../../src/common/errors.js';
import type { PermissionHandler } from '../../../src/common/permission.js';
import type { SessionLineage } from '../../../src/common/workflow-io.js';
import { AgentRegistry, type RegisteredSubagent } from '../../../src/definition/registry.js';
import type { AgentModel } from '../../../src/models/model.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { taskTool } from '../../../src/tools/builtin/task.js';
import { defineTool, type ToolDefinition } from '../../../src/tools/tool.js';
import { testIdentity } from '../../helpers/registry-identity.js';

const tool = (name: string): ToolDefinition =>
  defineTool({
    name,
    description: name,
    kind: 'write',
    inputSchema: z.object({}),
    execute: async () => name,
  }) as unknown as ToolDefinition;
const Read = tool('Read');
const Write = tool('Write');
const agentModel: AgentModel = {
  name: 'agent',
  step: async () => ({ text: '', finishReason: 'stop' }),
};
const ownModel: AgentModel = {
  name: 'own',
  step: async () => ({ text: '', finishReason: 'stop' }),
};
const agentPolicy: PermissionHandler = async () => 'allow' as const;
const ownPolicy: PermissionHandler = async () => 'deny' as const;
const rootPolicy: PermissionHandler = async () => 'ask' as const;
const spawnTool = taskTool([{ name: 'reader', description: 'Reads' }]);

function setup(subagents: Record<string, Omit<RegisteredSubagent, 'prompt'>>) {
  const registry = new AgentRegistry();
  registry.register({
    name: 'default',
    hooks: {},
    model: agentModel,
    tools: [Read, Write],
    workspaceRoots: [],
    permission: agentPolicy,
    maxToolOutputBytes: 65_536,
    subagents: new Map(
      Object.entries(subagents).map(([name, s]) => [name, { prompt: `You are ${name}.`, ...s }]),
    ),
    ...testIdentity,
  });
  return registry;
}

const lineage = (subagent: string, depth = 1): SessionLineage => ({
  parentSessionId: 'root',
  rootSessionId: 'root',
  agentPath: `main/${subagent}`,
  depth,
  subagent,
  toolUseId: 'call_1',
  stream: { sessionId: 'root', requestId: 'r1' },
});

const subagents = {
  reader: { tools: [Read] },
  lead: {
    tools: [Read, Write],
    model: ownModel,
    permission: ownPolicy,
    spawn: { tool: spawnTool, maxDepth: 2 },
  },
};

describe('AgentRegistry.definitionFor', () => {
  it("is the agent's model, tools and permission function in a top session, without instructions", () => {
    const found = setup(subagents).definitionFor('default', undefined, undefined);
    expect(found).toMatchObject({
      model: agentModel,
      tools: [Read, Write],
      permission: agentPolicy,
    });
    expect(found).not.toHaveProperty('instructions');
  });

  it("is a sub-agent's tools and prompt, with the agent's model and permission when it has none", () => {
    const found = setup(subagents).definitionFor('default', undefined, lineage('reader'));
    expect(found).toMatchObject({
      model: agentModel,
      tools: [Read],
      instructions: 'You are reader.',
      permission: agentPolicy,
    });
  });

  it("is a sub-agent's own model and permission, with its Task tool only under maxDepth", () => {
    const registry = setup(subagents);
    const shallow = registry.definitionFor('default', undefined, lineage('lead', 1));
    expect(shallow).toMatchObject({ model: ownModel, permission: ownPolicy });
    expect(shallow.tools).toEqual([Read, Write, spawnTool]);
    expect(registry.definitionFor('default', undefined, lineage('lead', 2)).tools).toEqual([
      Read,
      Write,
    ]);
  });

  it('throws a ConfigError for a sub-agent this worker does not know', () => {
    expect(() => setup(subagents).definitionFor('default', undefined, lineage('coder'))).toThrow(
      ConfigError,
    );
  });
});

describe('the tool activities in a sub-agent', () => {
  const activities = (registry: AgentRegistry) =>
    createToolActivities({ registry, heartbeatIntervalMs: 20 });
  const env = () => new MockActivityEnvironment();

  it("know only the sub-agent's tools: another tool of the agent is unknown to it", async () => {
    const { describeToolCall } = activities(setup(subagents));
    const call = (toolName: string, sub?: SessionLineage): DescribeToolCallInput => ({
      agentName: 'default',
      sessionId: 's',
      toolName,
      input: {},
      ...(sub ? { lineage: sub } : {}),
    });
    expect((await describeToolCall(call('Write', lineage('reader')))).known).toBe(false);
    expect((await describeToolCall(call('Read', lineage('reader')))).known).toBe(true);
    expect((await describeToolCall(call('Write'))).known).toBe(true);
  });

  it("refuse to execute a tool outside the sub-agent's set", async () => {
    const { executeTool } = activities(setup(subagents));
    const input: ExecuteToolInput = {
      sessionId: 'root/0-call_1',
      agentName: 'default',
      toolUseId: 'call_2',
      toolName: 'Write',
      input: {},
      timeoutMs: 1_000,
      lineage: lineage('reader'),
    };
    const result = await env().run<[ExecuteToolInput], ExecuteToolOutput, typeof executeTool>(
      executeTool,
      input,
    );
    expect(result).toMatchObject({ status: 'error', model: "Unknown tool 'Write'" });
  });

  it("ask the sub-agent's own function, the agent's, or the top session's handler", async () => {
    const registry = setup(subagents);
    registry.setSessionPermission('root', rootPolicy);
    const { checkPermission } = activities(registry);
    const ask = (sub: string, handler?: 'session') =>
      env().run<[CheckPermissionInput], CheckPermissionOutput, typeof checkPermission>(
        checkPermission,
        {
          agentName: 'default',
          sessionId: `root/0-${sub}`,
          toolUseId: 'call_2',
          toolName: 'Read',
          input: {},
          kind: 'readonly',
          affectedPaths: [],
          lineage: lineage(sub),
          ...(handler ? { handler } : {}),
        },
      );
    expect(await ask('lead')).toMatchObject({ ok: true, result: { behavior: 'deny' } });
    expect(await ask('reader')).toMatchObject({ ok: true, result: { behavior: 'allow' } });
    expect(await ask('reader', 'session')).toMatchObject({ ok: true, result: { behavior: 'ask' } });
  });

  it("tell a permission function a sub-agent's path and depth; a top session's call neither", async () => {
    const seen: unknown[] = [];
    const registry = setup({
      reader: { tools: [Read], permission: async (r) => (seen.push(r), 'allow' as const) },
    });
    registry.setSessionPermission('root', async (r) => (seen.push(r), 'allow' as const));
    const { checkPermission } = activities(registry);
    const base: CheckPermissionInput = {
      agentName: 'default',
      sessionId: 'root',
      toolUseId: 'call_2',
      toolName: 'Read',
      input: {},
      kind: 'readonly',
      affectedPaths: [],
    };
    const run = (input: CheckPermissionInput) =>
      env().run<[CheckPermissionInput], CheckPermissionOutput, typeof checkPermission>(
        checkPermission,
        input,
      );
    await run({ ...base, sessionId: 'root/0-call_1', lineage: lineage('reader') });
    await run({ ...base, handler: 'session' });
    expect(seen[0]).toMatchObject({ toolName: 'Read', agentPath: 'main/reader', depth: 1 });
    expect(seen[1]).not.toHaveProperty('agentPath');
    expect(seen[1]).not.toHaveProperty('depth');
  });
});

/** An activity environment whose workflow answers the conversation query with none. */
function stepEnv(): MockActivityEnvironment {
  const handle = {
    client: { connection: { withDeadline: (_d: number, fn: () => unknown) => fn() } },
    query: async () => ({ messages: [], next: null }),
  };
  const client = {
    workflow: { getHandle: () => handle },
    withAbortSignal: (_s: AbortSignal, fn: () => unknown) => fn(),
  } as unknown as Client;
  return new MockActivityEnvironment(
    { workflowExecution: { workflowId: 'session-root', runId: 'run-1' } },
    { client },
  );
}

describe('the model step in a sub-agent', () => {
  it('calls its own model with its prompt as instructions, its path and its tools', async () => {
    const agent = scriptedModel(['agent']);
    const own = scriptedModel(['own']);
    const registry = new AgentRegistry();
    registry.register({
      name: 'default',
      hooks: {},
      model: agent,
      tools: [Read, Write],
      workspaceRoots: [],
      maxToolOutputBytes: 65_536,
      subagents: new Map([
        ['reader', { prompt: 'You read.', tools: [Read], model: own }],
        ['plain', { prompt: 'You inherit.', tools: [Read] }],
      ]),
      ...testIdentity,
    });
    const { modelStep } = createModelActivities({ registry });
    const step = (sub?: string) =>
      stepEnv().run<[ModelStepInput], ModelStepOutput, typeof modelStep>(modelStep, {
        sessionId: sub ? `root/0-${sub}` : 'root',
        agentName: 'default',
        requestId: 'r',
        step: 0,
        promptIndex: 0,
        modelStepIndex: 0,
        ...(sub ? { lineage: lineage(sub) } : {}),
      });
    expect((await step('reader')).text).toBe('own');
    expect(own.requests[0]).toMatchObject({
      instructions: 'You read.',
      agentPath: 'main/reader',
      toolNames: ['Read'],
    });
    expect(own.requests[0]).not.toHaveProperty('lineage');
    expect((await step('plain')).text).toBe('agent');
    expect(agent.requests[0]).toMatchObject({ instructions: 'You inherit.', toolNames: ['Read'] });
  });

  it('sends a top session no instructions and no path, with all the agent tools', async () => {
    const agent = scriptedModel(['agent']);
    const registry = new AgentRegistry();
    registry.register({
      name: 'default',
      hooks: {},
      model: agent,
      tools: [Read, Write],
      workspaceRoots: [],
      maxToolOutputBytes: 65_536,
      ...testIdentity,
    });
    const { modelStep } = createModelActivities({ registry });
    await stepEnv().run<[ModelStepInput], ModelStepOutput, typeof modelStep>(modelStep, {
      sessionId: 'root',
      agentName: 'default',
      requestId: 'r',
      step: 0,
      promptIndex: 0,
      modelStepIndex: 0,
    });
    expect(agent.requests[0]).toMatchObject({ toolNames: ['Read', 'Write'] });
    expect(agent.requests[0]).not.toHaveProperty('instructions');
    expect(agent.requests[0]).not.toHaveProperty('agentPath');
  });
});
