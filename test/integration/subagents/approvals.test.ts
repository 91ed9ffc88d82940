/**
 * A sub-agent's ask reaches the people who approve its parent: the sub-agent's Write asks a
 * person (the default preset); `durable-agent pending <parent>` (the built CLI, a process of
 * its own) lists it as `main/writer`; `durable-agent approve <parent> <id>` sends the answer
 * to the sub-agent's session, where the tool runs once and the history records who approved.
 * Another session's handle never answers it; `session.deny()` through the parent's handle
 * denies it in the sub-agent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { AgentSdkError } from '../../../src/common/errors.js';
import type { PendingPermission } from '../../../src/common/permission.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { runCli } from '../../helpers/cli-process.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('subagents-approvals');
let agent: Agent;
let client: Client;

beforeAll(async () => {
  // The top session delegates to `writer`, which writes notes.md and reports what it got.
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (request.agentPath === 'main/writer') {
      if (last?.role !== 'tool') {
        return toolCall('Write', { file_path: 'notes.md', content: 'from the writer' });
      }
      return `writer got: ${String(last.results[0]?.status)}`;
    }
    if (last?.role === 'tool') return `parent got: ${String(last.results[0]?.model)}`;
    return toolCall('Task', {
      description: 'write the notes',
      prompt: 'Write notes.md',
      subagent_type: 'writer',
    });
  });
  agent = await createAgent({
    name: 'subagents-approvals',
    model,
    workspaceRoots: [workspace],
    advanced: {
      // The default preset: Task (read-only) runs, the sub-agent's Write asks a person.
      subagents: {
        agents: { writer: { description: 'Writes notes', prompt: 'You write.', tools: ['Write'] } },
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('subagents-approvals') },
    },
  });
  client = await rawClient();
});

afterAll(async () => {
  await agent?.shutdown();
  await client?.connection.close();
});

describe("a sub-agent's ask, answered through its parent", () => {
  it('pending <parent> lists it as main/writer; approve <parent> <id> runs it once, as alice@ops', async () => {
    const session = await agent.createSession();
    const other = await agent.createSession();
    const response = session.send('write the notes');
    let pending: PendingPermission[] = [];
    await waitFor(
      async () => (pending = await session.pendingPermissions()).length === 1,
      30_000,
      "the sub-agent's ask",
    );
    const [ask] = pending;
    const childId = ask!.sessionId!;
    expect(childId.startsWith(`${session.id}/`)).toBe(true);
    expect(ask).toMatchObject({ toolName: 'Write', agentPath: 'main/writer' });
    expect(ask!.requestId.startsWith(`${childId}#`)).toBe(true);

    // Through the CLI, by the parent's id.
    const table = await runCli(['pending', session.id]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^REQUEST +DIGEST +PATH +TOOL +KIND +INPUT +ASKED +DEADLINE\n/);
    const row = table.stdout.split('\n')[1]!;
    expect(row.startsWith(`${ask!.requestId} `)).toBe(true);
    expect(row).toMatch(/ main\/writer +Write +write +\{"file_path":"notes\.md"/);
    const json = await runCli(['pending', session.id, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject([
      { requestId: ask!.requestId, sessionId: childId, agentPath: 'main/writer' },
    ]);

    // Another session does not answer for it: its id goes to that session, which has none.
    const refused = await other.approve(ask!.requestId).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AgentSdkError);
    expect((refused as AgentSdkError).code).toBe('PERMISSION_REQUEST_NOT_FOUND');

    const approved = await runCli([
      'approve',
      session.id,
      ask!.requestId,
      '--identity',
      'alice@ops',
    ]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe(
      `approved Write notes.md in main/writer (digest ${ask!.digest!.slice(0, 12)}, the pending request's)\n`,
    );

    const result = await response;
    expect(result.status).toBe('completed');
    expect(result.text()).toBe('parent got: writer got: success');
    expect(readFileSync(join(workspace, 'notes.md'), 'utf8')).toBe('from the writer');
    expect(await session.pendingPermissions()).toEqual([]);

    // The answer and who gave it are in the sub-agent's history; the tool ran once.
    const history = await client.workflow.getHandle(sessionWorkflowId(childId)).fetchHistory();
    const timeline = timelineFromHistory(history);
    expect(timeline.toolCalls).toHaveLength(1);
    expect(timeline.toolCalls[0]).toMatchObject({
      toolName: 'Write',
      permission: { ask: { outcome: 'approved', by: 'alice@ops', requestId: ask!.requestId } },
      result: { status: 'success' },
    });
    // The parent's history has no answer: nothing of it entered there.
    const parent = timelineFromHistory(
      await client.workflow.getHandle(session.workflowId).fetchHistory(),
    );
    expect(parent.toolCalls.map((c) => c.toolName)).toEqual(['Task']);
    expect(parent.toolCalls[0]!.permission?.ask).toBeUndefined();

    // The sub-agent's session has ended with its task: a late answer is sent nowhere.
    const late = await runCli(['approve', session.id, ask!.requestId, '--identity', 'bob@ops']);
    expect(late.code).toBe(1);
    expect(late.stderr).toBe(
      `durable-agent: session '${childId}' is closed (COMPLETED): nothing was sent\n`,
    );
    await Promise.all([session.close(), other.close()]);
  }, 120_000);

  it("session.deny() through the parent's handle denies it in the sub-agent: its Write never runs", async () => {
    const session = await agent.createSession();
    const response = session.send('write the notes');
    let pending: PendingPermission[] = [];
    await waitFor(
      async () => (pending = await session.pendingPermissions()).length === 1,
      30_000,
      "the sub-agent's ask",
    );
    const [ask] = pending;
    await session.deny(ask!.requestId, { message: 'not now' });
    const result = await response;
    expect(result.text()).toBe('parent got: writer got: error');
    const history = await client.workflow
      .getHandle(sessionWorkflowId(ask!.sessionId!))
      .fetchHistory();
    expect(timelineFromHistory(history).toolCalls[0]).toMatchObject({
      toolName: 'Write',
      permission: { ask: { outcome: 'denied', message: 'not now', requestId: ask!.requestId } },
    });
    expect(timelineFromHistory(history).toolCalls[0]!.result).toBeUndefined();
    await session.close();
  }, 60_000);
});
