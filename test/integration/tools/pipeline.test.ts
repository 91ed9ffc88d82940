/** Regression: the tool pipeline under odd results, big payloads, permission and hook edges. */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  defineTool,
  HookEvent,
  builtinTools,
  type Agent,
  type HookInput,
  type HookMap,
  type PermissionHandler,
  type PermissionRequest,
  type Session,
  type ToolResult,
} from '../../../src/index.js';
import {
  scriptedModel,
  toolCall,
  toolCalls,
  type ScriptedTurn,
} from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('edge-pipe');
writeFileSync(join(workspace, 'notes.txt'), 'hello\n');

const MAX_OUTPUT_BYTES = 65_536;
const BIG = 3 * 1024 * 1024;

/** Scripts by prompt: the model answers each step of a send from the script its prompt names. */
const scripts = new Map<string, ScriptedTurn[]>();
const promptOf = (messages: readonly { role: string; content?: unknown }[]): string => {
  const last = messages.filter((m) => m.role === 'user').at(-1);
  // A prompt after a compaction carries the context note in front (see src/common/context.ts).
  return typeof last?.content === 'string'
    ? last.content.replace(/^\[Context compacted: [^\]]*\]\n\n/, '')
    : '';
};
const model = scriptedModel((request) => {
  const key = promptOf(request.messages);
  const s = scripts.get(key);
  if (!s) return `no script for '${key}'`;
  const turn = s[request.step] ?? 'done';
  if (turn === '__BIG_TEXT__') return 'y'.repeat(BIG);
  return turn;
});
function script(name: string, turns: ScriptedTurn[]): string {
  scripts.set(name, turns);
  return name;
}

let permissionImpl: PermissionHandler = () => 'allow';
const permissionSeen: Array<Omit<PermissionRequest, 'signal'>> = [];
const executed: string[] = [];

const Thrower = defineTool({
  name: 'Thrower',
  description: 'throws',
  kind: 'readonly',
  inputSchema: z.object({ what: z.string() }),
  execute: async ({ what }) => {
    executed.push(`Thrower:${what}`);
    if (what === 'string') throw 'a plain string';
    if (what === 'object') throw { weird: true };
    if (what === 'undefined') throw undefined;
    if (what === 'null') throw null;
    if (what === 'bigmessage') throw new Error('E'.repeat(BIG));
    throw new Error('boom');
  },
});
const Weird = defineTool({
  name: 'Weird',
  description: 'returns junk',
  kind: 'readonly',
  inputSchema: z.object({ what: z.string() }),
  execute: async ({ what }) => {
    executed.push(`Weird:${what}`);
    if (what === 'number') return 42 as unknown as string;
    if (what === 'obj') return { hello: 'world' } as unknown as string;
    if (what === 'bigdata') return { status: 'success', model: 'ok', data: 'd'.repeat(BIG) };
    if (what === 'bigdisplay')
      return { status: 'success', model: 'ok', display: { summary: 's'.repeat(BIG) } };
    if (what === 'bigmodel') return 'm'.repeat(5 * 1024 * 1024);
    if (what === 'bigint') return { status: 'success', model: 'ok', data: { n: 10n } as never };
    if (what === 'circular') {
      const a: Record<string, unknown> = {};
      a.self = a;
      return { status: 'success', model: 'ok', data: a as never };
    }
    if (what === 'errnoerror') return { status: 'error', model: 'bad', error: {} as never };
    return 'plain';
  },
});
const Echo = defineTool({
  name: 'Echo',
  description: 'echo',
  kind: 'write',
  inputSchema: z.object({ word: z.string().min(1) }),
  affectedPaths: (input) => [`/virtual/${input.word}`],
  execute: async ({ word }) => {
    executed.push(`Echo:${word}`);
    return { status: 'success', model: `echo ${word}`, display: { summary: `DISPLAY ${word}` } };
  },
});

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model,
    workspaceRoots: [workspace],
    tools: [...builtinTools(), Thrower, Weird, Echo],
    advanced: {
      permission: (request) => {
        permissionSeen.push({
          toolName: request.toolName,
          input: request.input,
          kind: request.kind,
          affectedPaths: request.affectedPaths,
        });
        return permissionImpl(request);
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-pipe') },
    },
  });
});
afterAll(() => agent?.shutdown());
beforeEach(() => {
  permissionImpl = () => 'allow';
  permissionSeen.length = 0;
  executed.length = 0;
});

