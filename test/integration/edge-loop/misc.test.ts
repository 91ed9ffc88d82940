/** Regression: repeated approvals, a PreToolUse timeout's fail-closed window, the seed snippets. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  HookEvent,
  builtinTools,
  type Agent,
} from '../../../src/index.js';
import { scriptedModel, toolCall, toolCalls } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { Updates } from '../../../src/common/messages.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const agents: Agent[] = [];
afterAll(async () => {
  for (const a of agents) await a.shutdown();
});
const executed: string[] = [];
beforeEach(() => {
  executed.length = 0;
});
const Echo = defineTool({
  name: 'Echo',
  description: 'echo',
  kind: 'write',
  inputSchema: z.object({ word: z.string() }),
  execute: async ({ word }) => (executed.push(word), `echo ${word}`),
});

async function askingAgent(permissionTimeoutMs?: number): Promise<Agent> {
  const agent = await createAgent({
    model: scriptedModel([toolCall('Echo', { word: 'orig' }), 'done']),
    tools: [Echo],
    advanced: {
      permission: () => 'ask',
      ...(permissionTimeoutMs !== undefined ? { permissionTimeoutMs } : {}),
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-misc') },
    },
  });
  agents.push(agent);
  return agent;
}

describe('answering a permission request twice', () => {
  it('a second approve() with a different updatedInput rejects with PERMISSION_REQUEST_NOT_FOUND', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    await session.approve(r!.requestId, { updatedInput: { word: 'A' } });
    await expect(
      session.approve(r!.requestId, { updatedInput: { word: 'B' } }),
    ).rejects.toMatchObject({ code: 'PERMISSION_REQUEST_NOT_FOUND' });
    await expect(session.deny(r!.requestId)).rejects.toMatchObject({
      code: 'PERMISSION_REQUEST_NOT_FOUND',
    });
    const resp = await p;
    await session.close();
    // The first answer stands.
    expect(resp.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'A' }],
    ]);
    expect(executed).toEqual(['A']);
  });

  it('an answer after the request ended says who decided it and when', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    await session.approve(r!.requestId);
    await p;
    const late = session.deny(r!.requestId);
    await expect(late).rejects.toMatchObject({ code: 'PERMISSION_REQUEST_NOT_FOUND' });
    await expect(late).rejects.toThrow(
      new RegExp(
        `Permission request '${r!.requestId}' \\(Echo\\) in session '${session.id}' was already ` +
          `approved by \\S+ at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ`,
      ),
    );
    await session.close();
  });

  it('an answer after the deadline says the request expired and was denied', async () => {
    const session = await (await askingAgent(1_000)).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    const response = await p;
    expect(response.toolCalls.map((c) => c.status)).toEqual(['denied']);
    await expect(session.approve(r!.requestId)).rejects.toThrow(
      /\(Echo\) in session '[^']+' expired at its deadline \(\d{4}-[^)]+Z\) and was denied/,
    );
    await session.close();
  });

  it('an updatedInput that is not a plain object is refused, by the client and by the workflow; the request still waits', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    for (const bad of ['rm -rf /', [1, 2], 42, null]) {
      await expect(session.approve(r!.requestId, { updatedInput: bad as never })).rejects.toThrow(
        /updatedInput must be a plain object/,
      );
    }
    // Past the client's check (another client, an old one): the workflow's validator refuses it.
    const raw = await rawClient();
    try {
      await expect(
        raw.workflow.getHandle(session.workflowId).executeUpdate(Updates.decidePermission, {
          args: [
            {
              requestId: r!.requestId,
              answer: { behavior: 'allow', updatedInput: 'rm -rf /' },
            } as never,
          ],
        }),
      ).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/updatedInput must be a plain object/) },
      });
    } finally {
      await raw.connection.close();
    }
    expect((await session.pendingPermissions()).map((x) => x.requestId)).toEqual([r!.requestId]);
    await session.approve(r!.requestId, { updatedInput: { word: 'A' } });
    const resp = await p;
    await session.close();
    expect(resp.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'A' }],
    ]);
  });

  it('approve() twice with the same updatedInput resolves both times; the tool runs once', async () => {
    const session = await (await askingAgent()).createSession();
    const p = session.send('go');
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    await session.approve(r!.requestId, { updatedInput: { word: 'A' } });
    await expect(
      session.approve(r!.requestId, { updatedInput: { word: 'A' } }),
    ).resolves.toBeUndefined();
    const resp = await p;
    await session.close();
    expect(resp.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'A' }],
    ]);
    expect(executed).toEqual(['A']);
  });
});

describe('PreToolUse past hookTimeoutMs', () => {
  it('fails its call and the rest of the step closed until the callback settles; then tools run again', async () => {
    let calls = 0;
    let release!: () => void;
    const released = new Promise<void>((res) => (release = res));
    const agent = await createAgent({
      model: scriptedModel([
        toolCalls(
          ['Echo', { word: 'one' }],
          ['Echo', { word: 'two' }],
          ['Echo', { word: 'three' }],
        ),
        'after',
        toolCall('Echo', { word: 'four' }),
        'second prompt',
      ]),
      tools: [Echo],
      advanced: {
        hookTimeoutMs: 300,
        permission: 'bypass-permissions',
        hooks: {
          [HookEvent.PreToolUse]: [
            async () => {
              // The first callback ignores its signal and outlives its budget until released.
              if (calls++ === 0) await released;
              return { action: 'continue' };
            },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-misc') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    try {
      const resp = await session.send('go');
      expect(resp.status).toBe('completed');
      expect(resp.text()).toBe('after');
      const results = (await session.conversation()).flatMap((m) =>
        m.role === 'tool' ? m.results : [],
      );
      expect(results.map((x) => [x.status, x.model])).toEqual([
        ['error', 'PreToolUse hook failed: Hook PreToolUse exceeded 300ms'],
        ['error', expect.stringMatching(/still cleaning up after being cancelled/)],
        ['error', expect.stringMatching(/still cleaning up after being cancelled/)],
      ]);
      expect(executed).toEqual([]);
      // While the callback is still running the session stays fail-closed: close() refuses.
      await expect(session.close()).rejects.toMatchObject({ code: 'HOOK_CLEANUP_PENDING' });
    } finally {
      release();
    }
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      10_000,
      'the late callback to settle',
    );
    const again = await session.send('again');
    expect(again.text()).toBe('second prompt');
    expect(again.toolCalls.map((c) => c.status)).toEqual(['success']);
    expect(executed).toEqual(['four']);
    expect((await session.close()).closedNow).toBe(true);
  }, 30_000);
});

describe('the seed snippets at agent level', () => {
  it('redact Read output, block a dangerous Bash, prefix an asked Write, log failures with an Error', async () => {
    const ws = tempDir('edge-seed');
    writeFileSync(join(ws, '.env'), 'SECRET_KEY=abc123\n');
    const dangerous = [/rm\s+-rf/, /mkfs/, /dd\s+if=/];
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const agent = await createAgent({
      model: scriptedModel([
        toolCalls(
          ['Read', { file_path: '.env' }],
          ['Bash', { command: 'rm -rf /tmp/nothing-here' }],
          ['Write', { file_path: 'a.ts', content: 'x' }],
          ['Read', { file_path: 'missing' }],
        ),
        'done',
      ]),
      workspaceRoots: [ws],
      tools: builtinTools(),
      advanced: {
        hooks: {
          [HookEvent.PreToolUse]: [
            async () => {
              return { action: 'continue' };
            },
            async (input) => {
              if (input.toolName !== 'Write') {
                return { action: 'continue' };
              }
              return {
                action: 'continue',
                modifiedInput: {
                  ...input.toolInput,
                  content: `// Generated\n${String(input.toolInput?.content ?? '')}`,
                },
              };
            },
            async (input) => {
              if (input.toolName !== 'Bash') {
                return { action: 'continue' };
              }
              const command = String(input.toolInput?.command ?? '');
              if (dangerous.some((pattern) => pattern.test(command))) {
                return {
                  action: 'abort',
                  reason: `危险命令被阻止: ${command}`,
                };
              }
              return { action: 'continue' };
            },
          ],
          [HookEvent.PostToolUseFailure]: [
            async (input) => {
              console.error('[工具失败]', input.toolName, input.error);
              return { action: 'continue' };
            },
          ],
          [HookEvent.PostToolUse]: [
            async (input) => {
              if (input.toolName !== 'Read') {
                return { action: 'continue' };
              }
              return {
                action: 'continue',
                modifiedOutput: String(input.toolOutput).replace(
                  /SECRET_KEY=\w+/g,
                  'SECRET_KEY=***',
                ),
              };
            },
          ],
        },
        permission: async (request) => {
          if (request.kind === 'readonly') {
            return 'allow';
          }
          return 'ask';
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-seed') },
      },
    });
    agents.push(agent);
    try {
      const session = await agent.createSession();
      const p = session.send('go');
      await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
      const [r] = await session.pendingPermissions();
      // Only the Write asks, and it asks about the input PreToolUse prefixed.
      expect(r).toMatchObject({
        toolName: 'Write',
        input: { file_path: 'a.ts', content: '// Generated\nx' },
      });
      await session.approve(r!.requestId);
      const resp = await p;
      const results = (await session.conversation()).flatMap((m) =>
        m.role === 'tool' ? m.results : [],
      );
      await session.close();
      expect(resp.status).toBe('completed');
      expect(results.map((x) => [x.toolName, x.status, x.model])).toEqual([
        ['Read', 'success', 'SECRET_KEY=***\n'],
        ['Bash', 'error', '危险命令被阻止: rm -rf /tmp/nothing-here'],
        ['Write', 'success', expect.stringMatching(/^Wrote 14 bytes to /)],
        ['Read', 'error', "Read failed: No such file or directory: 'missing'"],
      ]);
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('// Generated\nx');
      const failureLogs = consoleError.mock.calls.filter((call) => call[0] === '[工具失败]');
      expect(failureLogs).toHaveLength(1);
      expect(failureLogs[0]?.[1]).toBe('Read');
      expect(failureLogs[0]?.[2]).toBeInstanceOf(Error);
    } finally {
      consoleError.mockRestore();
    }
  }, 30_000);
});

describe('a malformed prompt', () => {
  it('send() refuses a prompt that is not a string or parts at once, and the session goes on', async () => {
    const agent = await createAgent({
      model: scriptedModel((request) => `reply ${request.modelStepIndex}`),
      advanced: {
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-prompt') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    for (const [bad, why] of [
      [
        undefined,
        /^send\(\): prompt must be a string or an array of text and image parts, got undefined$/,
      ],
      [42, /got number 42$/],
      [{ text: 'hi' }, /prompt must be a string or an array/],
      [[{ type: 'text', text: 7 }], /^send\(\): prompt\[0\]\.text must be a string, got number 7$/],
      [[{ type: 'audio' }], /prompt\[0\]\.type must be 'text' or 'image', got 'audio'/],
    ] as const) {
      await expect(session.send(bad as never)).rejects.toThrow(why);
    }
    // Past the client's check (another client, an old one): the workflow's validator refuses it.
    const raw = await rawClient();
    try {
      await expect(
        raw.workflow
          .getHandle(session.workflowId)
          .executeUpdate(Updates.send, { args: [{ requestId: 'raw-bad', prompt: 42 } as never] }),
      ).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/^send: prompt must be a string/) },
      });
    } finally {
      await raw.connection.close();
    }
    // Nothing was recorded: the session answers the next prompt as its first.
    expect((await session.send('hello')).text()).toBe('reply 0');
    await session.close();
  });

  it("a UserPromptSubmit callback's userPrompt of another type is a malformed output, not ignored", async () => {
    const seen: unknown[] = [];
    const agent = await createAgent({
      model: scriptedModel((request) => (seen.push(request.messages.at(-1)), 'ok')),
      advanced: {
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async () => ({ action: 'continue' as const, modifiedInput: { userPrompt: 42 } }),
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-prompt-hook') },
      },
    });
    agents.push(agent);
    const session = await agent.createSession();
    await expect(session.send('original prompt')).rejects.toMatchObject({
      code: 'HOOK_OUTPUT_INVALID',
      message: expect.stringContaining(
        'modifiedInput.userPrompt must be a string (the new prompt text), got number 42',
      ),
    });
    expect(seen).toEqual([]);
    await session.close();
  });
});
