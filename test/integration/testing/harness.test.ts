/**
 * The hook test harness (`createHookTestEnv` and the assertions of durable-agent-sdk/testing),
 * dogfooded on the seed's dangerous-command block: on the env's own time-skipping server (the
 * default), on a running server, and on a dev server of its own that restarts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookEvent, type AgentOptions, type HookCallback } from '../../../src/index.js';
import {
  assertDecision,
  assertDispatched,
  assertDispatchOrder,
  assertSessionStartEndOnce,
  assertToolNeverRan,
  createHookTestEnv,
  replaySessionHistories,
  scriptedModel,
  toolCall,
  type HookTestEnv,
} from '../../../src/testing/index.js';
import type { Session } from '../../../src/client/session.js';
import { waitFor } from '../../helpers/common.js';
import { withOtherWorkflowCode } from '../../helpers/replay.js';

const DANGEROUS = [/rm\s+-rf/, /mkfs/, /dd\s+if=/];

/** The seed's dangerous-command block. */
const blockDangerous: HookCallback = async (input) => {
  if (input.toolName !== 'Bash') return { action: 'continue' };
  const command = String(input.toolInput?.command ?? '');
  if (DANGEROUS.some((pattern) => pattern.test(command))) {
    return { action: 'abort', reason: `危险命令被阻止: ${command}` };
  }
  return { action: 'continue' };
};
const allow: HookCallback = async () => ({ action: 'continue' });

let workspace: string;

function agentOptions(): AgentOptions {
  return {
    model: scriptedModel([toolCall('Bash', { command: 'rm -rf /tmp/x' }), 'blocked']),
    workspaceRoots: [workspace],
    advanced: {
      hooks: {
        [HookEvent.SessionStart]: [allow],
        [HookEvent.PreToolUse]: [allow, blockDangerous],
        [HookEvent.PostToolUse]: [allow],
        [HookEvent.PostToolUseFailure]: [allow],
        [HookEvent.TaskCompleted]: [allow],
        [HookEvent.SessionEnd]: [allow],
      },
    },
  };
}

beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'durable-agent-hook-harness-'));
});
afterAll(() => {
  rmSync(workspace, { recursive: true, force: true });
});