/** The tool results of the conversation, as the model sees them. */
async function seen(session: Session) {
  const c = await session.conversation();
  return c.flatMap((m) => (m.role === 'tool' ? m.results : []));
}

/** The results `executeTool` returned, in order, read from the workflow's history. */
async function executeToolResults(workflowId: string): Promise<ToolResult[]> {
  const client = await rawClient();
  try {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const types = new Map<string, string>();
    const results: ToolResult[] = [];
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled) types.set(String(event.eventId), scheduled.activityType?.name ?? '');
      const completed = event.activityTaskCompletedEventAttributes;
      const payload = completed?.result?.payloads?.[0];
      if (payload && types.get(String(completed.scheduledEventId)) === 'executeTool')
        results.push(defaultPayloadConverter.fromPayload<ToolResult>(payload));
    }
    return results;
  } finally {
    await client.connection.close();
  }
}

/** How many model steps answered prompt `name`. */
const stepsFor = (name: string) => model.requests.filter((r) => promptOf(r.messages) === name);

const bytes = (text: string | undefined) => Buffer.byteLength(text ?? '');

/** Run one send, then check the session still answers another prompt, then close it. */
async function run(name: string, turns: ScriptedTurn[], hooks?: HookMap) {
  const session = await agent.createSession(hooks ? { hooks } : {});
  try {
    const response = await session.send(script(name, turns));
    const results = await seen(session);
    const after = (await session.send(script(`${name}-after`, ['fine']))).text();
    return { response, results, after, workflowId: session.workflowId };
  } finally {
    await session.close();
  }
}

