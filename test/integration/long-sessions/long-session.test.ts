/**
 * Long sessions on a real server: continue-as-new with the hooks state carried, a worker
 * killed mid-session, payloads past Temporal's limits, and the model's context budget.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  createAgentClient,
  defineTool,
  fileStore,
  HookEvent,
  type Agent,
  type AgentClient,
  type Session,
} from '../../../src/index.js';
import proto from '@temporalio/proto';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { crashAgentOptions, type CrashAgentEnv } from '../../fixtures/crash-agent.js';
import {
  count,
  crashEnv,
  killAll,
  openGate,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import {
  gate,
  rawClient,
  temporalAddress,
  uniqueTaskQueue,
  waitFor,
} from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const { temporal } = proto;
const payloadDir = tempDir('payloads');

/** Run ids of a session's workflow, oldest first (one per continue-as-new). */
async function runsOf(session: Session): Promise<string[]> {
  const client = await rawClient();
  const runs: Array<{ runId: string; start: number }> = [];
  for await (const execution of client.workflow.list({
    query: `WorkflowId = '${session.workflowId}'`,
  })) {
    runs.push({ runId: execution.runId, start: execution.startTime.getTime() });
  }
  await client.connection.close();
  return runs.sort((a, b) => a.start - b.start).map((r) => r.runId);
}

/** How many `send` Updates the session's newest run has accepted so far. */
async function acceptedSends(session: Session): Promise<number> {
  const client = await rawClient();
  try {
    const history = await client.workflow.getHandle(session.workflowId).fetchHistory();
    return (history.events ?? []).filter(
      (e) =>
        e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'send',
    ).length;
  } finally {
    await client.connection.close();
  }
}

/** How many `send` and `close` Updates one run of a session answered, and how the run ended. */
async function runSummary(
  session: Session,
  runId: string,
): Promise<{ sends: number; closes: number; status: string }> {
  const client = await rawClient();
  try {
    const handle = client.workflow.getHandle(session.workflowId, runId);
    const history = await handle.fetchHistory();
    const names = new Map<string, string>();
    const answered: string[] = [];
    for (const event of history.events ?? []) {
      const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
      const name = accepted?.acceptedRequest?.input?.name;
      if (name) names.set(String(event.eventId), name);
      const completed = event.workflowExecutionUpdateCompletedEventAttributes;
      if (completed) answered.push(names.get(String(completed.acceptedEventId)) ?? '?');
    }
    return {
      sends: answered.filter((n) => n === 'send').length,
      closes: answered.filter((n) => n === 'close').length,
      status: (await handle.describe()).status.name,
    };
  } finally {
    await client.connection.close();
  }
}

