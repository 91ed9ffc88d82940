/**
 * The hook test env on its default server, Temporal's time-skipping test server: a
 * ten-minute hook budget, a ten-minute tool budget, a one-day permission deadline and a
 * one-day idle timeout pass at once with `env.sleep()`, on the production code paths.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookEvent, type HookCallback } from '../../../src/index.js';
import {
  assertDecision,
  assertSessionStartEndOnce,
  createHookTestEnv,
  scriptedModel,
  toolCall,
  type HookTestEnv,
} from '../../../src/testing/index.js';
import type { Session } from '../../../src/client/session.js';
import { waitFor } from '../../helpers/common.js';
import { isAlive } from '../../unit/tools/fixtures.js';

const TEN_MINUTES = 600_000;
const ONE_DAY = 86_400_000;

let workspace: string;
let env: HookTestEnv;
let ends: string[] = [];

/** The tool result the model saw last, in the session's conversation. */
async function modelSawOf(session: Session): Promise<string | undefined> {
  const conversation = await session.conversation();
  return conversation.flatMap((m) => (m.role === 'tool' ? m.results : [])).at(-1)?.model;
}

/** Hangs on `hang` commands until its signal fires, as a callback stuck on a backend would. */
const hangOnRequest: HookCallback = async (input) => {
  if (!String(input.toolInput?.command ?? '').includes('hang')) return { action: 'continue' };
  await new Promise((resolve) => input.abortSignal?.addEventListener('abort', resolve));
  return { action: 'continue' };
};

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'durable-agent-hook-time-'));
  env = await createHookTestEnv({
    agent: {
      model: scriptedModel((request) => {
        if (request.messages.at(-1)?.role === 'tool') return 'done';
        const prompt = typeof request.prompt === 'string' ? request.prompt : '';
        if (prompt.startsWith('write'))
          return toolCall('Write', { file_path: 'a.txt', content: 'x' });
        if (prompt.startsWith('run ')) return toolCall('Bash', { command: prompt.slice(4) });
        return 'ok';
      }),
      workspaceRoots: [workspace],
      advanced: {
        hookTimeoutMs: TEN_MINUTES,
        toolTimeoutMs: TEN_MINUTES,
        permissionTimeoutMs: ONE_DAY,
        permission: async (request) => (request.toolName === 'Write' ? 'ask' : 'allow'),
        hooks: {
          [HookEvent.SessionStart]: [async () => ({ action: 'continue' })],
          [HookEvent.PreToolUse]: [hangOnRequest],
          [HookEvent.SessionEnd]: [
            async (input) => {
              ends.push(String(input.reason));
              return { action: 'continue' };
            },
          ],
        },
      },
    },
  });
});
afterAll(async () => {
  await env?.teardown();
  rmSync(workspace, { recursive: true, force: true });
});

describe('createHookTestEnv on the time-skipping server', () => {
  it('runs on its own time-skipping test server by default', async () => {
    expect(env.server).toBe('time-skipping');
    expect(env.embeddedServer).toBeUndefined();
    expect(env.address).toMatch(/:\d+$/);
  });

  it('lets a hung PreToolUse callback pass its ten-minute budget at once: HOOK_TIMEOUT, the tool never runs', async () => {
    const session = await env.createSession();
    const before = await env.currentTimeMs();
    const dispatched = env.whenDispatched(HookEvent.PreToolUse, { toolName: 'Bash' });
    const reply = session.send('run echo hang > hung.txt');
    await dispatched;
    await env.sleep('10 minutes');
    const response = await reply;

    expect(response.toolCalls.map((c) => c.status)).toEqual(['error']);
    expect(await modelSawOf(session)).toMatch(/PreToolUse hook failed: .*600000ms/);
    expect(existsSync(join(workspace, 'hung.txt'))).toBe(false);
    await assertDecision(env, session, {
      event: HookEvent.PreToolUse,
      toolName: 'Bash',
      action: 'timeout',
      reason: 'Hook PreToolUse exceeded 600000ms',
    });
    // The budget clock and the server's clock both moved ten minutes.
    const entry = (await session.timeline()).find((e) => e.event === HookEvent.PreToolUse);
    expect(entry?.outcome).toBe('timeout');
    expect(entry?.durationMs).toBeGreaterThanOrEqual(TEN_MINUTES);
    expect((await env.currentTimeMs()) - before).toBeGreaterThanOrEqual(TEN_MINUTES);
    await session.close();
  });

  it('makes exceedBudgetAt overrun a ten-minute budget without waiting for it', async () => {
    const session = await env.createSession();
    const fault = env.exceedBudgetAt(HookEvent.PreToolUse, { toolName: 'Bash', overrunMs: 10 });
    const response = await session.send('run echo overrun > overrun.txt');
    expect(fault.hasFired).toBe(true);
    expect(response.toolCalls[0]?.status).toBe('error');
    expect(existsSync(join(workspace, 'overrun.txt'))).toBe(false);
    await assertDecision(env, session, {
      event: HookEvent.PreToolUse,
      action: 'timeout',
      reason: 'Hook PreToolUse exceeded 600000ms',
    });
    await session.close();
  });

  it('denies an ask nobody answers once its one-day deadline passes', async () => {
    const session = await env.createSession();
    const reply = session.send('write a file');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 20_000, 'the ask');
    await env.sleep('1 day');
    const response = await reply;
    expect(response.toolCalls.map((c) => c.status)).toEqual(['denied']);
    expect(await modelSawOf(session)).toBe(`No decision on Write within ${ONE_DAY} ms: denied`);
    expect(existsSync(join(workspace, 'a.txt'))).toBe(false);
    await session.close();
  });

  it("ends a tool that runs past its ten-minute budget (Bash's process group is killed)", async () => {
    const session = await env.createSession();
    const pidFile = join(workspace, 'pids.txt');
    // Two children in the command's group, then bash itself; the file appears whole.
    const reply = session.send(
      'run sleep 600 & echo $! > pids.tmp; sleep 600 & echo $! >> pids.tmp; echo $$ >> pids.tmp; ' +
        'mv pids.tmp pids.txt; wait; touch finished',
    );
    await waitFor(() => existsSync(pidFile), 20_000, 'the command to start');
    const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(3);
    expect(pids.every((pid) => isAlive(pid))).toBe(true);
    await env.sleep('10 minutes');
    const response = await reply;
    expect(response.toolCalls[0]?.status).toBe('error');
    expect(await modelSawOf(session)).toMatch(/timed out|exceeded/);
    await waitFor(
      () => pids.every((pid) => !isAlive(pid)),
      10_000,
      'the Bash process group (bash and both children) to die',
    );
    expect(existsSync(join(workspace, 'finished'))).toBe(false);
    await session.close();
  });

  it('runs SessionEnd once, with idle_timeout, when a one-day idle timeout passes', async () => {
    ends = [];
    const session = await env.createSession({ idleTimeoutMs: ONE_DAY });
    expect((await session.send('hello')).text()).toBe('ok');
    await env.sleep('1 day');
    await waitFor(async () => (await session.describe()).status === 'closed', 20_000, 'the close');
    expect(ends).toEqual(['idle_timeout']);
    await assertSessionStartEndOnce(env, session);
  });
});
