/**
 * Local dispatches (`hookDispatch: 'local'`, one MarkerRecorded event each) in what reads
 * histories (issue 19): the same session run with local and with ordinary dispatches gives
 * the same rows in the history timeline (event, tool and call, callbacks, decisions, reasons,
 * edits, version), marked `local`; `durable-agent inspect` shows them (text and --json); the
 * session page shows them; an encrypted session's local dispatch opens with the key and fails
 * with one line naming the key id without it.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type AgentOptions } from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import type { HistoryDispatch } from '../../../src/history/timeline-types.js';
import { sessionPage } from '../../../src/ui/session-page.js';
import {
  TEST_KEY,
  TEST_KEY_ID,
  TEST_KEY_RING,
  keysVariable,
  newKey,
} from '../../helpers/encryption.js';
import { rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';
import { runCli } from '../../helpers/cli-process.js';

const workspace = tempDir('local-dispatch-history');
writeFileSync(join(workspace, 'notes.txt'), 'notes\n');
/** Planted in a hook's reason: shown only when the history decrypts. */
const SECRET = `planted-${randomUUID()}`;

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

/** `read` reads notes.txt; anything else gets a reply. */
const model = () =>
  scriptedModel((request) => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
    if (request.step > 0) return `done: ${text}`;
    if (text.startsWith('read')) return toolCall('Read', { file_path: 'notes.txt' });
    return `reply to ${text}`;
  });

const hooks: AgentOptions['advanced'] = {
  hooks: {
    [HookEvent.UserPromptSubmit]: [
      async (input) =>
        String(input.userPrompt).includes('refuse')
          ? { action: 'abort', reason: `refused: ${SECRET}` }
          : { action: 'continue', modifiedInput: { userPrompt: `${String(input.userPrompt)}!` } },
      async () => ({ action: 'continue', reason: 'second looked' }),
    ],
    [HookEvent.PreToolUse]: [
      async (input) =>
        (input.toolInput as { file_path?: string }).file_path === 'notes.txt' &&
        String(input.toolName) === 'Read'
          ? { action: 'continue', modifiedInput: { file_path: 'notes.txt', limit: 5 } }
          : { action: 'continue' },
    ],
    [HookEvent.PostToolUse]: [
      async () => ({ action: 'continue', reason: 'output redacted', modifiedOutput: 'redacted' }),
    ],
  },
};

async function agentWith(hookDispatch: 'local' | undefined, encrypted = false): Promise<Agent> {
  const agent = await createAgent({
    model: model(),
    workspaceRoots: [workspace],
    ...(encrypted ? { encryption: TEST_KEY_RING } : {}),
    advanced: {
      ...hooks,
      ...(hookDispatch ? { hookDispatch } : {}),
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('local-history') },
    },
  });
  agents.push(agent);
  return agent;
}

/** One session: a prompt that reads a file (tool events), one the hook refuses. */
async function runSession(agent: Agent): Promise<string> {
  const session = await agent.createSession({ sessionId: `local-history-${randomUUID()}` });
  expect((await session.send('read it')).status).toBe('completed');
  await expect(session.send('please refuse')).rejects.toMatchObject({ code: 'HOOK_ABORTED' });
  await session.close();
  return session.id;
}

async function historyOf(sessionId: string) {
  const client = await rawClient();
  try {
    return await client.workflow.getHandle(`session-${sessionId}`).fetchHistory();
  } finally {
    await client.connection.close();
  }
}

const cli = (args: string[], keys?: string) =>
  runCli(args, { env: { DURABLE_AGENT_ENCRYPTION_KEYS: keys } });

/** A row without what differs between two runs (ids, event ids, times) or marks it local. */
function comparable(dispatch: HistoryDispatch) {
  const {
    local: _local,
    dispatchId: _dispatchId,
    scheduledEventId: _scheduled,
    closedEventId: _closed,
    scheduledAt: _at,
    durationMs: _duration,
    toolUseId,
    callbacks,
    ...rest
  } = dispatch;
  return {
    ...rest,
    toolUseId: toolUseId === undefined ? undefined : 'a call',
    callbacks: callbacks?.map(({ durationMs: _ms, ...callback }) => callback),
  };
}