describe('a 1,000-turn session with a worker killed at turn 500', () => {
  const clients: AgentClient[] = [];
  afterEach(async () => {
    await killAll();
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('completes every turn, continues as new several times, and ran SessionStart and SessionEnd once', async () => {
    const env: CrashAgentEnv = crashEnv({
      sessionHooksOnly: true,
      continueAsNewAfterPrompts: 150,
      payloadDir,
      recordModel: true, // a prompt with `model-block` waits in its model step for the gate
    });
    const first = await startWorkerProcess(env, 'A');
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const session = await client.createSession();
    const promptOf = (turn: number) => (turn === 500 ? 'turn-500 model-block' : `turn-${turn}`);
    for (let turn = 1; turn <= 1000; turn++) {
      if (turn === 500) {
        // The worker dies with the prompt in flight (its model step waiting on A); a new one
        // takes the session over and runs the step again.
        const pending = session.send(promptOf(turn));
        await waitForEffect(env, 'A model turn-500 model-block', 30_000);
        await first.kill();
        openGate(env);
        await startWorkerProcess(env, 'B');
        expect((await pending).text()).toBe(`echo:${promptOf(turn)}`);
        expect(count(env, 'B model turn-500 model-block')).toBe(1);
        continue;
      }
      const response = await session.send(promptOf(turn));
      expect(response.text()).toBe(`echo:${promptOf(turn)}`);
    }
    const conversation = await session.conversation();
    expect(conversation).toHaveLength(2000);
    const prompts = conversation.flatMap((m) => (m.role === 'user' ? [m.content] : []));
    expect(prompts).toEqual(Array.from({ length: 1000 }, (_, i) => promptOf(i + 1)));
    expect((await session.describe()).promptsHandled).toBe(1000);
    expect((await runsOf(session)).length).toBeGreaterThanOrEqual(6);

    await session.close();
    expect(count(env, 'SessionStart')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
    const timeline = await session.timeline();
    expect(timeline.map((e) => e.event)).toEqual([HookEvent.SessionStart, HookEvent.SessionEnd]);
    expect(timeline.map((e) => e.seq)).toEqual([0, 1]);
  }, 600_000);

  it('a pending cleanup survives the rollover: the next run stays fail-closed until it settles', async () => {
    const env: CrashAgentEnv = crashEnv({
      continueAsNewAfterPrompts: 1,
      hookTimeoutMs: 300,
      payloadDir,
    });
    await startWorkerProcess(env, 'A');
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const session = await client.createSession();
    // UserPromptSubmit blocks past its budget: the callback keeps running (cleanup pending).
    await expect(session.send('block me')).rejects.toMatchObject({ code: 'HOOK_TIMEOUT' });
    expect((await session.describe()).pendingCleanups).toBe(1);
    await expect(session.send('next')).rejects.toMatchObject({ code: 'HOOK_CLEANUP_PENDING' });
    openGate(env);
    await waitFor(async () => (await session.describe()).pendingCleanups === 0, 15_000, 'settle');
    expect((await session.send('after')).text()).toBe('echo:after');
    await waitFor(async () => (await runsOf(session)).length >= 2, 15_000, 'a rollover');
    expect((await session.send('later')).text()).toBe('echo:later');
    await session.close();
    expect(count(env, 'SessionStart')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
  }, 60_000);
});

describe('continue-as-new in one process', () => {
  const workspace = tempDir('long-ws');
  const ran: string[] = [];
  const bigTool = defineTool({
    name: 'Big',
    description: 'Print many bytes',
    kind: 'readonly',
    inputSchema: z.object({ bytes: z.number().int().positive() }),
    execute: async ({ bytes }) => 'x'.repeat(bytes - 3) + 'END',
  });
  const recordTool = defineTool({
    name: 'Record',
    description: 'Record a value',
    kind: 'write',
    inputSchema: z.object({ value: z.string() }),
    execute: async ({ value }) => {
      ran.push(value);
      return `recorded ${value}`;
    },
  });
  const counts = { start: 0, end: 0 };
  const seenByModel: Array<{ prompt: string; messages: number; first: string }> = [];
  let agent: Agent;
  /** While set, the model step of the prompt `a` waits until it opens. */
  let promptHold: Promise<void> | undefined;
  /** While set, a run's archive (before it continues as new) waits in the store until it opens. */
  let archiveHold: { entered: () => void; opened: Promise<void> } | undefined;
  const files = fileStore(payloadDir);
  const store = {
    put: async (data: Uint8Array) => {
      if (archiveHold && Buffer.from(data.subarray(0, 10)).toString() === '{"runId":"') {
        archiveHold.entered();
        await archiveHold.opened;
      }
      return files.put(data);
    },
    get: (ref: string) => files.get(ref),
  };

  beforeAll(async () => {
    agent = await createAgent({
      model: scriptedModel(async (request) => {
        if (request.prompt === 'a' && promptHold) await promptHold;
        const user = request.messages.filter((m) => m.role === 'user');
        const first = user[0];
        const last = request.messages.at(-1);
        const prompt = typeof request.prompt === 'string' ? request.prompt : '';
        seenByModel.push({
          prompt: prompt.slice(0, 40),
          messages: request.messages.length,
          first: first && typeof first.content === 'string' ? first.content.slice(0, 200) : '',
        });
        if (last?.role === 'tool')
          return `saw:${last.results.map((r) => r.model.length).join(',')}`;
        if (prompt.startsWith('big:')) return toolCall('Big', { bytes: Number(prompt.slice(4)) });
        if (prompt.startsWith('record:')) return toolCall('Record', { value: prompt.slice(7) });
        return `echo:${prompt.length}`;
      }),
      tools: [bigTool, recordTool],
      workspaceRoots: [workspace],
      advanced: {
        permission: (request) => (request.toolName === 'Record' ? 'ask' : 'allow'),
        continueAsNewAfterPrompts: 2,
        maxContextTokens: 2_000,
        payloadStore: store,
        sessionEndHookTimeoutMs: 10_000,
        hooks: {
          [HookEvent.SessionStart]: [async () => (counts.start++, { action: 'continue' })],
          [HookEvent.SessionEnd]: [async () => (counts.end++, { action: 'continue' })],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('long') },
      },
    });
  });
  afterAll(() => agent?.shutdown());

  it('a 10 MB tool output: the model sees the head with a marker, the full output is readable', async () => {
    const session = await agent.createSession();
    const response = await session.send('big:10485760');
    expect(response.status).toBe('completed');
    const [call] = response.toolCalls;
    expect(call?.outputRef).toMatch(/^sha256:[0-9a-f]{64}$/);
    const full = await session.readPayload(call!.outputRef!);
    expect(full.length).toBe(10_485_760);
    expect(full.endsWith('END')).toBe(true);
    const results = (await session.conversation()).flatMap((m) =>
      m.role === 'tool' ? m.results : [],
    );
    expect(results[0]!.model).toContain('output truncated: 10485760 bytes total');
    expect(results[0]!.model).toContain(call!.outputRef!);
    expect(Buffer.byteLength(results[0]!.model)).toBeLessThanOrEqual(65_536);
    // The session goes on.
    expect((await session.send('after')).text()).toBe('echo:5');
    await session.close();
  }, 60_000);

  it('a 1 MB prompt and a 3 MB modifiedOutput never kill the session; history keeps references', async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PostToolUse]: [
          async () => ({ action: 'continue', modifiedOutput: 'y'.repeat(3_000_000) }),
        ],
      },
    });
    const prompt = 'p'.repeat(1_000_000);
    expect((await session.send(prompt)).text()).toBe('echo:1000000');
    const response = await session.send('big:100');
    expect(response.status).toBe('completed');
    const results = (await session.conversation()).flatMap((m) =>
      m.role === 'tool' ? m.results : [],
    );
    const model = results.at(-1)!.model;
    expect(Buffer.byteLength(model)).toBeLessThanOrEqual(65_536);
    const ref = /full output: (sha256:[0-9a-f]{64})/.exec(model)?.[1];
    expect(ref).toBeDefined();
    expect(await session.readPayload(ref!)).toBe('y'.repeat(3_000_000));
    // The prompt reached the model's first step whole, and the conversation keeps it whole.
    const conversation = await session.conversation();
    // (compared as a boolean: a failing diff of 1 MB would drown the report)
    expect(conversation[0]?.role === 'user' && conversation[0].content === prompt).toBe(true);
    const client = await rawClient();
    const history = await client.workflow.getHandle(session.workflowId).fetchHistory();
    const largest = Math.max(
      ...(history.events ?? []).map(
        (e) => temporal.api.history.v1.HistoryEvent.encode(e).finish().length,
      ),
    );
    // Each payload over the 256 KiB threshold became a reference of a few hundred bytes.
    expect(largest).toBeLessThan(270_000);
    await client.connection.close();
    await session.close();
  }, 60_000);

  it('the model context stays within maxContextTokens, oldest turns compacted with a note; the transcript keeps all', async () => {
    const session = await agent.createSession();
    seenByModel.length = 0;
    for (let i = 0; i < 12; i++) await session.send(`turn-${i}-${'w'.repeat(1_500)}`);
    const last = seenByModel.at(-1)!;
    // 2,000 tokens is about 8,000 characters: four or five of these turns, not twelve.
    expect(last.messages).toBeLessThan(12);
    expect(last.first).toMatch(/^\[Context compacted: \d+ earlier messages/);
    const transcript = await session.conversation();
    expect(transcript).toHaveLength(24);
    expect((transcript[0] as { content: string }).content.startsWith('turn-0-')).toBe(true);
    await session.close();
  }, 60_000);

  it('SessionStart and SessionEnd ran once across several runs; queued prompts and a pending ask are kept', async () => {
    const before = { ...counts };
    const session = await agent.createSession();
    // Three prompts at once: the rollover due after two waits until the queue is empty, so
    // the first run answers all three, then continues as new. The first waits in its model
    // step until the run has taken all three (on a loaded machine a send can arrive late).
    const hold = gate();
    promptHold = hold.opened;
    const sending = Promise.all(['a', 'bb', 'ccc'].map((p) => session.send(p)));
    await waitFor(async () => (await acceptedSends(session)) === 3, 15_000, 'three sends taken');
    hold.open();
    promptHold = undefined;
    const replies = await sending;
    expect(replies.map((r) => r.text())).toEqual(['echo:1', 'echo:2', 'echo:3']);
    await waitFor(async () => (await runsOf(session)).length >= 2, 15_000, 'the first rollover');
    const firstRun = await runSummary(session, (await runsOf(session))[0]!);
    expect(firstRun).toEqual({ sends: 3, closes: 0, status: 'CONTINUED_AS_NEW' });
    // A permission ask that waits while a rollover is due: it is answered, the tool runs once.
    const asked = session.send('record:kept');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 15_000, 'ask');
    await session.approve((await session.pendingPermissions())[0]!.requestId);
    expect((await asked).status).toBe('completed');
    expect(ran.filter((v) => v === 'kept')).toHaveLength(1);
    for (const p of ['d', 'e', 'f']) await session.send(p);
    await waitFor(async () => (await runsOf(session)).length >= 3, 15_000, 'rollovers');
    expect((await session.conversation()).filter((m) => m.role === 'user')).toHaveLength(7);
    await session.close();
    expect(counts.start - before.start).toBe(1);
    expect(counts.end - before.end).toBe(1);
  }, 60_000);

  it('a send while the run archives itself is refused with SESSION_ROLLING_OVER; the client sends it again to the next run', async () => {
    const entered = gate();
    const release = gate();
    archiveHold = { entered: entered.open, opened: release.opened };
    const client = await rawClient();
    try {
      const session = await agent.createSession();
      await session.send('one');
      await session.send('two'); // the second prompt of the run: the run archives itself
      await entered.opened;
      // The workflow's own answer to a send now, as any client gets it.
      const refused = await client.workflow
        .getHandle(session.workflowId)
        .executeUpdate('send', { args: [{ requestId: 'raw-1', prompt: 'raw' }] })
        .catch((e: unknown) => e);
      expect((refused as { cause?: unknown }).cause).toMatchObject({
        type: 'EngineError',
        message: `Session '${session.id}' is continuing as new; retry the send`,
        details: [expect.objectContaining({ code: 'SESSION_ROLLING_OVER' })],
      });
      // Session.send retries such a refusal: it is answered once the next run is up.
      let answered = false;
      const third = session.send('three').then((r) => ((answered = true), r));
      for (let i = 0; i < 3; i++) expect(await runsOf(session)).toHaveLength(1);
      expect(answered).toBe(false);
      release.open();
      expect((await third).text()).toBe('echo:5');
      const [first, second, ...more] = await runsOf(session);
      expect(more).toEqual([]);
      expect(await runSummary(session, first!)).toMatchObject({
        sends: 2,
        status: 'CONTINUED_AS_NEW',
      });
      expect((await runSummary(session, second!)).sends).toBe(1);
      await session.close();
    } finally {
      release.open();
      archiveHold = undefined;
      await client.connection.close();
    }
  }, 60_000);

  it('close() from two clients while the run archives itself: the close wins, the session ends in that run, SessionEnd once', async () => {
    const before = { ...counts };
    const entered = gate();
    const release = gate();
    archiveHold = { entered: entered.open, opened: release.opened };
    const other = await createAgentClient({
      model: 'unused',
      advanced: {
        payloadStore: store,
        temporal: { address: temporalAddress(), taskQueue: 'unused' },
      },
    });
    try {
      const session = await agent.createSession();
      const elsewhere = await other.session(session.id);
      await session.send('one');
      await session.send('two'); // the second prompt of the run: the run archives itself
      await entered.opened;
      const results = await Promise.all([session.close(), elsewhere.close(), session.close()]);
      release.open();
      expect(results.filter((r) => r.closedNow)).toHaveLength(1);
      expect(await session.close()).toEqual({ closedNow: false, sessionEndRan: false });
      expect(counts.end - before.end).toBe(1);
      expect((await session.describe()).sessionEndMarker?.reason).toBe('other');
      // The archive was cancelled: no rollover, the one run completed with the close.
      const runs = await runsOf(session);
      expect(runs).toHaveLength(1);
      const run = await runSummary(session, runs[0]!);
      expect(run.sends).toBe(2);
      expect(run.closes).toBeGreaterThan(0);
    } finally {
      release.open();
      archiveHold = undefined;
      await other.close();
    }
  }, 60_000);

  it('close() from two clients after a rollover, through handles got before it: SessionEnd runs once, in the next run', async () => {
    const before = { ...counts };
    const other = await createAgentClient({
      model: 'unused',
      advanced: {
        payloadStore: store,
        temporal: { address: temporalAddress(), taskQueue: 'unused' },
      },
    });
    try {
      const session = await agent.createSession();
      const elsewhere = await other.session(session.id);
      await session.send('one');
      await session.send('two'); // the second prompt of the run: a rollover follows
      await waitFor(async () => (await runsOf(session)).length === 2, 15_000, 'a rollover');
      const results = await Promise.all([session.close(), elsewhere.close(), session.close()]);
      expect(results.filter((r) => r.closedNow)).toHaveLength(1);
      expect(await session.close()).toEqual({ closedNow: false, sessionEndRan: false });
      expect(counts.end - before.end).toBe(1);
      expect((await session.describe()).sessionEndMarker?.reason).toBe('other');
      const [first, second, ...more] = await runsOf(session);
      expect(more).toEqual([]);
      expect(await runSummary(session, first!)).toEqual({
        sends: 2,
        closes: 0,
        status: 'CONTINUED_AS_NEW',
      });
      const next = await runSummary(session, second!);
      expect(next.sends).toBe(0);
      expect(next.closes).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  }, 60_000);
});

