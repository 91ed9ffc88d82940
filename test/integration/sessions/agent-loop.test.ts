/**
 * The agent loop on a real server: tools as activities, the seed's tool snippets, permission
 * and durable approvals, abort, and multi-call steps. Real files in a temporary workspace,
 * real child processes for Bash.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  HookEvent,
  builtinTools,
  type Agent,
  type HookInput,
  type PermissionHandler,
  type ToolResult,
} from '../../../src/index.js';
import {
  scriptedModel,
  toolCall,
  toolCalls,
  type ScriptedTurn,
} from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('ws');
const outside = tempDir('outside');

// Each prompt names its script; step n of the send gets turn n.
const scripts = new Map<string, ScriptedTurn[]>();
const model = scriptedModel((request) => {
  const last = request.messages.filter((m) => m.role === 'user').at(-1);
  const key = last && last.role === 'user' && typeof last.content === 'string' ? last.content : '';
  const script = scripts.get(key);
  if (!script) return `no script for '${key}'`;
  return script[request.step] ?? 'done';
});

let permissionImpl: PermissionHandler = () => 'allow';
const echoTool = defineTool({
  name: 'Echo',
  description: 'Echo a word back',
  kind: 'readonly',
  inputSchema: z.object({ word: z.string().min(1) }),
  execute: async ({ word }) => `echo ${word}`,
});

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model,
    workspaceRoots: [workspace],
    tools: [...builtinTools(), echoTool],
    advanced: {
      permission: (request) => permissionImpl(request),
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('loop') },
    },
  });
});
afterAll(() => agent?.shutdown());

function script(name: string, turns: ScriptedTurn[]): string {
  scripts.set(name, turns);
  return name;
}

/** The tool results the model saw, in order. */
async function toolResultsSeen(session: Awaited<ReturnType<Agent['createSession']>>) {
  const conversation = await session.conversation();
  return conversation.flatMap((m) => (m.role === 'tool' ? m.results : []));
}

