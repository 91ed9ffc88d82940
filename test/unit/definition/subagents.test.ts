/** `advanced.subagents`: the field rules, the cross-checks, the defaults and the `Task` tool. */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import { manifestDifferences } from '../../../src/common/identity.js';
import type { SessionWorkflowInput } from '../../../src/common/workflow-io.js';
import { fingerprintOf } from '../../../src/definition/fingerprint.js';
import type { HookCallback } from '../../../src/common/types.js';
import type { AgentModel } from '../../../src/models/model.js';
import type { AgentOptions, SubagentsOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { Glob, Grep, Read } from '../../../src/tools/builtin/index.js';
import { defineTool, type ToolContext } from '../../../src/tools/tool.js';
import { demoAgentOptions } from '../../../examples/demo/agent.js';
import { definition as versionDefinition } from '../../fixtures/version-definition.js';

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

describe("a sub-agent's MCP tools", () => {
  const notes = { command: 'node', args: ['server.js'] };

  it('keeps the mcp__ names of its tools as patterns, only when the agent has MCP servers', () => {
    const listed = { ...researcher, tools: ['Read', 'mcp__notes__read_note', 'mcp__notes__*'] };
    const withServers = resolveAgentOptions(
      withSubagents({ agents: { researcher: listed } }, { mcpServers: { notes } }),
    );
    const agent = withServers.subagents!.agents.researcher!;
    expect(agent.tools.map((t) => t.name)).toEqual(['Read']);
    expect(agent.mcpTools).toEqual(['mcp__notes__read_note', 'mcp__notes__*']);
    // Without a tools list: every MCP tool of the session (no limit).
    const all = resolveAgentOptions(
      withSubagents({ agents: { researcher } }, { mcpServers: { notes } }),
    );
    expect(all.subagents!.agents.researcher!.mcpTools).toBeUndefined();
    // Without MCP servers nothing changes (inputs and fingerprints as before).
    const none = resolveAgentOptions(
      withSubagents({ agents: { researcher: { ...researcher, tools: ['Read'] } } }),
    );
    expect(none.subagents!.agents.researcher!.mcpTools).toBeUndefined();
  });

  it('refuses an mcp__ tool of a server the agent does not have, naming it and the servers', () => {
    const error = refusal(
      withSubagents(
        { agents: { researcher: { ...researcher, tools: ['mcp__github__create_issue'] } } },
        { mcpServers: { notes } },
      ),
    );
    expect(error.message).toContain(
      "advanced.subagents.agents.researcher.tools: 'mcp__github__create_issue' names MCP server 'github', which mcpServers does not have (it has: notes)",
    );
  });
});

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

/**
 * Fingerprints of definitions without sub-agents, computed by this test file at `e5fb12c`
 * (before sub-agents existed). Under vitest: the built-in tools' `affectedPaths` print
 * differently under tsx, so the last two differ there (`fd5d671af2ce06d7` is the same in both).
 */
const EARLIER_FINGERPRINTS: Array<
  [name: string, options: () => AgentOptions, fingerprint: string]
> = [
  ['test/fixtures/version-definition.ts', () => versionDefinition, 'fd5d671af2ce06d7'],
  ['the demo (examples/demo/agent.ts)', () => demoAgentOptions(demoEnv), 'c2ac222e307ab19f'],
  ['the built-in tools and nothing else', () => ({ model }), '361815faec3f430c'],
];

const demoEnv = { address: 'a', taskQueue: 'q', workspace: '/tmp/w', eventsFile: '/tmp/e' };

/** The first workflow input of each recorded history that carries a manifest. */
function recordedIdentities(): Array<[file: string, input: SessionWorkflowInput]> {
  const dir = fileURLToPath(new URL('../../fixtures/histories/', import.meta.url));
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .map((file): [string, SessionWorkflowInput] => {
      const history = JSON.parse(readFileSync(`${dir}${file}`, 'utf8')) as {
        events: Array<{
          workflowExecutionStartedEventAttributes?: {
            input?: { payloads: Array<{ data: string }> };
          };
        }>;
      };
      const data =
        history.events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads[0]!.data;
      return [
        file,
        JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as SessionWorkflowInput,
      ];
    })
    .filter(([, input]) => input.manifest !== undefined);
}

describe('the fingerprint with sub-agents', () => {
  it.each(EARLIER_FINGERPRINTS)('of %s is unchanged', (_, options, fingerprint) => {
    const resolved = resolveAgentOptions(options());
    expect(resolved.fingerprint).toBe(fingerprint);
    expect(resolved.manifest).not.toHaveProperty('subagents');
  });

  it('of every recorded history is still the hash of its recorded manifest', () => {
    const recorded = recordedIdentities();
    expect(recorded.length).toBeGreaterThan(10);
    for (const [file, input] of recorded) {
      expect({ file, fingerprint: fingerprintOf(input.manifest!) }).toEqual({
        file,
        fingerprint: input.fingerprint,
      });
    }
  });

  const base = withSubagents({ agents: { researcher } });
  const fingerprint = (options: AgentOptions) => resolveAgentOptions(options).fingerprint;

  it('puts the limits by value and a hash per sub-agent in the manifest', () => {
    const { manifest } = resolveAgentOptions(base);
    expect(manifest.subagents).toEqual({
      limits: 'maxDepth 1, maxConcurrent 4, timeoutMs 3600000',
      agents: { researcher: expect.stringMatching(/^[0-9a-f]{12}$/) as string },
    });
    expect(manifest.tools).toHaveProperty('Task');
  });

  it.each([
    ['tools', { tools: ['Read'] }],
    ['maxTurns', { maxTurns: 3 }],
    [
      'hooks',
      { hooks: { [HookEvent.PreToolUse]: [async () => ({ action: 'continue' as const })] } },
    ],
    ['permission', { permission: 'plan' as const }],
    ['timeoutMs', { timeoutMs: 1_000 }],
  ])("changes with a sub-agent's %s", (_, change) => {
    const changed = withSubagents({ agents: { researcher: { ...researcher, ...change } } });
    expect(fingerprint(changed)).not.toBe(fingerprint(base));
  });

  it("changes with a sub-agent's description (in the Task tool) and with a limit", () => {
    const described = withSubagents({
      agents: { researcher: { ...researcher, description: 'x' } },
    });
    expect(fingerprint(described)).not.toBe(fingerprint(base));
    expect(fingerprint(withSubagents({ agents: { researcher }, maxConcurrent: 2 }))).not.toBe(
      fingerprint(base),
    );
  });

  it("leaves a sub-agent's prompt and model out, as the agent's model is", () => {
    const other = withSubagents({
      agents: { researcher: { ...researcher, prompt: 'Be brief.', model: 'gpt-4o-mini' } },
    });
    expect(fingerprint(other)).toBe(fingerprint(base));
  });

  it('manifestDifferences names a changed, added or removed sub-agent and changed limits', () => {
    const a = resolveAgentOptions(base).manifest;
    const b = resolveAgentOptions(
      withSubagents({
        maxDepth: 2,
        agents: { researcher: { ...researcher, maxTurns: 2 }, writer: researcher },
      }),
    ).manifest;
    expect(manifestDifferences(a, b)).toEqual(
      expect.arrayContaining([
        'sub-agent limits (maxDepth 1, maxConcurrent 4, timeoutMs 3600000 vs maxDepth 2, maxConcurrent 4, timeoutMs 3600000)',
        'sub-agent researcher (tools, maxTurns, hooks, permission, subagents or timeoutMs)',
        'sub-agent writer (only in the second)',
      ]),
    );
    const none = resolveAgentOptions({ model, tools: [Read, Grep, Glob] }).manifest;
    expect(manifestDifferences(a, none)).toContain('sub-agents (only in the first)');
    expect(manifestDifferences(a, a)).toEqual([]);
  });
});
