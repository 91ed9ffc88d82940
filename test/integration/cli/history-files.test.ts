/**
 * Session histories as files, through the public testing entry point: a real session's
 * history fetched from the server, written, read back and replayed; a tampered file's
 * nondeterminism told in hook terms (which dispatch, which tool), whether the file was read
 * with `readHistoryFile` or by `JSON.parse` alone.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgent,
  HookEvent,
  SessionNotFoundError,
  type Agent,
  type AgentOptions,
  type Session,
} from '../../../src/index.js';
import {
  fetchSessionHistories,
  fetchSessionHistory,
  readHistoryFile,
  replaySessionHistories,
  scriptedModel,
  toolCall,
  writeHistoryFile,
  type SessionHistory,
} from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const dir = tempDir('history-files');

let agent: Agent;
/** The same definition, continuing as new after every prompt. */
let rolling: Agent;
let session: Session;
/** A session of `rolling` with two prompts: several runs. */
let rolled: Session;

beforeAll(async () => {
  const options = (name: string): AgentOptions => ({
    model: scriptedModel((request) =>
      request.step === 0 ? toolCall('Bash', { command: 'echo hi' }) : 'done',
    ),
    workspaceRoots: [dir],
    advanced: {
      permission: 'bypass-permissions',
      hooks: {
        [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })],
        [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })],
        [HookEvent.PostToolUse]: [async () => ({ action: 'continue' })],
      },
      ...(name === 'rolling' ? { continueAsNewAfterPrompts: 1 } : {}),
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue(`history-${name}`) },
    },
  });
  [agent, rolling] = await Promise.all([
    createAgent(options('files')),
    createAgent(options('rolling')),
  ]);
  session = await agent.createSession({ sessionId: `history-files-${randomUUID()}` });
  await session.send('run it');
  rolled = await rolling.createSession({ sessionId: `history-files-rolled-${randomUUID()}` });
  await rolled.send('first');
  await rolled.send('second');
}, 60_000);

afterAll(async () => {
  await session?.close();
  await rolled?.close();
  await Promise.all([agent?.shutdown(), rolling?.shutdown()]);
});

/** The history's `dispatchHook` scheduled events, with their event ids. */
function dispatchEvents(json: { events: Array<Record<string, unknown>> }) {
  return json.events.filter(
    (e) =>
      (e.activityTaskScheduledEventAttributes as { activityType?: { name?: string } } | undefined)
        ?.activityType?.name === 'dispatchHook',
  ) as Array<{
    eventId: string;
    activityTaskScheduledEventAttributes: { activityType: { name: string } };
  }>;
}

/**
 * The session's history as a file in which its PreToolUse dispatch (#1: #0 is
 * UserPromptSubmit, #2 PostToolUse) was scheduled as another activity type.
 */
async function tamperedFile(name: string): Promise<{ file: string; eventId: string }> {
  const file = join(dir, name);
  writeHistoryFile(file, await fetchSessionHistory(agent.client, session.id));
  const json = JSON.parse(readFileSync(file, 'utf8')) as {
    events: Array<Record<string, unknown>>;
  };
  const preToolUse = dispatchEvents(json)[1]!;
  preToolUse.activityTaskScheduledEventAttributes.activityType.name = 'renamedDispatch';
  writeFileSync(file, JSON.stringify(json));
  return { file, eventId: preToolUse.eventId };
}

describe('history files', () => {
  it('fetches a session by address and by its workflow id, writes it, reads it back and it replays', async () => {
    const fetched = await fetchSessionHistory(temporalAddress(), session.id);
    expect(fetched.sessionId).toBe(session.id);
    expect(fetched.workflowId).toBe(session.workflowId);
    // The same session through the agent's client, by the workflow id the Web UI shows.
    const again = await fetchSessionHistory(agent.client, session.workflowId);
    expect(again.sessionId).toBe(session.id);
    expect(again.history.events?.length).toBe(fetched.history.events?.length);

    const file = join(dir, 'saved', 'in', 'a', 'new', 'folder', 'history.json');
    writeHistoryFile(file, fetched);
    const read = readHistoryFile(file);
    expect(read.sessionId).toBe(session.id);
    expect(read.workflowId).toBe(session.workflowId);
    expect(read.history.events?.length).toBe(fetched.history.events?.length);
    await replaySessionHistories([read]);
  });

  it("a tampered file's nondeterminism is told in hook terms: the dispatch and its tool", async () => {
    const { file, eventId } = await tamperedFile('tampered.json');
    const expected = new RegExp(
      `session ${session.id} \\(workflow ${session.workflowId}\\): nondeterministic replay at ` +
        `history event ${eventId} \\(recorded: the PreToolUse hook dispatch #1, tool ` +
        `Bash, as activity 'renamedDispatch'\\)`,
    );
    await expect(replaySessionHistories([readHistoryFile(file)])).rejects.toThrow(expected);
    // A history parsed by JSON.parse alone is told in the same terms.
    const plain: SessionHistory = {
      sessionId: session.id,
      workflowId: session.workflowId,
      history: JSON.parse(readFileSync(file, 'utf8')) as SessionHistory['history'],
    };
    await expect(replaySessionHistories([plain])).rejects.toThrow(expected);
  });

  it('fetches every run of a session that continued as new, oldest first, and they replay', async () => {
    const runs = await fetchSessionHistories(rolling.client.temporal, rolled.id);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const firstStarted = runs[0]!.history.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(firstStarted?.continuedExecutionRunId ?? '').toBe('');
    for (const run of runs) expect(run.sessionId).toBe(rolled.id);
    runs.forEach((run, i) => writeHistoryFile(join(dir, 'rolled', `run-${i}.json`), run));
    await replaySessionHistories(
      runs.map((_, i) => readHistoryFile(join(dir, 'rolled', `run-${i}.json`))),
    );
  });

  it('a run in which no workflow task has run yet (only its start) has nothing to check: it resolves', async () => {
    // What the newest run of a session looks like for a moment after it continued as new.
    const { history } = await fetchSessionHistory(agent.client, session.id);
    const file = join(dir, 'just-started.json');
    writeHistoryFile(file, { events: history.events!.slice(0, 1) });
    const started = readHistoryFile(file);
    expect(started.history.events).toHaveLength(1);
    expect(started.sessionId).toBe(session.id);
    await replaySessionHistories([started]);
    // Beside a run that has something to check, which is still checked.
    const tampered = await tamperedFile('tampered-beside.json');
    await expect(replaySessionHistories([started, readHistoryFile(tampered.file)])).rejects.toThrow(
      /1 session\(s\) did not replay[\s\S]*renamedDispatch/,
    );
  });

  it('refuses what is not a session history, naming the file and the problem', async () => {
    const notJson = join(dir, 'not-json.json');
    writeFileSync(notJson, 'not\njson');
    expect(() => readHistoryFile(notJson)).toThrow(ConfigError);
    expect(() => readHistoryFile(notJson)).toThrow(/History file .*not-json\.json is not JSON/);
    const notHistory = join(dir, 'not-history.json');
    writeFileSync(notHistory, JSON.stringify({ hello: 'world' }));
    expect(() => readHistoryFile(notHistory)).toThrow(
      /History file .*not-history\.json is not a Temporal history/,
    );
    expect(() => readHistoryFile(join(dir, 'missing.json'))).toThrow(
      /History file .*missing\.json does not exist/,
    );
    await expect(fetchSessionHistory(agent.client, `no-such-${randomUUID()}`)).rejects.toThrow(
      SessionNotFoundError,
    );
  });
});
