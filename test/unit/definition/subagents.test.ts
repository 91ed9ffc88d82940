/** `advanced.subagents`: the field rules, the cross-checks, the defaults and the `Task` tool. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import type { HookCallback } from '../../../src/common/types.js';
import type { AgentModel } from '../../../src/models/model.js';
import type { AgentOptions, SubagentsOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { Glob, Grep, Read } from '../../../src/tools/builtin/index.js';
import { defineTool, type ToolContext } from '../../../src/tools/tool.js';

const model: AgentModel = {
  name: 'test-model',
  step: async () => ({ text: '', finishReason: 'stop' }),
};

const researcher = { description: 'Finds things in the code', prompt: 'You research.' };

function withSubagents(subagents: unknown, extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    model,
    tools: [Read, Grep, Glob],
    ...extra,
    advanced: { subagents: subagents as SubagentsOptions },
  };
}

/** The ConfigError `resolveAgentOptions` throws for these options; fails when none. */
function refusal(options: AgentOptions): ConfigError {
  try {
    resolveAgentOptions(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but the options resolved');
}

describe('advanced.subagents: refused at createAgent, naming the path and what is wrong', () => {
  it('a sub-agent tool the agent lacks, listing the tools the agent has', () => {
    const error = refusal(
      withSubagents({ agents: { researcher: { ...researcher, tools: ['Read', 'Bash'] } } }),
    );
    expect(error.message).toContain(
      "advanced.subagents.agents.researcher.tools: 'Bash' is not a tool of the agent (it has: Read, Grep, Glob)",
    );
  });

  it("a custom tool named 'Task' beside subagents", () => {
    const task = defineTool({
      name: 'Task',
      description: 'mine',
      kind: 'readonly',
      inputSchema: z.object({}),
      execute: async () => 'ok',
    });
    const error = refusal(withSubagents({ agents: { researcher } }, { tools: [Read, task] }));
    expect(error.message).toContain("tools has a tool named 'Task' beside advanced.subagents");
  });

  it("an unknown name in a sub-agent's subagents, listing the known ones", () => {
    const error = refusal(
      withSubagents({
        maxDepth: 2,
        agents: { researcher: { ...researcher, subagents: ['writer'] }, helper: researcher },
      }),
    );
    expect(error.message).toContain(
      "advanced.subagents.agents.researcher.subagents: 'writer' is not a sub-agent (known: researcher, helper)",
    );
  });

  it('subagents in a sub-agent while maxDepth is 1', () => {
    const error = refusal(
      withSubagents({ agents: { researcher: { ...researcher, subagents: ['researcher'] } } }),
    );
    expect(error.message).toContain(
      'advanced.subagents.agents.researcher.subagents: set while advanced.subagents.maxDepth is 1',
    );
  });

  it("'Task' in a sub-agent's tools while maxDepth is 1", () => {
    const error = refusal(
      withSubagents({ agents: { researcher: { ...researcher, tools: ['Read', 'Task'] } } }),
    );
    expect(error.message).toContain(
      "advanced.subagents.agents.researcher.tools: 'Task' while advanced.subagents.maxDepth is 1",
    );
  });

  it("'Task' in a sub-agent's tools without subagents to spawn", () => {
    const error = refusal(
      withSubagents({ maxDepth: 2, agents: { researcher: { ...researcher, tools: ['Task'] } } }),
    );
    expect(error.message).toContain("researcher.tools: 'Task' without subagents");
  });

  it.each([
    ['main', 'main'],
    ['a name with a space', 'my agent'],
    ['a name of 65 characters', 'a'.repeat(65)],
    ['a name with a dot', 'a.b'],
  ])('a bad sub-agent name: %s', (_, name) => {
    const error = refusal(withSubagents({ agents: { [name]: researcher } }));
    expect(error.message).toContain(
      `advanced.subagents.agents has '${name}', which is not a sub-agent name`,
    );
  });

  it('no sub-agents at all', () => {
    expect(refusal(withSubagents({ agents: {} })).message).toContain(
      'advanced.subagents.agents must name at least one sub-agent',
    );
    expect(refusal(withSubagents({})).message).toContain(
      'advanced.subagents.agents must be an object of sub-agent definitions by name',
    );
  });

  it.each([
    ['maxDepth', 0, 'advanced.subagents.maxDepth must be an integer from 1 to 4, got 0'],
    ['maxDepth', 5, 'advanced.subagents.maxDepth must be an integer from 1 to 4, got 5'],
    [
      'maxConcurrent',
      33,
      'advanced.subagents.maxConcurrent must be an integer from 1 to 32, got 33',
    ],
    [
      'maxConcurrent',
      1.5,
      'advanced.subagents.maxConcurrent must be an integer from 1 to 32, got 1.5',
    ],
    [
      'timeoutMs',
      0,
      'advanced.subagents.timeoutMs must be an integer with 0 < advanced.subagents.timeoutMs <= 2147483647 (ms), got 0',
    ],
  ])('a limit out of range: %s %s', (limit, value, message) => {
    const error = refusal(withSubagents({ agents: { researcher }, [limit]: value }));
    expect(error.message).toContain(message);
  });

  it.each([
    [
      'description',
      { prompt: 'p' },
      'researcher.description must be a non-empty string, got undefined',
    ],
    [
      'prompt',
      { description: 'd', prompt: '' },
      "researcher.prompt must be a non-empty string, got ''",
    ],
    [
      'maxTurns',
      { ...researcher, maxTurns: 0 },
      'researcher.maxTurns must be a positive integer, got 0',
    ],
    [
      'timeoutMs',
      { ...researcher, timeoutMs: -1 },
      'researcher.timeoutMs must be an integer with 0 <',
    ],
    [
      'model',
      { ...researcher, model: 3 },
      "researcher.model must be 'inherit', a model id or a model object, got 3",
    ],
    [
      'permission',
      { ...researcher, permission: 'yolo' },
      "researcher.permission must be 'inherit', a function or one of",
    ],
    [
      'hooks',
      { ...researcher, hooks: { NoSuchEvent: [] } },
      "researcher.hooks has an unknown event 'NoSuchEvent'",
    ],
    ['tools', { ...researcher, tools: ['Read', 'Read'] }, "researcher.tools names 'Read' twice"],
    ['an unknown field', { ...researcher, color: 'red' }, 'advanced.subagents.agents.researcher'],
  ])('a bad sub-agent field: %s', (_, definition, message) => {
    const error = refusal(withSubagents({ agents: { researcher: definition } }));
    expect(error.message).toContain(message);
  });

  it('an unknown field of advanced.subagents', () => {
    const error = refusal(withSubagents({ agents: { researcher }, depth: 2 }));
    expect(error.message).toMatch(/advanced\.subagents: .*depth/);
  });
});

describe('advanced.subagents: resolved', () => {
  it('leaves the tools and options as they were when it is not set', () => {
    const resolved = resolveAgentOptions({ model, tools: [Read, Grep] });
    expect(resolved.tools.map((t) => t.name)).toEqual(['Read', 'Grep']);
    expect(resolved).not.toHaveProperty('subagents');
  });

  it('fills in the defaults: maxDepth 1, maxConcurrent 4, timeoutMs 1 h, the agent tools, inherit', () => {
    const resolved = resolveAgentOptions({
      ...withSubagents({ agents: { researcher } }),
      advanced: { maxTurns: 7, subagents: { agents: { researcher } } },
    });
    expect(resolved.subagents).toMatchObject({
      maxDepth: 1,
      maxConcurrent: 4,
      timeoutMs: 3_600_000,
    });
    const sub = resolved.subagents!.agents.researcher!;
    expect(sub.tools.map((t) => t.name)).toEqual(['Read', 'Grep', 'Glob']);
    expect(sub).toMatchObject({
      name: 'researcher',
      model: 'inherit',
      maxTurns: 7,
      hooks: undefined,
      permission: undefined,
      subagents: [],
      timeoutMs: 3_600_000,
      prompt: 'You research.',
    });
  });

  it("keeps a sub-agent's own tools, hooks, permission, limits and nested sub-agents", () => {
    const hook: HookCallback = async () => ({ action: 'continue' });
    const resolved = resolveAgentOptions(
      withSubagents({
        maxDepth: 2,
        maxConcurrent: 2,
        timeoutMs: 60_000,
        agents: {
          lead: { ...researcher, tools: ['Read', 'Task'], subagents: ['reader'], maxTurns: 3 },
          reader: {
            ...researcher,
            tools: ['Grep'],
            hooks: { [HookEvent.PreToolUse]: [hook] },
            permission: 'plan',
            model: 'inherit',
            timeoutMs: 5_000,
          },
        },
      }),
    );
    const { lead, reader } = resolved.subagents!.agents;
    expect(lead!.tools.map((t) => t.name)).toEqual(['Read']);
    expect(lead).toMatchObject({ subagents: ['reader'], maxTurns: 3, timeoutMs: 60_000 });
    expect(reader!.tools.map((t) => t.name)).toEqual(['Grep']);
    expect(reader!.hooks?.PreToolUse).toEqual([hook]);
    expect(reader).toMatchObject({ permission: 'plan', timeoutMs: 5_000 });
    expect(resolved.subagents).toMatchObject({ maxDepth: 2, maxConcurrent: 2, timeoutMs: 60_000 });
  });

  it('appends the Task tool last, readonly, listing each sub-agent in its description', () => {
    const resolved = resolveAgentOptions(
      withSubagents({
        agents: { researcher, writer: { description: 'Writes notes', prompt: 'w' } },
      }),
    );
    expect(resolved.tools.map((t) => t.name)).toEqual(['Read', 'Grep', 'Glob', 'Task']);
    const task = resolved.tools.at(-1)!;
    expect(task.kind).toBe('readonly');
    expect(task.description).toContain('- researcher: Finds things in the code');
    expect(task.description).toContain('- writer: Writes notes');
    const input = { description: 'find x', prompt: 'find x in src', subagent_type: 'researcher' };
    expect(task.inputSchema.safeParse(input).success).toBe(true);
    expect(task.inputSchema.safeParse({ prompt: 'p', subagent_type: 'r' }).success).toBe(false);
  });

  it("the Task tool's execute refuses: the session workflow runs a Task call", async () => {
    const resolved = resolveAgentOptions(withSubagents({ agents: { researcher } }));
    const task = resolved.tools.at(-1)!;
    await expect(
      task.execute(
        { description: 'd', prompt: 'p', subagent_type: 'researcher' },
        {} as ToolContext,
      ),
    ).rejects.toThrow(/A Task call is run by the session workflow/);
  });
});