describe("the seed page's tool snippets", () => {
  it('audits every tool call on PreToolUse with its name and input', async () => {
    writeFileSync(join(workspace, 'notes.txt'), 'hello\n');
    const audit: Array<[unknown, unknown]> = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            audit.push([input.toolName, input.toolInput]);
            return { action: 'continue' };
          },
        ],
      },
    });
    const name = script('audit', [toolCall('Read', { file_path: 'notes.txt' }), 'read it']);
    const response = await session.send(name);
    expect(response.text()).toBe('read it');
    expect(audit).toEqual([['Read', { file_path: 'notes.txt' }]]);
    expect(response.toolCalls.map((c) => [c.toolName, c.status])).toEqual([['Read', 'success']]);
    await session.close();
  });

  it('stamps the content of every Write', async () => {
    permissionImpl = () => 'allow';
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            if (input.toolName !== 'Write') return { action: 'continue' };
            return {
              action: 'continue',
              modifiedInput: {
                ...input.toolInput,
                content: `// Generated\n${String(input.toolInput?.content ?? '')}`,
              },
            };
          },
        ],
      },
    });
    const name = script('stamp', [
      toolCall('Write', { file_path: 'out/gen.ts', content: 'export {};\n' }),
      'written',
    ]);
    await session.send(name);
    expect(readFileSync(join(workspace, 'out', 'gen.ts'), 'utf8')).toBe(
      '// Generated\nexport {};\n',
    );
    await session.close();
  });

  it('blocks dangerous Bash commands: the tool never runs and the model gets the reason as an error', async () => {
    const canary = join(workspace, 'canary');
    mkdirSync(canary, { recursive: true });
    writeFileSync(join(canary, 'keep.txt'), 'still here');
    const dangerous = [/rm\s+-rf/, /mkfs/, /dd\s+if=/];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            if (input.toolName !== 'Bash') return { action: 'continue' };
            const command = String(input.toolInput?.command ?? '');
            if (dangerous.some((pattern) => pattern.test(command))) {
              return { action: 'abort', reason: `危险命令被阻止: ${command}` };
            }
            return { action: 'continue' };
          },
        ],
      },
    });
    const name = script('danger', [
      toolCalls(
        ['Bash', { command: 'rm -rf canary' }],
        ['Bash', { command: 'dd if=/dev/zero of=x count=1' }],
      ),
      'blocked',
    ]);
    const response = await session.send(name);
    expect(existsSync(join(canary, 'keep.txt'))).toBe(true);
    expect(existsSync(join(workspace, 'x'))).toBe(false);
    expect(response.toolCalls.map((c) => c.status)).toEqual(['aborted', 'aborted']);
    const seen = await toolResultsSeen(session);
    expect(seen.map((r) => [r.status, r.model])).toEqual([
      ['error', '危险命令被阻止: rm -rf canary'],
      ['error', '危险命令被阻止: dd if=/dev/zero of=x count=1'],
    ]);
    expect((await session.send(script('after-danger', ['fine']))).text()).toBe('fine');
    await session.close();
  });

  it("toolCalls[i].reason says why a call was skipped, blocked or denied: the hook's reason, the denial's message, else the default", async () => {
    permissionImpl = (request) =>
      request.input.word === 'deny'
        ? { behavior: 'deny', message: 'no echoes of that' }
        : request.input.word === 'deny-plain'
          ? 'deny'
          : 'allow';
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            const word = input.toolInput?.word;
            if (word === 'skip') return { action: 'skip', reason: 'not needed' };
            if (word === 'block') return { action: 'abort', reason: 'not today' };
            if (word === 'block-plain') return { action: 'abort' };
            return { action: 'continue' };
          },
        ],
      },
    });
    const response = await session.send(
      script('reasons', [
        toolCalls(
          ['Echo', { word: 'skip' }],
          ['Echo', { word: 'block' }],
          ['Echo', { word: 'block-plain' }],
          ['Echo', { word: 'deny' }],
          ['Echo', { word: 'deny-plain' }],
          ['Echo', { word: 'go' }],
        ),
        'done',
      ]),
    );
    expect(response.toolCalls.map((c) => [c.status, c.reason])).toEqual([
      ['skipped', 'not needed'],
      ['aborted', 'not today'],
      ['aborted', 'Tool Echo was blocked by a PreToolUse hook'],
      ['denied', 'no echoes of that'],
      ['denied', 'Permission to run Echo was denied'],
      ['success', undefined],
    ]);
    expect(response.toolCalls[1]?.display?.summary).toBe('Blocked Echo');
    // The reason is what the model was told.
    const seen = await toolResultsSeen(session);
    expect(seen.slice(0, 5).map((r) => r.model)).toEqual(
      response.toolCalls.slice(0, 5).map((c) => c.reason),
    );
    await session.close();
  });

  it('redacts SECRET_KEY from Read output for the model and leaves display untouched', async () => {
    writeFileSync(join(workspace, '.env'), 'SECRET_KEY=hunter2\nPORT=8080\n');
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PostToolUse]: [
          async (input) => {
            if (input.toolName !== 'Read') return { action: 'continue' };
            return {
              action: 'continue',
              modifiedOutput: String(input.toolOutput).replace(/SECRET_KEY=\w+/g, 'SECRET_KEY=***'),
            };
          },
        ],
      },
    });
    const response = await session.send(
      script('redact', [toolCall('Read', { file_path: '.env' }), 'ok']),
    );
    const seen = await toolResultsSeen(session);
    expect(seen[0]?.model).toContain('SECRET_KEY=***');
    expect(JSON.stringify(await session.conversation())).not.toContain('hunter2');
    expect(response.toolCalls[0]?.display?.summary).toMatch(/^Read .*\.env/);
    await session.close();
  });

  it('logs tool failures on PostToolUseFailure with the error and the tool output', async () => {
    const failures: HookInput[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PostToolUseFailure]: [
          async (input) => {
            failures.push(input);
            return { action: 'continue' };
          },
        ],
      },
    });
    await session.send(script('failure', [toolCall('Read', { file_path: 'missing.txt' }), 'ok']));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      toolName: 'Read',
      toolInput: { file_path: 'missing.txt' },
    });
    expect(failures[0]!.error).toBeInstanceOf(Error);
    expect(String(failures[0]!.toolOutput)).toMatch(/missing\.txt/);
    await session.close();
  });

  it('keeps the original tool error when a PostToolUseFailure hook throws', async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PostToolUseFailure]: [
          async () => {
            throw new Error('logger down');
          },
        ],
      },
    });
    await session.send(
      script('failure-throws', [toolCall('Read', { file_path: 'missing.txt' }), 'ok']),
    );
    const seen = await toolResultsSeen(session);
    expect(seen[0]?.status).toBe('error');
    expect(seen[0]?.model).toMatch(/missing\.txt/);
    expect(seen[0]?.model).not.toMatch(/logger down/);
    await session.close();
  });
});