describe("hookDispatch: 'local' in the history's readers", () => {
  let localId: string;
  let ordinaryId: string;

  it('gives the same timeline rows as ordinary dispatches, each marked local', async () => {
    [localId, ordinaryId] = await Promise.all([
      agentWith('local').then(runSession),
      agentWith(undefined).then(runSession),
    ]);
    const local = timelineFromHistory(await historyOf(localId));
    const ordinary = timelineFromHistory(await historyOf(ordinaryId));
    // The premise: the local session's hooks ran as local activities (markers), no activity.
    const localHistory = await historyOf(localId);
    const scheduled = (localHistory.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dispatchHook',
    );
    expect(scheduled).toHaveLength(0);

    expect(local.dispatches.map((d) => [d.event, d.decision])).toEqual([
      ['UserPromptSubmit', 'continue'],
      ['PreToolUse', 'continue'],
      ['PostToolUse', 'continue'],
      ['UserPromptSubmit', 'abort'],
    ]);
    expect(local.dispatches.every((d) => d.local === true)).toBe(true);
    expect(ordinary.dispatches.some((d) => d.local)).toBe(false);
    expect(local.dispatches.map(comparable)).toEqual(ordinary.dispatches.map(comparable));
    // Times and the tool call they belong to, as for ordinary dispatches.
    for (const dispatch of local.dispatches) {
      expect(dispatch.scheduledAt).toBeGreaterThanOrEqual(local.startedAt!);
      expect(dispatch.durationMs).toBeGreaterThanOrEqual(0);
      expect(dispatch.budgetMs).toBe(ordinary.dispatches[0]!.budgetMs);
    }
    const [call] = local.toolCalls;
    expect(local.dispatches[1]!.toolUseId).toBe(call!.toolUseId);
    expect(call!.dispatches).toEqual([1, 2]);
    expect(call!.executedInput).toEqual({ file_path: 'notes.txt', limit: 5 });
    expect(local.prompts.map((p) => p.dispatches)).toEqual([[0, 1, 2], [3]]);
    expect(local.dispatches[3]).toMatchObject({
      decidedBy: 0,
      reason: `refused: ${SECRET}`,
      version: local.version,
    });
  }, 120_000);

  it('inspect --json (the CLI) shows the local dispatches with their decisions', async () => {
    const run = await cli(['inspect', localId, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const timeline = JSON.parse(run.stdout) as { dispatches: HistoryDispatch[] };
    expect(timeline.dispatches).toContainEqual(
      expect.objectContaining({
        event: 'UserPromptSubmit',
        decision: 'abort',
        reason: `refused: ${SECRET}`,
        local: true,
      }),
    );
    expect(timeline.dispatches[2]).toMatchObject({
      event: 'PostToolUse',
      toolName: 'Read',
      local: true,
      callbacks: [
        {
          index: 0,
          action: 'continue',
          reason: 'output redacted',
          modifiedOutput: 'redacted',
          outputDiff: expect.anything() as unknown,
        },
      ],
    });
  }, 60_000);

  it('inspect (text) shows them in the table and the decisions, marked local', async () => {
    const run = await cli(['inspect', localId]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\s*3\s+UserPromptSubmit \(local\)\s+2\s+abort\s+/m);
    expect(run.stdout).toMatch(/^\s*1\s+PreToolUse \(local\)\s+Read\s+1\s+continue/m);
    expect(run.stdout).toContain('3 UserPromptSubmit (local): abort by callback #1');
    expect(run.stdout).toContain(`refused: ${SECRET}`);
    expect(run.stdout).toContain('0 UserPromptSubmit (local): continue');
  }, 60_000);

  it('the session page shows them as dispatches, marked local', async () => {
    const html = sessionPage({
      timeline: timelineFromHistory(await historyOf(localId)),
      status: 'closed',
      pending: [],
    });
    const rows = [...html.matchAll(/<div class="dispatch"[^>]*>/g)].map((m) => m[0]);
    expect(rows).toHaveLength(4);
    expect(rows.every((row) => row.includes('data-local="true"'))).toBe(true);
    expect(html).toContain('data-event="UserPromptSubmit" data-decision="abort"');
    expect(html).toContain(`refused: ${SECRET}`);
  });
});

describe("an encrypted session's local dispatches", () => {
  let sessionId: string;

  it('decode with the key: inspect --json shows them, reasons decrypted', async () => {
    sessionId = await runSession(await agentWith('local', true));
    // The premise: the history does not carry the reason in the clear.
    expect(JSON.stringify(await historyOf(sessionId))).not.toContain(SECRET);
    const run = await cli(['inspect', sessionId, '--json'], keysVariable([TEST_KEY_ID, TEST_KEY]));
    expect(run.code, run.stderr).toBe(0);
    const { dispatches } = JSON.parse(run.stdout) as { dispatches: HistoryDispatch[] };
    expect(dispatches.map((d) => [d.event, d.toolName, d.decision, d.local])).toEqual([
      ['UserPromptSubmit', undefined, 'continue', true],
      ['PreToolUse', 'Read', 'continue', true],
      ['PostToolUse', 'Read', 'continue', true],
      ['UserPromptSubmit', undefined, 'abort', true],
    ]);
    expect(dispatches[3]!.reason).toBe(`refused: ${SECRET}`);
  }, 120_000);

  it('without the key, inspect fails with one line naming the key id', async () => {
    const run = await cli(['inspect', sessionId], keysVariable(['other-key', newKey()]));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.split('\n').filter((l) => l !== '');
    expect(lines, run.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`key id '${TEST_KEY_ID}'`);
    expect(run.stderr).not.toContain(SECRET);
  }, 60_000);
});
