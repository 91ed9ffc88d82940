/**
 * Tool hooks that fail (throw, return `undefined`, return `{ action: 'block' }`) on a real
 * Temporal server: the worker logs one line per failed dispatch, the tool-call record and the
 * timeline entry carry the error, `durable-agent inspect` shows it, and with
 * `advanced.toolHookErrors: 'reject'` the send rejects with the hook's error.
 */
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  HookError,
  HookEvent,
  type Agent,
  type HookCallback,
  type HookOutput,
  type Session,
} from '../../../src/index.js';
import type { ToolResultMessagePart } from '../../../src/common/conversation.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const workspace = mkdtempSync(join(tmpdir(), 'tool-hook-errors-'));
writeFileSync(join(workspace, 'a.txt'), 'alpha\n');

/** Every line the worker logged at WARN and above, through Temporal's Runtime logger. */
const logged: LogEntry[] = [];

let agent: Agent;
let rejecting: Agent;

beforeAll(async () => {
  // Installed before any agent exists, so the agents' workers log through it.
  Runtime.install({ logger: new DefaultLogger('WARN', (entry) => logged.push(entry)) });
  // Step 0 reads a file (`read missing` reads one that does not exist); step 1 answers.
  const model = () =>
    scriptedModel((request) => {
      if (request.step > 0) return 'done';
      const prompt = typeof request.prompt === 'string' ? request.prompt : '';
      return toolCall('Read', { file_path: prompt === 'read missing' ? 'missing.txt' : 'a.txt' });
    });
  agent = await createAgent({
    name: 'tool-hook-errors',
    model: model(),
    workspaceRoots: [workspace],
    advanced: {
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('tool-hook-errors') },
    },
  });
  rejecting = await createAgent({
    name: 'tool-hook-errors-reject',
    model: model(),
    workspaceRoots: [workspace],
    advanced: {
      toolHookErrors: 'reject',
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('the-reject') },
    },
  });
});

afterAll(async () => {
  await agent?.shutdown();
  await rejecting?.shutdown();
  rmSync(workspace, { recursive: true, force: true });
});

/** The ways a callback fails, with the error each gives. */
const failures: Array<{
  what: string;
  callback: HookCallback;
  name: string;
  code: string;
  message: RegExp;
}> = [
  {
    what: 'throws',
    callback: async () => {
      throw new TypeError('audit service unreachable');
    },
    name: 'TypeError',
    code: 'HOOK_CALLBACK_FAILED',
    message: /^audit service unreachable$/,
  },
  {
    what: 'returns undefined',
    callback: async () => undefined as unknown as HookOutput,
    name: 'HookError',
    code: 'HOOK_OUTPUT_INVALID',
    message: /callback #1 returned a malformed output: .*got undefined/,
  },
  {
    what: "returns { action: 'block' }",
    callback: async () => ({ action: 'block' }) as unknown as HookOutput,
    name: 'HookError',
    code: 'HOOK_OUTPUT_INVALID',
    message: /callback #1 returned a malformed output: .*'block'/,
  },
];

const cases = [HookEvent.PreToolUse, HookEvent.PostToolUse].flatMap((event) =>
  failures.map((failure) => ({ event, ...failure })),
);

/** The tool results of a session's conversation, in order. */
async function toolResultsOf(session: Session): Promise<ToolResultMessagePart[]> {
  return (await session.conversation()).flatMap((m) => (m.role === 'tool' ? m.results : []));
}

/** The WARN lines logged for `sessionId`. */
function linesOf(sessionId: string): LogEntry[] {
  return logged.filter((entry) => entry.meta?.sessionId === sessionId);
}