describe('createHookTestEnv: the dangerous-command block', () => {
  let env: HookTestEnv;
  let session: Session;

  beforeAll(async () => {
    env = await createHookTestEnv({ agent: agentOptions() });
    session = await env.createSession();
    const response = await session.send('clean up /tmp/x');
    expect(response.toolCalls.map((c) => c.status)).toEqual(['aborted']);
    await session.close();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  it('records the PreToolUse abort, by the second callback, with its reason', async () => {
    await assertDecision(env, session, {
      event: HookEvent.PreToolUse,
      toolName: 'Bash',
      action: 'abort',
      decidedBy: 1,
      reason: '危险命令被阻止: rm -rf /tmp/x',
    });
    await assertDecision(env, session, {
      event: HookEvent.PreToolUse,
      action: 'abort',
      reason: /rm -rf/,
    });
  });

  it('never ran the Bash tool', async () => {
    await assertToolNeverRan(env, session, 'Bash');
    await assertDispatched(env, session, HookEvent.PostToolUse, 0);
    await assertDispatched(env, session, HookEvent.PostToolUseFailure, 0);
  });

  it('ran SessionStart and SessionEnd once each, in the expected order', async () => {
    await assertSessionStartEndOnce(env, session);
    await assertDispatched(env, session, HookEvent.PreToolUse, 1);
    await assertDispatchOrder(env, session, [
      HookEvent.SessionStart,
      HookEvent.PreToolUse,
      HookEvent.TaskCompleted,
      HookEvent.SessionEnd,
    ]);
    await assertDispatchOrder(env, session, [HookEvent.PreToolUse, HookEvent.SessionEnd], {
      only: [HookEvent.PreToolUse, HookEvent.SessionEnd],
    });
  });

  it('exposes the real history and its timeline', async () => {
    const timeline = await env.timeline(session);
    expect(timeline.sessionId).toBe(session.id);
    expect(timeline.status).toBe('COMPLETED');
    expect(timeline.dispatches.map((d) => d.event)).toEqual([
      'SessionStart',
      'PreToolUse',
      'TaskCompleted',
      'SessionEnd',
    ]);
    expect((await env.history(session.id)).events?.length).toBe(timeline.eventCount);
  });

  describe('fails with a readable message', () => {
    it('assertDispatched: the wrong count, with the dispatches recorded', async () => {
      const error = await rejection(assertDispatched(env, session, HookEvent.PreToolUse, 2));
      expect(error.name).toBe('AssertionError');
      expect(error.message).toContain(
        `Expected PreToolUse to be dispatched 2 times in session ${session.id}, but it was dispatched 1 time.`,
      );
      expect(error.message).toContain(
        '#1 PreToolUse Bash -> abort by callback #2: 危险命令被阻止: rm -rf /tmp/x',
      );
      expect(error).toMatchObject({ actual: 1, expected: 2 });
    });

    it('assertDispatchOrder: both sequences, the first difference marked', async () => {
      const error = await rejection(
        assertDispatchOrder(env, session, [
          HookEvent.SessionStart,
          HookEvent.PreToolUse,
          HookEvent.PostToolUse,
          HookEvent.SessionEnd,
        ]),
      );
      expect(error.message).toContain(
        `Dispatch order of session ${session.id} differs at position 2`,
      );
      expect(error.message).toMatch(/> {2}2 {2}PostToolUse +TaskCompleted/);
      expect(error).toMatchObject({
        actual: ['SessionStart', 'PreToolUse', 'TaskCompleted', 'SessionEnd'],
      });
    });

    it('assertDecision: the wrong action, reason and callback', async () => {
      const error = await rejection(
        assertDecision(env, session, {
          event: HookEvent.PreToolUse,
          toolName: 'Bash',
          action: 'continue',
          decidedBy: 0,
          reason: 'nope',
        }),
      );
      expect(error.message).toContain('The 1st PreToolUse (tool Bash) dispatch of session');
      expect(error.message).toContain('action: expected continue, got abort');
      expect(error.message).toContain('decidedBy: expected 0 (callback #1), got 1 (callback #2)');
      expect(error.message).toContain(
        'reason: expected "nope", got "危险命令被阻止: rm -rf /tmp/x"',
      );
    });

    it('assertDecision: no such dispatch', async () => {
      const missing = await rejection(
        assertDecision(env, session, { event: HookEvent.PreToolUse, action: 'abort', nth: 1 }),
      );
      expect(missing.message).toContain('Expected a 2nd PreToolUse dispatch in session');
      expect(missing.message).toContain('but there is 1');
      const otherTool = await rejection(
        assertDecision(env, session, {
          event: HookEvent.PreToolUse,
          toolName: 'Read',
          action: 'abort',
        }),
      );
      expect(otherTool.message).toContain('Expected a 1st PreToolUse (tool Read) dispatch');
    });

    it('assertSessionStartEndOnce: a session not closed', async () => {
      const open = await env.createSession();
      const error = await rejection(assertSessionStartEndOnce(env, open));
      expect(error.message).toContain(
        `Expected SessionStart and SessionEnd once each in session ${open.id}, got SessionStart 1 time and SessionEnd 0 times`,
      );
      expect(error.message).toContain('was the session closed');
      await open.close();
      await assertSessionStartEndOnce(env, open);
    });

    it('every assertion: a session this env did not create', async () => {
      const stranger = 'not-from-this-env';
      for (const attempt of [
        assertDispatched(env, stranger, HookEvent.PreToolUse, 1),
        assertDispatchOrder(env, stranger, []),
        assertDecision(env, stranger, { event: HookEvent.PreToolUse, action: 'abort' }),
        assertToolNeverRan(env, stranger, 'Bash'),
        assertSessionStartEndOnce(env, stranger),
      ]) {
        const error = await rejection(attempt);
        expect(error.message).toContain(
          'Session "not-from-this-env" was not created by this HookTestEnv',
        );
      }
    });
  });

  it('assertToolNeverRan fails, naming the history event, when the tool ran', async () => {
    const ranEnv = await createHookTestEnv({
      agent: {
        model: scriptedModel([toolCall('Bash', { command: 'echo hi' }), 'done']),
        workspaceRoots: [workspace],
        advanced: { permission: 'bypass-permissions', hooks: { PreToolUse: [blockDangerous] } },
      },
    });
    try {
      const ran = await ranEnv.createSession();
      await ran.send('say hi');
      const error = await rejection(assertToolNeverRan(ranEnv, ran, 'Bash'));
      expect(error.message).toMatch(
        new RegExp(
          `Expected tool Bash never to run in session ${ran.id}, but executeTool was scheduled for it 1 time:\\n  history event \\d+: input \\{"command":"echo hi"\\}`,
        ),
      );
      await assertToolNeverRan(ranEnv, ran, 'Write');
      await ran.close();
    } finally {
      await ranEnv.teardown();
    }
  });

  it('reports a nondeterministic replay in hook terms', async () => {
    const history = historyFromJSON(JSON.parse(historyToJSON(await env.history(session))));
    const dispatch = (await env.timeline(session)).dispatches.find((d) => d.event === 'PreToolUse');
    const scheduled = history.events?.find(
      (e) => Number(String(e.eventId)) === dispatch?.scheduledEventId,
    )?.activityTaskScheduledEventAttributes;
    expect(scheduled?.activityType?.name).toBe('dispatchHook');
    scheduled!.activityType = { name: 'renamedDispatch' };
    const error = await rejection(
      replaySessionHistories([{ sessionId: session.id, workflowId: session.workflowId, history }]),
    );
    expect(error.message).toContain(`session ${session.id} (workflow ${session.workflowId})`);
    expect(error.message).toContain(
      `nondeterministic replay at history event ${dispatch?.scheduledEventId} ` +
        `(recorded: the PreToolUse hook dispatch #1, tool Bash, as activity 'renamedDispatch')`,
    );
  });
});

describe('HookTestEnv teardown', () => {
  /** A running-server env with one closed and one open session. */
  async function envWithTwoSessions() {
    const env = await createHookTestEnv({
      agent: agentOptions(),
      address: process.env.TEMPORAL_ADDRESS,
    });
    const closed = await env.createSession();
    await closed.send('clean up /tmp/x');
    await closed.close();
    const open = await env.createSession();
    expect(env.sessions.map((s) => s.id)).toEqual([closed.id, open.id]);
    return { env, closed, open };
  }

  it('replays every session, open and closed: against workflow code that does not match them, it fails naming each', async () => {
    const { env, closed, open } = await envWithTwoSessions();
    const error = await withOtherWorkflowCode(() => rejection(env.teardown()));
    expect(error.message).toContain('HookTestEnv teardown failed:');
    expect(error.message).toContain(
      '2 session(s) did not replay against the current workflow code',
    );
    for (const session of [closed, open]) {
      expect(error.message).toContain(
        `- session ${session.id} (workflow ${session.workflowId}): nondeterministic replay`,
      );
    }
    // It stopped everything all the same.
    await expect(env.createSession()).rejects.toThrow('HookTestEnv used after teardown');
  });

  it('resolves when every session replays clean on a running server, then refuses to be used', async () => {
    const { env, closed } = await envWithTwoSessions();
    const teardown = env.teardown();
    expect(env.teardown()).toBe(teardown);
    await teardown;

    await expect(env.createSession()).rejects.toThrow('HookTestEnv used after teardown');
    await expect(env.timeline(closed)).rejects.toThrow('HookTestEnv used after teardown');
    await expect(assertDispatched(env, closed, HookEvent.SessionStart, 1)).rejects.toThrow(
      'HookTestEnv used after teardown',
    );
    expect(() => env.client).toThrow('HookTestEnv used after teardown');
  });
});

describe('HookTestEnv servers', () => {
  it("server: 'dev' starts a dev server of its own, restartServer keeps the session, teardown stops it", async () => {
    const turns = [toolCall('Bash', { command: 'rm -rf /tmp/x' }), 'blocked'];
    const env = await createHookTestEnv({
      agent: { ...agentOptions(), model: scriptedModel([...turns, ...turns]) },
      server: 'dev',
    });
    const server = env.embeddedServer;
    expect(env.server).toBe('dev');
    expect(server).toBeDefined();
    expect(env.address).toBe(server!.address);
    expect(env.address).not.toBe(process.env.TEMPORAL_ADDRESS);
    const session = await env.createSession();
    await session.send('clean up /tmp/x');
    await env.restartServer();
    expect(env.embeddedServer?.pid).not.toBe(server!.pid);
    expect((await session.send('clean up /tmp/x')).toolCalls.map((c) => c.status)).toEqual([
      'aborted',
    ]);
    await session.close();
    await assertSessionStartEndOnce(env, session);
    await assertDispatched(env, session, HookEvent.PreToolUse, 2);
    const pid = env.embeddedServer!.pid;
    await env.teardown();
    if (pid > 0) expect(() => process.kill(pid, 0)).toThrow();
  });

  it('teardown with a send still waiting ends that send with a clear error', async () => {
    const env = await createHookTestEnv({
      agent: {
        model: scriptedModel([toolCall('Write', { file_path: 'a.txt', content: 'x' }), 'done']),
        workspaceRoots: [workspace],
        advanced: { permission: async () => 'ask' as const },
      },
    });
    const session = await env.createSession();
    const reply = session.send('write it').then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 20_000, 'the ask');
    await env.teardown();
    expect(await reply).toBe(
      `The client of session ${session.id} was closed while its send call was in flight`,
    );
  });

  it('refuses a restart it cannot do, a server with an address, and a duration that does not parse', async () => {
    const error = await rejection(
      createHookTestEnv({ agent: agentOptions(), server: 'dev', address: '127.0.0.1:1' }),
    );
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(error.message).toContain("server 'dev' starts a server of its own");
    await expect(
      createHookTestEnv({ agent: agentOptions(), server: 'docker' as 'dev' }),
    ).rejects.toThrow(`server must be 'time-skipping' or 'dev', got "docker"`);

    const env = await createHookTestEnv({ agent: agentOptions() });
    try {
      await expect(env.restartServer()).rejects.toThrow(
        'the time-skipping test server keeps its state in memory only',
      );
      await expect(env.sleep('ten minutes')).rejects.toThrow();
    } finally {
      await env.teardown();
    }
    const existing = await createHookTestEnv({
      agent: agentOptions(),
      address: process.env.TEMPORAL_ADDRESS,
    });
    try {
      expect(existing.server).toBe('existing');
      await expect(existing.restartServer()).rejects.toThrow('uses a server it did not start');
    } finally {
      await existing.teardown();
    }
  });
});

async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error as Error & Record<string, unknown>;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error('expected a rejection, but the promise resolved');
}