describe('continue-as-new edge cases', () => {
  let agent: Agent;
  const counts = { start: 0, end: 0 };
  let failSessionEnd = false;
  beforeAll(async () => {
    agent = await createAgent({
      model: scriptedModel(() => 'ok'),
      tools: [],
      advanced: {
        continueAsNewAfterPrompts: 2,
        payloadStore: fileStore(payloadDir),
        hooks: {
          [HookEvent.SessionStart]: [async () => (counts.start++, { action: 'continue' })],
          [HookEvent.SessionEnd]: [
            async () => {
              counts.end++;
              if (failSessionEnd) throw new Error('flush failed');
              return { action: 'continue' };
            },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('can-edges') },
      },
    });
  });
  afterAll(() => agent?.shutdown());

  it('a SessionEnd that failed before a rollover never runs again: the marker is carried', async () => {
    const before = counts.end;
    const session = await agent.createSession();
    await session.send('one');
    failSessionEnd = true;
    await expect(session.close()).rejects.toThrow(/flush failed/);
    failSessionEnd = false;
    await session.send('two'); // the second prompt of the run: a rollover follows
    await waitFor(async () => (await runsOf(session)).length >= 2, 15_000, 'a rollover');
    expect((await session.describe()).sessionEndMarker?.reason).toBe('other');
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: false });
    expect(counts.end - before).toBe(1);
  }, 60_000);

  it('createSession({ sessionId }) attaches to a session that continued as new', async () => {
    const session = await agent.createSession();
    await session.send('one');
    await session.send('two');
    await waitFor(async () => (await runsOf(session)).length >= 2, 15_000, 'a rollover');
    const startsBefore = counts.start;
    const again = await agent.createSession({ sessionId: session.id });
    expect((await again.send('three')).text()).toBe('ok');
    expect(counts.start).toBe(startsBefore);
    await again.close();
  }, 60_000);

  it('a failed send retried with its requestId after a rollover fails the same, without running again', async () => {
    let submitted = 0;
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            submitted++;
            return String(input.userPrompt).includes('reject')
              ? { action: 'abort', reason: 'not allowed' }
              : { action: 'continue' };
          },
        ],
      },
    });
    await expect(session.send('reject me', { requestId: 'req-1' })).rejects.toMatchObject({
      code: 'HOOK_ABORTED',
    });
    await session.send('fine'); // a rollover follows
    await waitFor(async () => (await runsOf(session)).length >= 2, 15_000, 'a rollover');
    await expect(session.send('reject me', { requestId: 'req-1' })).rejects.toMatchObject({
      code: 'HOOK_ABORTED',
      message: expect.stringContaining('not allowed'),
    });
    expect(submitted).toBe(2);
    await session.close();
  }, 60_000);

  it('a 3 MB abort reason fails the send with a cut message; the session goes on', async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) =>
            String(input.userPrompt) === 'huge'
              ? { action: 'abort', reason: 'r'.repeat(3_000_000) }
              : { action: 'continue' },
        ],
      },
    });
    const error = (await session.send('huge').catch((e: unknown) => e)) as Error & { code: string };
    expect(error.code).toBe('HOOK_ABORTED');
    expect(error.message.length).toBeLessThan(40_000);
    expect(error.message).toContain('characters in all');
    expect((await session.send('after')).text()).toBe('ok');
    await session.close();
  }, 60_000);

  it('a session cancelled from outside after a rollover keeps its earlier runs readable', async () => {
    const session = await agent.createSession();
    for (const p of ['a', 'b', 'c']) await session.send(p);
    await waitFor(async () => (await runsOf(session)).length >= 2, 15_000, 'a rollover');
    const client = await rawClient();
    await client.workflow.getHandle(session.workflowId).cancel();
    await client.connection.close();
    await waitFor(async () => (await session.describe()).status === 'closed', 15_000, 'closed');
    const events = (await session.timeline()).map((e) => e.event);
    expect(events[0]).toBe(HookEvent.SessionStart);
    expect(events.at(-1)).toBe(HookEvent.SessionEnd);
    expect((await session.conversation()).filter((m) => m.role === 'user')).toHaveLength(3);
  }, 60_000);
});