describe("toolHookErrors: 'tool-error' (the default)", () => {
  it.each(cases)(
    'a $event callback that $what: send completes, the record and timeline carry the error, the worker logged one line',
    async ({ event, callback, name, code, message }) => {
      const session = await agent.createSession({ hooks: { [event]: [callback] } });
      try {
        const response = await session.send('read a');
        expect(response.status).toBe('completed');
        expect(response.toolCalls).toHaveLength(1);
        const record = response.toolCalls[0]!;
        expect(record.status).toBe('error');
        expect(record.hookError).toEqual({
          event,
          callbackIndex: 0,
          code,
          name,
          message: expect.stringMatching(message),
        });

        const entry = (await session.timeline()).find((e) => e.event === event);
        expect(entry?.outcome).toBe('error');
        expect(entry?.error).toEqual(record.hookError);

        const lines = linesOf(session.id);
        expect(lines).toHaveLength(1);
        expect(lines[0]!.level).toBe('WARN');
        expect(lines[0]!.message).toMatch(
          new RegExp(
            `^Hook ${event} callback #1 \\(tool Read\\) failed in session '${session.id}' of agent 'tool-hook-errors': ${code}: `,
          ),
        );
        expect(lines[0]!.meta).toMatchObject({
          event,
          callbackIndex: 0,
          agentName: 'tool-hook-errors',
          sessionId: session.id,
          toolName: 'Read',
          code,
          errorMessage: expect.stringMatching(message),
        });
      } finally {
        await session.close();
      }
    },
  );

  it('a PermissionRequest callback that throws: the record carries the error and the worker logged it', async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PermissionRequest]: [
          async () => {
            throw new Error('policy store down');
          },
        ],
      },
    });
    try {
      const response = await session.send('read a');
      expect(response.status).toBe('completed');
      expect(response.toolCalls[0]).toMatchObject({
        status: 'error',
        hookError: {
          event: HookEvent.PermissionRequest,
          callbackIndex: 0,
          code: 'HOOK_CALLBACK_FAILED',
          message: 'policy store down',
        },
      });
      expect(linesOf(session.id).map((l) => l.meta?.event)).toEqual([HookEvent.PermissionRequest]);
    } finally {
      await session.close();
    }
  });

  it("a PostToolUseFailure callback that throws: the tool's own error stays, the record carries the hook's, the worker logged it", async () => {
    const session = await agent.createSession({
      hooks: {
        [HookEvent.PostToolUseFailure]: [
          async () => {
            throw new Error('failure logger down');
          },
        ],
      },
    });
    try {
      const response = await session.send('read missing');
      expect(response.status).toBe('completed');
      expect(response.toolCalls[0]).toMatchObject({
        status: 'error',
        hookError: {
          event: HookEvent.PostToolUseFailure,
          code: 'HOOK_CALLBACK_FAILED',
          message: 'failure logger down',
        },
      });
      const [result] = await toolResultsOf(session);
      expect(result?.status).toBe('error');
      expect(result?.model).toMatch(/missing\.txt/);
      expect(result?.model).not.toMatch(/failure logger down/);
      expect(linesOf(session.id).map((l) => l.meta?.event)).toEqual([HookEvent.PostToolUseFailure]);
    } finally {
      await session.close();
    }
  });

  it('durable-agent inspect shows the error: its code in the text, the whole record in --json', async () => {
    const session = await agent.createSession({
      hooks: { [HookEvent.PreToolUse]: [async () => undefined as unknown as HookOutput] },
    });
    await session.send('read a');
    await session.close();
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, cliNodeArgs(args), {
        cwd: repoRoot,
        env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress() },
      });
    const text = await run(['inspect', session.id]);
    expect(text.stdout).toMatch(
      /\n\d+ +PreToolUse +Read +1 +error +HOOK_OUTPUT_INVALID: Hook PreToolUse callback #1 returned/,
    );
    const json = JSON.parse((await run(['inspect', session.id, '--json'])).stdout) as {
      dispatches: Array<{ event: string; error?: unknown }>;
    };
    const dispatch = json.dispatches.find((d) => d.event === HookEvent.PreToolUse);
    expect(dispatch?.error).toEqual({
      event: HookEvent.PreToolUse,
      callbackIndex: 0,
      code: 'HOOK_OUTPUT_INVALID',
      name: 'HookError',
      message: expect.stringMatching(/callback #1 returned a malformed output: .*got undefined/),
    });
  });
});

describe("toolHookErrors: 'reject'", () => {
  it.each(cases)(
    'a $event callback that $what: send rejects with the named error, the worker logged one line',
    async ({ event, callback, name, code, message }) => {
      const session = await rejecting.createSession({ hooks: { [event]: [callback] } });
      try {
        const error = await session.send('read a').then(
          (response) => {
            throw new Error(`expected a rejection, got status ${response.status}`);
          },
          (thrown: unknown) => thrown as Error & { event?: string; callbackIndex?: number },
        );
        expect(error.name).toBe(name);
        expect(error.message).toMatch(message);
        expect(error.event).toBe(event);
        expect(error.callbackIndex).toBe(0);
        if (code !== 'HOOK_CALLBACK_FAILED') {
          expect(error).toBeInstanceOf(HookError);
          expect((error as HookError).code).toBe(code);
        }
        expect(linesOf(session.id).map((l) => [l.meta?.event, l.meta?.code])).toEqual([
          [event, code],
        ]);
        // The failed call still got its one result in the conversation.
        const results = await toolResultsOf(session);
        expect(results.map((r) => r.status)).toEqual(['error']);
      } finally {
        await session.close();
      }
    },
  );
});