describe('permission', () => {
  const readonlyOrAsk: PermissionHandler = async (request) =>
    request.kind === 'readonly' ? 'allow' : 'ask';

  it('allows readonly tools and asks a person otherwise; an approval with edited input runs the tool once with it', async () => {
    permissionImpl = readonlyOrAsk;
    const session = await agent.createSession();
    const pending = session.send(
      script('ask-approve', [
        toolCalls(
          ['Read', { file_path: 'notes.txt' }],
          ['Write', { file_path: 'a.txt', content: 'model' }],
        ),
        'done',
      ]),
    );
    let requests: Awaited<ReturnType<typeof session.pendingPermissions>> = [];
    await waitFor(
      async () => (requests = await session.pendingPermissions()).length === 1,
      10_000,
      'the ask',
    );
    expect(requests[0]).toMatchObject({
      toolName: 'Write',
      toolKind: 'write',
      input: { file_path: 'a.txt', content: 'model' },
    });
    expect(requests[0]!.affectedPaths).toEqual([join(workspace, 'a.txt')]);
    await session.approve(requests[0]!.requestId, {
      updatedInput: { file_path: 'a.txt', content: 'approved' },
    });
    const response = await pending;
    expect(response.toolCalls.map((c) => [c.toolName, c.status])).toEqual([
      ['Read', 'success'],
      ['Write', 'success'],
    ]);
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('approved');
    await session.close();
  });

  it('denies with the message a person gave; the tool never runs', async () => {
    permissionImpl = readonlyOrAsk;
    const session = await agent.createSession();
    const pending = session.send(
      script('ask-deny', [toolCall('Write', { file_path: 'denied.txt', content: 'x' }), 'ok']),
    );
    let requestId = '';
    await waitFor(async () => {
      const [request] = await session.pendingPermissions();
      requestId = request?.requestId ?? '';
      return requestId !== '';
    });
    await session.deny(requestId, { message: 'not today' });
    const response = await pending;
    expect(response.toolCalls[0]?.status).toBe('denied');
    expect(response.toolCalls[0]?.reason).toBe('not today');
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);
    expect((await toolResultsSeen(session))[0]?.model).toBe('not today');
    await expect(session.approve(requestId)).rejects.toMatchObject({
      code: 'PERMISSION_REQUEST_NOT_FOUND',
    });
    await session.close();
  });

  it('denies an ask nobody answered once its deadline passes', async () => {
    permissionImpl = readonlyOrAsk;
    const quick = await createAgent({
      model,
      workspaceRoots: [workspace],
      advanced: {
        permission: readonlyOrAsk,
        permissionTimeoutMs: 300,
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('deadline') },
      },
    });
    try {
      const session = await quick.createSession();
      const response = await session.send(
        script('ask-deadline', [toolCall('Write', { file_path: 'late.txt', content: 'x' }), 'ok']),
      );
      expect(response.toolCalls[0]?.status).toBe('denied');
      expect(existsSync(join(workspace, 'late.txt'))).toBe(false);
      await session.close();
    } finally {
      await quick.shutdown();
    }
  });

  it('turns a PermissionRequest skip into a deny without interrupt and abort into a deny with interrupt', async () => {
    permissionImpl = () => 'allow';
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PermissionRequest]: [
          async (input) =>
            input.toolInput?.word === 'skip'
              ? { action: 'skip', reason: 'skipped by policy' }
              : input.toolInput?.word === 'stop'
                ? { action: 'abort', reason: 'stop everything' }
                : { action: 'continue' },
        ],
      },
    });
    const response = await session.send(
      script('perm-hook', [
        toolCalls(
          ['Echo', { word: 'skip' }],
          ['Echo', { word: 'go' }],
          ['Echo', { word: 'stop' }],
          ['Echo', { word: 'never' }],
        ),
        'unreachable',
      ]),
    );
    expect(response.status).toBe('interrupted');
    expect(response.toolCalls.map((c) => [c.status, c.reason])).toEqual([
      ['denied', 'skipped by policy'],
      ['success', undefined],
      ['denied', 'stop everything'],
      ['cancelled', undefined],
    ]);
    const seen = await toolResultsSeen(session);
    expect(seen.map((r) => r.model)).toEqual([
      'skipped by policy',
      'echo go',
      'stop everything',
      expect.stringMatching(/did not run/),
    ]);
    await session.close();
  });
});