describe('the rollover by Update count', () => {
  it('a session with no prompt bound continues as new after 200 Updates in a run, once a prompt ran', async () => {
    const agent = await createAgent({
      model: scriptedModel(() => 'ok'),
      tools: [],
      advanced: {
        payloadStore: fileStore(payloadDir),
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('can-updates') },
      },
    });
    try {
      const session = await agent.createSession();
      // The `ready` Update and this send: then aborts with nothing running, Updates too.
      expect((await session.send('one')).text()).toBe('ok');
      for (let i = 0; i < 197; i++) expect(await session.abort()).toBe(false);
      expect(await runsOf(session)).toHaveLength(1);
      expect(await session.abort()).toBe(false); // the 200th
      await waitFor(async () => (await runsOf(session)).length === 2, 30_000, 'a rollover');
      expect((await session.send('two')).text()).toBe('ok');
      expect((await session.conversation()).filter((m) => m.role === 'user')).toHaveLength(2);
      await session.close();
    } finally {
      await agent.shutdown();
    }
  }, 180_000);
});

describe('a payload store that fails while a run archives itself', () => {
  it('the session goes on in the same run, and continues as new once the store works again', async () => {
    let broken = true;
    const inner = fileStore(payloadDir);
    const flaky = {
      put: async (data: Uint8Array) => {
        if (broken) throw new Error('store is down');
        return inner.put(data);
      },
      get: (ref: string) => inner.get(ref),
    };
    const agent = await createAgent({
      model: scriptedModel(() => 'ok'),
      tools: [],
      advanced: {
        continueAsNewAfterPrompts: 1,
        payloadStore: flaky,
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('flaky-store') },
      },
    });
    try {
      const session = await agent.createSession();
      expect((await session.send('first')).text()).toBe('ok');
      // The archive fails (three attempts); prompts are answered meanwhile or right after.
      expect((await session.send('second')).text()).toBe('ok');
      expect(await runsOf(session)).toHaveLength(1);
      broken = false;
      for (let i = 0; i < 10; i++) await session.send(`more ${i}`);
      await waitFor(async () => (await runsOf(session)).length >= 2, 15_000, 'a rollover');
      expect((await session.conversation()).filter((m) => m.role === 'user')).toHaveLength(12);
      await session.close();
    } finally {
      await agent.shutdown();
    }
  }, 90_000);
});
