/**
 * Sub-agents on a real Temporal server: a `Task` call starts a child session that runs under
 * the agent's policy. An agent-level PreToolUse hook, inherited by the sub-agent, blocks its
 * `rm -rf` (the files stay); an unknown sub-agent name is a tool error naming the known ones.
 * Real built-in tools on a real workspace, driven by a scripted model.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type HookInput } from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

const workspace = mkdtempSync(join(tmpdir(), 'subagents-spawn-'));
mkdirSync(join(workspace, 'build'));
writeFileSync(join(workspace, 'build', 'out.js'), 'built\n');

/** What the PreToolUse hook saw, call by call. */
const preToolUse: HookInput[] = [];
let agent: Agent;

beforeAll(async () => {
  // The top session delegates (prompt `clean` or `ask nobody`); the cleaner runs `rm -rf`
  // and reports what it got back.
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (request.agentPath === 'main/cleaner') {
      if (last?.role !== 'tool') return toolCall('Bash', { command: 'rm -rf build' });
      return `cleaner got: ${String(last.results[0]?.model)}`;
    }
    if (last?.role === 'tool') return `parent got: ${String(last.results[0]?.model)}`;
    const subagent = request.prompt === 'ask nobody' ? 'nobody' : 'cleaner';
    return toolCall('Task', {
      description: 'clean the build',
      prompt: 'Remove the build folder',
      subagent_type: subagent,
    });
  });
  agent = await createAgent({
    name: 'subagents-spawn',
    model,
    workspaceRoots: [workspace],
    advanced: {
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            preToolUse.push(input);
            const command = (input.toolInput as { command?: unknown } | undefined)?.command;
            return typeof command === 'string' && command.includes('rm -rf')
              ? { action: 'abort', reason: 'rm -rf is not allowed' }
              : { action: 'continue' };
          },
        ],
      },
      permission: 'bypass-permissions',
      subagents: {
        agents: {
          cleaner: { description: 'Cleans build output', prompt: 'You clean.', tools: ['Bash'] },
          reviewer: { description: 'Reviews code', prompt: 'You review.', tools: ['Read'] },
        },
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('subagents-spawn') },
    },
  });
});

afterAll(async () => {
  await agent?.shutdown();
  rmSync(workspace, { recursive: true, force: true });
});

describe('a sub-agent under the agent policy', () => {
  it("the agent's PreToolUse, inherited by the sub-agent, blocks its rm -rf; the parent reads the sub-agent's answer", async () => {
    const session = await agent.createSession();
    const response = await session.send('clean');
    expect(response.toolCalls).toMatchObject([{ toolName: 'Task', status: 'success' }]);
    expect(response.text()).toBe('parent got: cleaner got: rm -rf is not allowed');
    expect(existsSync(join(workspace, 'build', 'out.js'))).toBe(true);
    // The hook ran for the parent's Task call, then for the sub-agent's Bash call, which it
    // saw with the sub-agent's place in the tree.
    expect(preToolUse.map((input) => input.toolName)).toEqual(['Task', 'Bash']);
    expect(preToolUse[0]).not.toHaveProperty('agentPath');
    expect(preToolUse[1]).toMatchObject({
      agentPath: 'main/cleaner',
      depth: 1,
      parentSessionId: session.id,
    });
    await session.close();
  }, 60_000);

  it('an unknown sub-agent name is a tool error naming the known ones', async () => {
    const session = await agent.createSession();
    const response = await session.send('ask nobody');
    expect(response.toolCalls).toMatchObject([{ toolName: 'Task', status: 'error' }]);
    expect(response.text()).toBe(
      "parent got: Unknown sub-agent 'nobody'; known: cleaner, reviewer",
    );
    await session.close();
  }, 60_000);
});