describe('the loop', () => {
  it('gives every call of one step exactly one result, in call order', async () => {
    permissionImpl = () => 'allow';
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) =>
            input.toolInput?.word === 'skip' ? { action: 'skip' } : { action: 'continue' },
        ],
      },
    });
    await session.send(
      script('many', [
        toolCalls(
          ['Echo', { word: 'a' }],
          ['Echo', { word: 'skip' }],
          ['Echo', { word: '' }],
          ['Nope', {}],
        ),
        'ok',
      ]),
    );
    const conversation = await session.conversation();
    const assistant = conversation.find((m) => m.role === 'assistant');
    const tool = conversation.find((m) => m.role === 'tool');
    expect(
      assistant && assistant.role === 'assistant'
        ? assistant.toolCalls.map((c) => c.toolUseId)
        : [],
    ).toEqual(tool && tool.role === 'tool' ? tool.results.map((r) => r.toolUseId) : ['missing']);
    const results = tool && tool.role === 'tool' ? tool.results : [];
    expect(results.map((r) => r.status)).toEqual(['success', 'success', 'error', 'error']);
    expect(results[1]?.model).toMatch(/skipped/);
    expect(results[2]?.model).toMatch(/Invalid input for Echo/);
    expect(results[3]?.model).toMatch(/Unknown tool 'Nope'/);
    await session.close();
  });

  it('ends a runaway loop at maxTurns with status max_turns', async () => {
    const session = await agent.createSession({ maxTurns: 3 });
    const loop = Array.from({ length: 10 }, () => toolCall('Echo', { word: 'again' }));
    const response = await session.send(script('runaway', loop));
    expect(response.status).toBe('max_turns');
    expect(response.toolCalls).toHaveLength(3);
    await session.close();
  });

  it('never runs the tool when abort() arrives while PreToolUse is pending', async () => {
    let entered!: () => void;
    const inHook = new Promise<void>((resolve) => (entered = resolve));
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            entered();
            await new Promise((resolve) =>
              input.abortSignal!.addEventListener('abort', resolve, { once: true }),
            );
            return { action: 'continue' };
          },
        ],
      },
    });
    const pending = session.send(
      script('abort-pre', [toolCall('Write', { file_path: 'never.txt', content: 'x' }), 'ok']),
    );
    await inHook;
    await session.abort('stop');
    const response = await pending;
    expect(response.status).toBe('aborted');
    expect(existsSync(join(workspace, 'never.txt'))).toBe(false);
    const seen = await toolResultsSeen(session);
    expect(seen.map((r) => r.status)).toEqual(['error']);
    await session.close();
  });

  it('kills the whole Bash process group on abort; the next prompt works', async () => {
    permissionImpl = () => 'allow';
    const pidFile = join(workspace, 'pids.txt');
    const session = await agent.createSession();
    const pending = session.send(
      script('abort-bash', [
        toolCall('Bash', {
          command: `sleep 300 & echo $! > pids.txt; sleep 300 & echo $! >> pids.txt; wait`,
        }),
        'ok',
      ]),
    );
    await waitFor(
      () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim().split('\n').length === 2,
      15_000,
      'bash to start',
    );
    const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
    await session.abort();
    expect((await pending).status).toBe('aborted');
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 10_000, 'the process group to die');
    expect((await session.send(script('after-bash', ['fresh']))).text()).toBe('fresh');
    await session.close();
  });

  it('keeps file tools inside the workspace: reading outside gives an error result and reads nothing', async () => {
    writeFileSync(join(outside, 'secret.txt'), 'outside secret');
    const session = await agent.createSession();
    await session.send(
      script('escape', [
        toolCalls(
          ['Read', { file_path: join(outside, 'secret.txt') }],
          ['Read', { file_path: '../' + outside.split('/').pop() + '/secret.txt' }],
        ),
        'ok',
      ]),
    );
    const seen = await toolResultsSeen(session);
    expect(seen.map((r) => r.status)).toEqual(['error', 'error']);
    expect(JSON.stringify(seen)).not.toContain('outside secret');
    await session.close();
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export type { ToolResult };