describe('tool result shapes', () => {
  it('a tool throwing a non-Error (string, object, undefined, null) gets an error result', async () => {
    const r = await run('throw', [
      toolCalls(
        ['Thrower', { what: 'string' }],
        ['Thrower', { what: 'object' }],
        ['Thrower', { what: 'undefined' }],
        ['Thrower', { what: 'null' }],
      ),
      'ok',
    ]);
    expect(executed).toHaveLength(4);
    expect(r.results.map((x) => [x.status, x.model])).toEqual([
      ['error', 'Thrower failed: a plain string'],
      ['error', 'Thrower failed: [object Object]'],
      ['error', 'Thrower failed: undefined'],
      ['error', 'Thrower failed: null'],
    ]);
    expect(r.response.text()).toBe('ok');
    expect(r.after).toBe('fine');
  });

  it('a tool returning neither a string nor a ToolResult gets an error result', async () => {
    const r = await run('junk', [
      toolCalls(
        ['Weird', { what: 'number' }],
        ['Weird', { what: 'obj' }],
        ['Weird', { what: 'errnoerror' }],
      ),
      'ok',
    ]);
    expect(r.results.map((x) => [x.status, x.model])).toEqual([
      ['error', 'Weird returned neither a string nor a tool result'],
      ['error', 'Weird returned neither a string nor a tool result'],
      ['error', 'bad'],
    ]);
    expect(r.after).toBe('fine');
  });

  it('a 5 MB model output reaches the model capped at maxToolOutputBytes with a marker', async () => {
    const r = await run('bigmodel', [toolCall('Weird', { what: 'bigmodel' }), 'ok']);
    expect(r.response.status).toBe('completed');
    expect(r.results[0]?.status).toBe('success');
    expect(bytes(r.results[0]?.model)).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(r.results[0]?.model).toMatch(/^m+\n\[\.\.\. output truncated: 5242880 bytes total/);
    expect(r.after).toBe('fine');
  });

  it('a 3 MB data field: the call succeeds with data replaced by a note; the session keeps working', async () => {
    const r = await run('bigdata', [toolCall('Weird', { what: 'bigdata' }), 'ok']);
    expect(executed).toEqual(['Weird:bigdata']);
    expect(r.response.status).toBe('completed');
    expect(r.response.toolCalls.map((c) => c.status)).toEqual(['success']);
    expect(r.results.map((x) => [x.status, x.model])).toEqual([['success', 'ok']]);
    const [result] = await executeToolResults(r.workflowId);
    expect(result).toMatchObject({ status: 'success', model: 'ok' });
    expect(result?.status === 'success' && result.data).toMatch(/^\[data dropped/);
    expect(r.after).toBe('fine');
  });

  it('a 3 MB display summary: the call succeeds with the summary capped; the session keeps working', async () => {
    const r = await run('bigdisplay', [toolCall('Weird', { what: 'bigdisplay' }), 'ok']);
    expect(executed).toEqual(['Weird:bigdisplay']);
    expect(r.response.status).toBe('completed');
    const [call] = r.response.toolCalls;
    expect(call?.status).toBe('success');
    expect(bytes(call?.display?.summary)).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(call?.display?.summary).toMatch(/^s+\n\[\.\.\. output truncated: 3145728 bytes total/);
    expect(r.results.map((x) => [x.status, x.model])).toEqual([['success', 'ok']]);
    expect(r.after).toBe('fine');
  });

  it('a 3 MB thrown error message: the call ends with a capped error result; the session keeps working', async () => {
    const r = await run('bigerr', [toolCall('Thrower', { what: 'bigmessage' }), 'ok']);
    expect(executed).toEqual(['Thrower:bigmessage']);
    expect(r.response.status).toBe('completed');
    expect(r.results[0]?.status).toBe('error');
    expect(bytes(r.results[0]?.model)).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(r.results[0]?.model).toMatch(/^Thrower failed: E+\n\[\.\.\. output truncated/);
    const [result] = await executeToolResults(r.workflowId);
    const message = result?.status === 'error' ? result.error.message : undefined;
    expect(bytes(message)).toBeLessThanOrEqual(MAX_OUTPUT_BYTES);
    expect(message).toMatch(/^E+\n\[\.\.\. output truncated: 3145728 bytes total/);
    expect(r.after).toBe('fine');
  });

  it('bigint and circular data: the calls succeed with data replaced by a note', async () => {
    const r = await run('unserializable', [
      toolCalls(['Weird', { what: 'bigint' }], ['Weird', { what: 'circular' }]),
      'ok',
    ]);
    expect(executed).toEqual(['Weird:bigint', 'Weird:circular']);
    expect(r.response.toolCalls.map((c) => c.status)).toEqual(['success', 'success']);
    const results = await executeToolResults(r.workflowId);
    expect(results.map((x) => [x.status, x.status === 'success' ? x.data : undefined])).toEqual([
      ['success', expect.stringMatching(/^\[data dropped/)],
      ['success', expect.stringMatching(/^\[data dropped/)],
    ]);
    expect(r.after).toBe('fine');
  });

  it('a model step returning 3 MB of text is not retried; the text arrives truncated with a marker', async () => {
    const r = await run('bigtext', ['__BIG_TEXT__']);
    expect(stepsFor('bigtext')).toHaveLength(1);
    expect(r.response.status).toBe('completed');
    const text = r.response.text();
    expect(text.length).toBeLessThan(600_000);
    expect(text).toMatch(
      /^y+\n\[\.\.\. truncated: the model returned 3145728 characters \.\.\.\]$/,
    );
    expect(r.after).toBe('fine');
  });
});

describe('hooks on tools', () => {
  it('PostToolUse modifiedOutput {ok:true} / null reaches the model as JSON; display is untouched', async () => {
    const hooks: HookMap = {
      [HookEvent.PostToolUse]: [
        async (input) =>
          input.toolInput?.word === 'obj'
            ? { action: 'continue', modifiedOutput: { ok: true } }
            : input.toolInput?.word === 'null'
              ? { action: 'continue', modifiedOutput: null }
              : { action: 'continue' },
      ],
    };
    const r = await run(
      'postmod',
      [toolCalls(['Echo', { word: 'obj' }], ['Echo', { word: 'null' }]), 'ok'],
      hooks,
    );
    expect(r.results.map((x) => x.model)).toEqual(['{"ok":true}', 'null']);
    expect(r.response.toolCalls.map((c) => c.display?.summary)).toEqual([
      'DISPLAY obj',
      'DISPLAY null',
    ]);
  });

  it('hooks throwing non-Errors or returning a malformed output fail their call with an error result', async () => {
    const hooks: HookMap = {
      [HookEvent.PreToolUse]: [
        async (input) => {
          if (input.toolInput?.word === 'pre') throw 'pre string';
          if (input.toolInput?.word === 'preobj') throw { code: 1 };
          return { action: 'continue' };
        },
      ],
      [HookEvent.PostToolUse]: [
        async (input) => {
          if (input.toolInput?.word === 'post') throw undefined;
          if (input.toolInput?.word === 'postbad') return { action: 'nope' } as never;
          return { action: 'continue' };
        },
      ],
    };
    const r = await run(
      'hookthrow',
      [
        toolCalls(
          ['Echo', { word: 'pre' }],
          ['Echo', { word: 'preobj' }],
          ['Echo', { word: 'post' }],
          ['Echo', { word: 'postbad' }],
        ),
        'ok',
      ],
      hooks,
    );
    expect(r.results.map((x) => x.status)).toEqual(['error', 'error', 'error', 'error']);
    // PreToolUse failures stop their call; PostToolUse ones come after the tool ran.
    expect(executed).toEqual(['Echo:post', 'Echo:postbad']);
    expect(r.after).toBe('fine');
  });

  it('a PreToolUse modifiedInput that breaks the schema gives an error result; the tool does not run', async () => {
    const hooks: HookMap = {
      [HookEvent.PreToolUse]: [async () => ({ action: 'continue', modifiedInput: { word: 5 } })],
    };
    const r = await run('badmod', [toolCall('Echo', { word: 'a' }), 'ok'], hooks);
    expect(r.results[0]).toMatchObject({ status: 'error' });
    expect(executed).toEqual([]);
  });

  it('a PermissionRequest modifiedInput: the policy sees the edited input and its affectedPaths', async () => {
    permissionImpl = (req) =>
      req.affectedPaths.every((p) => p.startsWith('/virtual/safe')) ? 'allow' : 'deny';
    const hooks: HookMap = {
      [HookEvent.PermissionRequest]: [
        async () => ({ action: 'continue', modifiedInput: { word: 'dangerous' } }),
      ],
    };
    const r = await run('permmod', [toolCall('Echo', { word: 'safe' }), 'ok'], hooks);
    expect(permissionSeen[0]?.input).toEqual({ word: 'dangerous' });
    expect(permissionSeen[0]?.affectedPaths).toEqual(['/virtual/dangerous']);
    expect(r.response.toolCalls.map((c) => c.status)).toEqual(['denied']);
    expect(executed).toEqual([]);
  });
});

describe('permission', () => {
  it('a permission function that throws, returns garbage or a bad updatedInput fails its call closed', async () => {
    permissionImpl = (req) => {
      const w = req.input.word;
      if (w === 'throw') throw new Error('policy crashed');
      if (w === 'throwstr') throw 'policy string';
      if (w === 'garbage') return 'maybe' as never;
      if (w === 'badupdate') return { behavior: 'allow', updatedInput: { word: 7 } } as never;
      if (w === 'denydefault') return 'deny';
      if (w === 'denyobj') return { behavior: 'deny' } as never;
      return 'allow';
    };
    const r = await run('permerr', [
      toolCalls(
        ['Echo', { word: 'throw' }],
        ['Echo', { word: 'throwstr' }],
        ['Echo', { word: 'garbage' }],
        ['Echo', { word: 'badupdate' }],
        ['Echo', { word: 'denydefault' }],
        ['Echo', { word: 'denyobj' }],
      ),
      'ok',
    ]);
    expect(r.results.map((x) => x.status)).toEqual(Array(6).fill('error'));
    expect(executed).toEqual([]);
    expect(r.after).toBe('fine');
  });

  it("the permission function's signal aborts when the prompt is aborted", async () => {
    let abortSeenAt: number | undefined;
    let entered!: () => void;
    const inPolicy = new Promise<void>((res) => (entered = res));
    let released!: () => void;
    const policyDone = new Promise<void>((res) => (released = res));
    permissionImpl = async (req) => {
      entered();
      // Bounded: without the abort the policy gives up after 8 s and the test fails.
      await new Promise<void>((res) => {
        const t = setTimeout(res, 8000);
        req.signal.addEventListener('abort', () => {
          abortSeenAt = Date.now();
          clearTimeout(t);
          res();
        });
      });
      released();
      return 'allow' as const;
    };
    const session = await agent.createSession();
    const pending = session.send(
      script('permabort', [toolCall('Echo', { word: 'slowpolicy' }), 'ok']),
    );
    await inPolicy;
    const t0 = Date.now();
    await session.abort('stop');
    const resp = await pending;
    await policyDone;
    await session.close();
    expect(resp.status).toBe('aborted');
    expect(abortSeenAt).toBeDefined();
    expect(abortSeenAt! - t0).toBeLessThan(5000);
    expect(executed).toEqual([]);
  }, 30_000);

  it('abort() while a permission ask is pending clears the ask; the tool never runs', async () => {
    permissionImpl = () => 'ask';
    const session = await agent.createSession();
    const pending = session.send(script('askabort', [toolCall('Echo', { word: 'asked' }), 'ok']));
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [req] = await session.pendingPermissions();
    await session.abort('nope');
    const resp = await pending;
    expect(resp.status).toBe('aborted');
    expect(await session.pendingPermissions()).toEqual([]);
    await expect(session.approve(req!.requestId)).rejects.toMatchObject({
      code: 'PERMISSION_REQUEST_NOT_FOUND',
    });
    expect((await seen(session)).map((x) => [x.status, x.model])).toEqual([
      ['error', 'Tool Echo did not run: the prompt was aborted'],
    ]);
    await session.close();
    expect(executed).toEqual([]);
  }, 30_000);

  it('close() while a permission ask is pending closes the session; the send resolves aborted', async () => {
    permissionImpl = () => 'ask';
    const session = await agent.createSession();
    const pending = session.send(script('askclose', [toolCall('Echo', { word: 'asked' }), 'ok']));
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const closed = await session.close();
    expect(closed.closedNow).toBe(true);
    const resp = await pending;
    expect(resp.status).toBe('aborted');
    expect(resp.abortReason).toMatchObject({ code: 'SESSION_CLOSED' });
    expect(executed).toEqual([]);
  }, 30_000);

  it("a session cannot approve another session's request", async () => {
    permissionImpl = () => 'ask';
    const a = await agent.createSession();
    const b = await agent.createSession();
    const pa = a.send(script('cross-a', [toolCall('Echo', { word: 'a' }), 'ok']));
    await waitFor(async () => (await a.pendingPermissions()).length === 1, 10_000, 'ask a');
    const [ra] = await a.pendingPermissions();
    await expect(b.approve(ra!.requestId)).rejects.toMatchObject({
      code: 'PERMISSION_REQUEST_NOT_FOUND',
    });
    expect(await a.pendingPermissions()).toHaveLength(1);
    await a.approve(ra!.requestId, { updatedInput: { word: 'edited' } });
    const resp = await pa;
    await a.close();
    await b.close();
    expect(resp.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'edited' }],
    ]);
    expect(executed).toEqual(['Echo:edited']);
  }, 30_000);

  it("PostToolUse sees the updatedInput an approval gave, not the model's input", async () => {
    permissionImpl = () => 'ask';
    const postSeen: unknown[] = [];
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PostToolUse]: [
          async (input: HookInput) => {
            postSeen.push(input.toolInput);
            return { action: 'continue' };
          },
        ],
      },
    });
    const p = session.send(script('approve-edit', [toolCall('Echo', { word: 'orig' }), 'ok']));
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
    const [r] = await session.pendingPermissions();
    await session.approve(r!.requestId, { updatedInput: { word: 'edited' } });
    const resp = await p;
    await session.close();
    expect(resp.status).toBe('completed');
    expect(postSeen).toEqual([{ word: 'edited' }]);
    expect(executed).toEqual(['Echo:edited']);
  }, 30_000);
});

