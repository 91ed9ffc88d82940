/** Regression: toolTimeoutMs for Bash and custom tools; abort in the middle of a multi-call step. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, builtinTools, type Agent } from '../../../src/index.js';
import {
  scriptedModel,
  toolCall,
  toolCalls,
  type ScriptedTurn,
} from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { isAlive } from '../../unit/tools/fixtures.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const TOOL_TIMEOUT_MS = 1500;
const workspace = tempDir('edge-to');
const scripts = new Map<string, ScriptedTurn[]>();
const model = scriptedModel((request) => {
  const last = request.messages.filter((m) => m.role === 'user').at(-1);
  const key = last && last.role === 'user' && typeof last.content === 'string' ? last.content : '';
  return scripts.get(key)?.[request.step] ?? 'done';
});
const script = (n: string, t: ScriptedTurn[]) => (scripts.set(n, t), n);

/** What the Stubborn tool saw of its signal. */
const signalLog: Array<{
  startedAt: number;
  firedAfterMs?: number;
  reasonName?: unknown;
  finished: boolean;
}> = [];
const Stubborn = defineTool({
  name: 'Stubborn',
  description: 'ignores its signal',
  kind: 'readonly',
  inputSchema: z.object({ maxMs: z.number() }),
  execute: async ({ maxMs }, ctx) => {
    const started = Date.now();
    const entry: (typeof signalLog)[number] = { startedAt: started, finished: false };
    signalLog.push(entry);
    ctx.signal.addEventListener('abort', () => {
      entry.firedAfterMs = Date.now() - started;
      entry.reasonName = (ctx.signal.reason as { name?: unknown } | undefined)?.name;
    });
    // Keeps running whatever its signal says.
    await new Promise<void>((res) => setTimeout(res, maxMs));
    entry.finished = true;
    return `waited ${Date.now() - started}`;
  },
});

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model,
    workspaceRoots: [workspace],
    tools: [...builtinTools(), Stubborn],
    advanced: {
      permission: 'bypass-permissions',
      toolTimeoutMs: TOOL_TIMEOUT_MS,
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-to') },
    },
  });
});
afterAll(() => agent?.shutdown());

const toolResults = async (session: Awaited<ReturnType<Agent['createSession']>>) =>
  (await session.conversation()).flatMap((m) => (m.role === 'tool' ? m.results : []));

describe('toolTimeoutMs', () => {
  it('Bash past toolTimeoutMs gets a timed-out error result and its process group is killed', async () => {
    const session = await agent.createSession();
    const resp = await session.send(
      script('bash-to', [
        toolCall('Bash', {
          command: 'sleep 300 & echo $! > p1.txt; sleep 300 & echo $! >> p1.txt; wait',
        }),
        'ok',
      ]),
    );
    const res = await toolResults(session);
    await session.close();
    const pids = readFileSync(join(workspace, 'p1.txt'), 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every((p) => !isAlive(p)), 5000, 'the Bash process group to die');
    expect(resp.status).toBe('completed');
    expect(res[0]?.status).toBe('error');
    expect(res[0]?.model).toMatch(/timed out/);
  }, 60_000);

  it('a custom tool ignoring its signal: the signal aborts with a TimeoutError at the budget and the call times out without waiting for the tool', async () => {
    signalLog.length = 0;
    const session = await agent.createSession();
    const resp = await session.send(
      script('stubborn', [toolCall('Stubborn', { maxMs: 45_000 }), 'ok']),
    );
    // The send is answered while the tool still runs (it would run 45 s).
    const finishedWhenAnswered = signalLog[0]?.finished;
    const res = await toolResults(session);
    await session.close();
    expect(signalLog).toHaveLength(1);
    const [entry] = signalLog;
    expect(finishedWhenAnswered).toBe(false);
    expect(entry?.reasonName).toBe('TimeoutError');
    // Not before the budget (the budget starts just before the tool does).
    expect(entry?.firedAfterMs).toBeGreaterThanOrEqual(TOOL_TIMEOUT_MS - 100);
    expect(resp.toolCalls.map((c) => c.status)).toEqual(['error']);
    expect(res[0]?.status).toBe('error');
    expect(res[0]?.model).toMatch(new RegExp(`timed out after ${TOOL_TIMEOUT_MS} ms`));
  }, 60_000);
});

describe('abort', () => {
  it('abort() during the second Bash of a step: every call gets one result, the third never runs', async () => {
    const session = await agent.createSession();
    const p = session.send(
      script('multi-abort', [
        toolCalls(
          ['Bash', { command: 'echo first' }],
          ['Bash', { command: 'echo $$ > p2.txt; sleep 1; sleep 300', timeout_ms: 100000 }],
          ['Bash', { command: 'echo third > third.txt' }],
        ),
        'ok',
      ]),
    );
    await waitFor(() => existsSync(join(workspace, 'p2.txt')), 10_000, 'bash 2');
    await session.abort();
    const resp = await p;
    expect(resp.status).toBe('aborted');
    const conv = await session.conversation();
    const assistant = conv.find((m) => m.role === 'assistant');
    const tool = conv.find((m) => m.role === 'tool');
    expect(tool?.role === 'tool' ? tool.results.map((r) => r.toolUseId) : []).toEqual(
      assistant?.role === 'assistant' ? assistant.toolCalls.map((c) => c.toolUseId) : ['x'],
    );
    expect(tool?.role === 'tool' ? tool.results.map((r) => r.status) : []).toEqual([
      'success',
      'error',
      'error',
    ]);
    expect(existsSync(join(workspace, 'third.txt'))).toBe(false);
    const pid = Number(readFileSync(join(workspace, 'p2.txt'), 'utf8').trim());
    await waitFor(() => !isAlive(pid), 5000, 'the aborted Bash to die');
    expect((await session.send(script('multi-abort-after', ['fresh']))).text()).toBe('fresh');
    await session.close();
  }, 60_000);
});
