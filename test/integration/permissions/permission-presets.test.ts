/**
 * README, Tools and permission: `'accept-edits'` runs read-only and write tools and asks for
 * execute tools; `'plan'` runs read-only tools and denies the rest. Real built-in tools on a
 * real workspace, driven by a scripted model.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent, type PermissionPreset } from '../../../src/index.js';
import { scriptedModel, toolCall, type ScriptedTurn } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

let workspace: string;
const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});
beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'durable-agent-presets-'));
  writeFileSync(join(workspace, 'notes.txt'), 'old text\n');
});
afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
});

/** One prompt per tool kind: the model calls the tool once, then answers 'done'. */
const calls: Record<string, ScriptedTurn> = {
  read: toolCall('Read', { file_path: 'notes.txt' }),
  write: toolCall('Write', { file_path: 'new.txt', content: 'written' }),
  edit: toolCall('Edit', { file_path: 'notes.txt', old_string: 'old', new_string: 'new' }),
  bash: toolCall('Bash', { command: 'echo ran > bash.txt' }),
};
const model = scriptedModel((request) => {
  if (request.messages.at(-1)?.role === 'tool') return 'done';
  const prompt = typeof request.prompt === 'string' ? request.prompt : '';
  return calls[prompt] ?? 'no such prompt';
});

async function agentWith(permission: PermissionPreset): Promise<Agent> {
  const agent = await createAgent({
    model,
    workspaceRoots: [workspace],
    advanced: {
      permission,
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue(`preset-${permission}`) },
    },
  });
  agents.push(agent);
  return agent;
}

/** The result the model saw for the last tool call of the session. */
async function lastResult(session: Awaited<ReturnType<Agent['createSession']>>) {
  const results = (await session.conversation()).flatMap((m) =>
    m.role === 'tool' ? m.results : [],
  );
  return results.at(-1);
}

describe("permission: 'accept-edits'", () => {
  it('runs Read, Write and Edit without asking; Bash asks a person', async () => {
    const agent = await agentWith('accept-edits');
    const session = await agent.createSession();
    for (const prompt of ['read', 'write', 'edit']) {
      const response = await session.send(prompt);
      expect(response.toolCalls.map((c) => c.status)).toEqual(['success']);
    }
    expect(readFileSync(join(workspace, 'new.txt'), 'utf8')).toBe('written');
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('new text\n');

    const pending = session.send('bash');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 15_000, 'ask');
    const [ask] = await session.pendingPermissions();
    expect(ask).toMatchObject({ toolName: 'Bash', toolKind: 'execute' });
    expect(existsSync(join(workspace, 'bash.txt'))).toBe(false);
    await session.deny(ask!.requestId, { message: 'not now' });
    const response = await pending;
    expect(response.toolCalls.map((c) => c.status)).toEqual(['denied']);
    expect((await lastResult(session))?.model).toBe('not now');
    expect(existsSync(join(workspace, 'bash.txt'))).toBe(false);
    await session.close();
  }, 60_000);
});

describe("permission: 'plan'", () => {
  it('runs Read; denies Write, Edit and Bash without asking, and nothing changes', async () => {
    const agent = await agentWith('plan');
    const session = await agent.createSession();
    const read = await session.send('read');
    expect(read.toolCalls.map((c) => c.status)).toEqual(['success']);
    expect((await lastResult(session))?.model).toContain('old text');
    for (const [prompt, kind] of [
      ['write', 'write'],
      ['edit', 'write'],
      ['bash', 'execute'],
    ] as const) {
      const response = await session.send(prompt);
      expect(response.toolCalls.map((c) => c.status)).toEqual(['denied']);
      expect((await lastResult(session))?.model).toBe(`Plan mode: ${kind} tools do not run`);
    }
    expect(await session.pendingPermissions()).toEqual([]);
    expect(existsSync(join(workspace, 'new.txt'))).toBe(false);
    expect(existsSync(join(workspace, 'bash.txt'))).toBe(false);
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('old text\n');
    await session.close();
  }, 60_000);
});
