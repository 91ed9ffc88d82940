/** What a worker's registry holds of the sub-agents: own hooks, permission, tools, model, prompt. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import type { HookCallback } from '../../../src/common/types.js';
import type { AgentOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import type { AgentModel } from '../../../src/models/model.js';
import { Grep, Read } from '../../../src/tools/builtin/index.js';
import { subagentRegistrations } from '../../../src/worker/subagent-registration.js';

const model: AgentModel = {
  name: 'agent-model',
  step: async () => ({ text: '', finishReason: 'stop' }),
};
const own: AgentModel = {
  name: 'own-model',
  step: async () => ({ text: '', finishReason: 'stop' }),
};
const hook: HookCallback = async () => ({ action: 'continue' });
const policy = async () => 'allow' as const;

const resolved = (options: Partial<AgentOptions>, subagents: AgentOptions['advanced']) =>
  resolveAgentOptions({ model, tools: [Read, Grep], ...options, advanced: subagents });

describe('subagentRegistrations', () => {
  it('is undefined for an agent without sub-agents', () => {
    expect(subagentRegistrations(resolveAgentOptions({ model }))).toBeUndefined();
  });

  it("holds a sub-agent's own hooks, permission function, tools, model and prompt; nothing it inherits", () => {
    const registered = subagentRegistrations(
      resolved(
        {},
        {
          subagents: {
            agents: {
              inheriting: { description: 'i', prompt: 'Inherit all.' },
              owning: {
                description: 'o',
                prompt: 'Own all.',
                tools: ['Grep'],
                hooks: { [HookEvent.PreToolUse]: [hook] },
                permission: policy,
                model: own,
              },
              preset: { description: 'p', prompt: 'p', permission: 'plan' },
            },
          },
        },
      ),
    )!;
    const inheriting = registered.get('inheriting')!;
    expect(inheriting.tools.map((t) => t.name)).toEqual(['Read', 'Grep']);
    expect(inheriting.prompt).toBe('Inherit all.');
    for (const key of ['hooks', 'permission', 'model']) expect(inheriting).not.toHaveProperty(key);
    const owning = registered.get('owning')!;
    expect(owning).toMatchObject({ prompt: 'Own all.', permission: policy, model: own });
    expect(owning.tools.map((t) => t.name)).toEqual(['Grep']);
    expect(owning.hooks?.PreToolUse).toEqual([hook]);
    // A preset is decided in the workflow, from the session's input: nothing to hold.
    expect(registered.get('preset')).not.toHaveProperty('permission');
  });

  it('gives a sub-agent that may start others a Task tool listing only those, with maxDepth', () => {
    const registered = subagentRegistrations(
      resolved(
        {},
        {
          subagents: {
            maxDepth: 3,
            agents: {
              lead: { description: 'Leads', prompt: 'l', subagents: ['reader'] },
              reader: { description: 'Reads files', prompt: 'r' },
              writer: { description: 'Writes files', prompt: 'w' },
            },
          },
        },
      ),
    )!;
    const spawn = registered.get('lead')!.spawn!;
    expect(spawn.maxDepth).toBe(3);
    expect(spawn.tool.name).toBe('Task');
    expect(spawn.tool.description).toContain('- reader: Reads files');
    expect(spawn.tool.description).not.toContain('writer');
    expect(registered.get('reader')).not.toHaveProperty('spawn');
  });

  it("resolves a model id with the agent's key for the same provider", () => {
    const registered = subagentRegistrations(
      resolved(
        { model: 'gpt-4o', apiKey: 'sk-test' },
        {
          subagents: { agents: { small: { description: 's', prompt: 's', model: 'gpt-4o-mini' } } },
        },
      ),
    )!;
    expect(registered.get('small')!.model!.name).toContain('gpt-4o-mini');
  });

  it('refuses a model id of another provider whose key nothing gives', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const options = resolved(
        { model: 'gpt-4o', apiKey: 'sk-test' },
        {
          subagents: {
            agents: { c: { description: 'c', prompt: 'c', model: 'claude-sonnet-4-5' } },
          },
        },
      );
      expect(() => subagentRegistrations(options)).toThrow(ConfigError);
      expect(() => subagentRegistrations(options)).toThrow(/ANTHROPIC_API_KEY/);
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
