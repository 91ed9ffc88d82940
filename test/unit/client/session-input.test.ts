/** A session's workflow input: the sub-agents it carries. */
import { describe, expect, it } from 'vitest';
import { sessionWorkflowInput } from '../../../src/client/session-input.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import type { HookCallback } from '../../../src/common/types.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import type { AgentModel } from '../../../src/models/model.js';
import { Grep, Read, Write } from '../../../src/tools/builtin/index.js';

const model: AgentModel = { name: 'm', step: async () => ({ text: '', finishReason: 'stop' }) };
const cb: HookCallback = async () => ({ action: 'continue' });

describe('sessionWorkflowInput', () => {
  it('carries no subagents when the agent has none', () => {
    const options = resolveAgentOptions({ model, tools: [Read] });
    expect(sessionWorkflowInput(options, 's', {})).not.toHaveProperty('subagents');
  });

  it("carries each sub-agent's tools, limits, hook counts, permission and mayUse", () => {
    const options = resolveAgentOptions({
      model,
      tools: [Read, Grep, Write],
      advanced: {
        permission: async () => 'allow' as const,
        hooks: { [HookEvent.PreToolUse]: [cb, cb] },
        subagents: {
          maxDepth: 2,
          agents: {
            researcher: {
              description: 'r',
              prompt: 'r',
              tools: ['Read', 'Grep'],
              subagents: ['writer'],
            },
            writer: {
              description: 'w',
              prompt: 'w',
              tools: ['Write'],
              hooks: { [HookEvent.PostToolUse]: [cb] },
              permission: 'accept-edits',
              maxTurns: 3,
              timeoutMs: 1_000,
            },
          },
        },
      },
    });
    const input = sessionWorkflowInput(options, 's', {
      hooks: { [HookEvent.PreToolUse]: [cb] },
      permissionHandler: async () => 'deny' as const,
    });
    expect(input.tools?.at(-1)).toEqual({ name: 'Task', kind: 'readonly' });
    expect(input.subagents).toEqual({
      maxDepth: 2,
      maxConcurrent: 4,
      timeoutMs: 3_600_000,
      agents: [
        {
          name: 'researcher',
          tools: [
            { name: 'Read', kind: 'readonly' },
            { name: 'Grep', kind: 'readonly' },
          ],
          maxTurns: 50,
          timeoutMs: 3_600_000,
          // The agent's two and the session's one.
          hookCounts: { PreToolUse: 3 },
          // Inherited: the session's own handler.
          permission: { handler: 'session' },
          mayUse: ['writer'],
        },
        {
          name: 'writer',
          tools: [{ name: 'Write', kind: 'write' }],
          maxTurns: 3,
          timeoutMs: 1_000,
          // Its own one and the session's one.
          hookCounts: { PostToolUse: 1, PreToolUse: 1 },
          permission: { preset: 'accept-edits' },
          mayUse: [],
        },
      ],
    });
  });
});