describe('the loop', () => {
  it('calls sharing a toolUseId each get their own result; an unknown tool gets an error result', async () => {
    const r = await run('dups', [
      {
        toolCalls: [
          { toolName: 'Echo', input: { word: 'one' }, toolUseId: 'same' },
          { toolName: 'Echo', input: { word: 'two' }, toolUseId: 'same' },
          { toolName: 'Nope', input: {}, toolUseId: 'x' },
        ],
      },
      'ok',
    ]);
    expect(r.results.map((x) => [x.toolUseId, x.status, x.model])).toEqual([
      ['same', 'success', 'echo one'],
      ['same', 'success', 'echo two'],
      ['x', 'error', "Unknown tool 'Nope'"],
    ]);
    expect(r.after).toBe('fine');
  });

  it('abort() during PostToolUse of a call that ran: the model sees its real result and an abort note', async () => {
    let entered!: () => void;
    const inHook = new Promise<void>((res) => (entered = res));
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PostToolUse]: [
          async (input) => {
            entered();
            await new Promise((res) =>
              input.abortSignal!.addEventListener('abort', res, { once: true }),
            );
            return { action: 'continue' };
          },
        ],
      },
    });
    const target = join(workspace, 'ran.txt');
    const p = session.send(
      script('abort-post', [
        toolCalls(['Write', { file_path: 'ran.txt', content: 'x' }], ['Echo', { word: 'later' }]),
        'ok',
      ]),
    );
    await inHook;
    await session.abort('stop');
    const resp = await p;
    expect(resp.status).toBe('aborted');
    expect(existsSync(target)).toBe(true);
    // The response lists the call that ran (and the one it cut short), as the model sees them.
    expect(resp.toolCalls.map((c) => [c.toolName, c.status])).toEqual([
      ['Write', 'success'],
      ['Echo', 'cancelled'],
    ]);
    expect((await seen(session)).map((x) => [x.status, x.model])).toEqual([
      ['success', `Wrote 1 bytes to ${target}\n[the prompt was aborted after this tool ran]`],
      ['error', 'Tool Echo did not run: the prompt was aborted'],
    ]);
    expect(executed).toEqual([]);
    // The next prompt works on the well-formed conversation.
    expect((await session.send(script('abort-post-after', ['fine']))).text()).toBe('fine');
    await session.close();
  }, 30_000);

  it('maxTurns: 1 ends the send after one tool round with status max_turns', async () => {
    const session = await agent.createSession({ maxTurns: 1 });
    const resp = await session.send(
      script('mt', [toolCall('Echo', { word: 'a' }), toolCall('Echo', { word: 'b' })]),
    );
    await session.close();
    expect(resp.status).toBe('max_turns');
    expect(resp.toolCalls.map((c) => c.toolInput)).toEqual([{ word: 'a' }]);
    expect(executed).toEqual(['Echo:a']);
  });
});
