/**
 * `durable-agent inspect` shows what the hooks, the permission policy and people decided,
 * from the history alone: a session with an audit hook (PreToolUse, a reason on every call),
 * a PreToolUse that edits the input, a PostToolUse that redacts the output, an `ask`
 * approved with an edited input by `durable-agent approve --identity`, and one denied by
 * `durable-agent deny`. The CLI runs as a child process against the test run's server.
 * And Temporal's own tools: the summaries of the session's activities and timers in its
 * history, and its current details in `temporal workflow metadata`.
 */
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type Session } from '../../../src/index.js';
import { ensureTemporalCli } from '../../../src/server/temporal-cli.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { readWriteModel } from '../../helpers/read-write-model.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const workspace = tempDir('inspect-decisions');

function cli(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: temporalAddress(),
  };
  delete env.DEBUG;
  return promisify(execFile)(process.execPath, cliNodeArgs(args), {
    cwd: repoRoot,
    env,
  });
}

interface InspectJson {
  sessionId: string;
  agentName?: string;
  dispatches: Array<{
    seq: number;
    event: string;
    toolName?: string;
    toolUseId?: string;
    decision: string;
    callbacks?: Array<{
      index: number;
      action: string;
      reason?: string;
      durationMs?: number;
      inputDiff?: unknown;
      outputDiff?: unknown;
    }>;
  }>;
  toolCalls: Array<{
    toolUseId: string;
    toolName: string;
    input?: Record<string, unknown>;
    executedInput?: Record<string, unknown>;
    permission?: {
      policy: string;
      answer?: string;
      kind?: string;
      ask?: {
        outcome: string;
        by?: string;
        waitedMs?: number;
        askedAt: number;
        deadline: number;
        requestId?: string;
        updatedInput?: unknown;
        inputDiff?: unknown;
        message?: string;
      };
    };
    result?: { status: string; sizeBytes?: number; truncated: boolean; offloaded: boolean };
  }>;
}

let agent: Agent;
let session: Session;
let approvedRequestId: string;
let deniedRequestId: string;
let text: string;
let json: InspectJson;

/** Temporal's own CLI (`temporal workflow ...`) against the test run's server. */
async function temporal(args: string[]): Promise<string> {
  const { temporalPath } = await ensureTemporalCli({ cacheDir: join(repoRoot, '.temporal') });
  const run = await promisify(execFile)(temporalPath!, [...args, '--address', temporalAddress()]);
  return run.stdout;
}

/** What `temporal workflow metadata` said while the approval waited. */
let describedWhileWaiting: string;

/** Send `prompt`, wait for its ask, answer it with the CLI (`args` after the request id). */
async function answeredByCli(
  prompt: string,
  command: 'approve' | 'deny',
  args: string[],
  onAsk: () => Promise<void> = async () => undefined,
) {
  const response = session.send(prompt);
  let requestId = '';
  await waitFor(
    async () => {
      const [pending] = await session.pendingPermissions();
      requestId = pending?.requestId ?? '';
      return requestId !== '';
    },
    20_000,
    `the ask of '${prompt}'`,
  );
  await onAsk();
  await cli([command, session.id, requestId, ...args]);
  await response;
  return requestId;
}

beforeAll(async () => {
  writeFileSync(join(workspace, 'secrets.env'), 'API_KEY=sk-test-123\nPORT=8080\n');
  agent = await createAgent({
    model: readWriteModel(),
    workspaceRoots: [workspace],
    advanced: {
      hooks: {
        [HookEvent.PreToolUse]: [
          // The audit hook: continues, saying what it logged.
          async (input) => ({ action: 'continue', reason: `audit: logged ${input.toolName}` }),
          // Marks what the model writes.
          async (input) =>
            input.toolName === 'Write'
              ? {
                  action: 'continue',
                  modifiedInput: { content: `[checked] ${String(input.toolInput?.content)}` },
                }
              : { action: 'continue' },
        ],
        [HookEvent.PostToolUse]: [
          // Redaction: secrets never reach the model.
          async (input) => {
            const output = String(input.toolOutput);
            const redacted = output.replace(/API_KEY=\S+/g, 'API_KEY=[REDACTED]');
            return redacted === output
              ? { action: 'continue' }
              : { action: 'continue', modifiedOutput: redacted, reason: 'redacted 1 secret' };
          },
        ],
      },
      // Default permission: Read runs, Write asks a person.
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('inspect') },
    },
  });
  session = await agent.createSession({ sessionId: `inspect-${randomUUID()}` });
  await session.send('read secrets');
  approvedRequestId = await answeredByCli(
    'write approved',
    'approve',
    [
      '--input',
      JSON.stringify({ file_path: 'approved.txt', content: 'edited by alice' }),
      '--identity',
      'alice@ops',
    ],
    async () => {
      // `workflow metadata` asks the session's worker for it (`describe` shows the same
      // section only when that answer comes within its own short wait).
      describedWhileWaiting = await temporal([
        'workflow',
        'metadata',
        '--workflow-id',
        session.workflowId,
      ]);
    },
  );
  deniedRequestId = await answeredByCli('write denied', 'deny', [
    '--message',
    'not today',
    '--identity',
    'bob@ops',
  ]);
  await session.close();
  text = (await cli(['inspect', session.id])).stdout;
  json = JSON.parse((await cli(['inspect', session.id, '--json'])).stdout) as InspectJson;
}, 120_000);

afterAll(async () => {
  await agent?.shutdown();
});

describe('inspect: hook decisions', () => {
  it('the approved write ran with the edited input once', () => {
    expect(readFileSync(join(workspace, 'approved.txt'), 'utf8')).toBe('edited by alice');
  });

  it("text: every callback's decision with its reason, the edited input as a diff", () => {
    expect(text).toMatch(
      /\n {2}\d+ PreToolUse Write \(call \S+\): continue, \S+ ms\n {4}#1 continue: audit: logged Write(, \S+ ms)?\n {4}#2 continue(, \S+ ms)?\n {6}input: content: "from the model" → "\[checked\] from the model"\n/,
    );
  });

  it('text: the redacting PostToolUse with its reason and the changed line, - before and + after', () => {
    expect(text).toMatch(
      /\n {2}\d+ PostToolUse Read \(call \S+\): continue, \S+ ms\n {4}#1 continue: redacted 1 secret(, \S+ ms)?\n {6}output:\n {8}- API_KEY=sk-test-123\n {8}\+ API_KEY=\[REDACTED\]\n/,
    );
  });

  it('--json: each callback with its decision, reason, own time and diff', () => {
    const preWrite = json.dispatches.filter(
      (d) => d.event === HookEvent.PreToolUse && d.toolName === 'Write',
    );
    expect(preWrite).toHaveLength(2);
    expect(preWrite[0]!.callbacks).toEqual([
      {
        index: 0,
        action: 'continue',
        reason: 'audit: logged Write',
        durationMs: expect.any(Number),
      },
      {
        index: 1,
        action: 'continue',
        durationMs: expect.any(Number),
        modifiedInput: { content: '[checked] from the model' },
        inputDiff: {
          kind: 'object',
          changes: [
            {
              key: 'content',
              change: 'changed',
              before: 'from the model',
              after: '[checked] from the model',
            },
          ],
        },
      },
    ]);
    const postRead = json.dispatches.find(
      (d) => d.event === HookEvent.PostToolUse && d.toolName === 'Read',
    );
    expect(postRead?.callbacks).toEqual([
      {
        index: 0,
        action: 'continue',
        reason: 'redacted 1 secret',
        durationMs: expect.any(Number),
        modifiedOutput: expect.stringContaining('API_KEY=[REDACTED]'),
        outputDiff: {
          kind: 'text',
          changes: [
            { op: '-', line: 1, text: 'API_KEY=sk-test-123' },
            { op: '+', line: 1, text: 'API_KEY=[REDACTED]' },
          ],
        },
      },
    ]);
  });
});

describe('inspect: permission and tool results', () => {
  it('text: a row per call with the policy, who decided, the wait and the result', () => {
    const table = text.slice(text.indexOf('\ntool calls\n'));
    const rowOf = (toolName: string, nth = 0) =>
      table.split('\n').filter((line) => new RegExp(`^\\S+ +${toolName} `).test(line))[nth];
    expect(rowOf('Read')).toMatch(
      /^\S+ +Read +allow \(preset default\) +policy +- +success +\d+ B +\S+ ms$/,
    );
    expect(rowOf('Write', 0)).toMatch(
      /^\S+ +Write +ask \(preset default\) → approved +person alice@ops +\S+ m?s +success +\d+ B +\S+ m?s$/,
    );
    expect(rowOf('Write', 1)).toMatch(
      /^\S+ +Write +ask \(preset default\) → denied +person bob@ops +\S+ m?s +not run +- +-$/,
    );
  });

  it('text: who approved with what edited input, who denied with what message', () => {
    expect(text).toContain(`approved by alice@ops after `);
    // The CLI binds its answers to the call: each names the digest it read.
    expect(text).toMatch(new RegExp(`\\(request ${approvedRequestId}, digest [0-9a-f]{12}\\)`));
    expect(text).toMatch(
      /\n {4}with edited input \(digest [0-9a-f]{12}\): content: "\[checked\] from the model" → "edited by alice"\n/,
    );
    expect(text).toMatch(
      new RegExp(
        `denied by bob@ops after \\S+ m?s \\(request ${deniedRequestId}, digest [0-9a-f]{12}\\): not today\\n`,
      ),
    );
  });

  it('--json: the policy, the ask with who answered, the edited input and the result', () => {
    const [read, approved, denied] = json.toolCalls;
    expect(json.toolCalls).toHaveLength(3);
    expect(read).toMatchObject({
      toolName: 'Read',
      input: { file_path: 'secrets.env' },
      permission: { policy: 'preset default', answer: 'allow', kind: 'readonly' },
      result: { status: 'success', truncated: false, offloaded: false },
    });
    expect(read!.result!.sizeBytes).toBeGreaterThan(0);
    expect(approved).toMatchObject({
      toolName: 'Write',
      input: { file_path: 'approved.txt', content: 'from the model' },
      executedInput: { file_path: 'approved.txt', content: 'edited by alice' },
      permission: {
        policy: 'preset default',
        answer: 'ask',
        kind: 'write',
        ask: {
          outcome: 'approved',
          by: 'alice@ops',
          requestId: approvedRequestId,
          updatedInput: { file_path: 'approved.txt', content: 'edited by alice' },
          inputDiff: {
            kind: 'object',
            changes: [
              {
                key: 'content',
                change: 'changed',
                before: '[checked] from the model',
                after: 'edited by alice',
              },
            ],
          },
        },
      },
      result: { status: 'success' },
    });
    const ask = approved!.permission!.ask!;
    expect(ask.waitedMs).toBeGreaterThan(0);
    expect(ask.deadline - ask.askedAt).toBe(86_400_000);
    expect(denied).toMatchObject({
      toolName: 'Write',
      permission: {
        answer: 'ask',
        ask: { outcome: 'denied', by: 'bob@ops', requestId: deniedRequestId, message: 'not today' },
      },
    });
    expect(denied!.result).toBeUndefined();
    expect(json.agentName).toEqual(expect.any(String));
  });
});

describe("Temporal's own tools", () => {
  it('temporal workflow metadata shows the current details while the approval waits', () => {
    expect(describedWhileWaiting).toMatch(
      /\n {2}Current Details:\n {4}waiting for approval: Write approved\.txt, asked \d\d:\d\d UTC, deadline in 24 h\n/,
    );
  });

  it('every activity and timer in the history carries a summary saying what it is', async () => {
    const client = await rawClient();
    try {
      const history = await client.workflow.getHandle(session.workflowId).fetchHistory();
      const summaryOf = (event: NonNullable<typeof history.events>[number]) => {
        const payload = event?.userMetadata?.summary;
        return payload ? defaultPayloadConverter.fromPayload<string>(payload) : undefined;
      };
      const events = history.events ?? [];
      const activities = events
        .filter((e) => e.activityTaskScheduledEventAttributes)
        .map((e) => [e.activityTaskScheduledEventAttributes!.activityType!.name, summaryOf(e)]);
      expect(activities.filter(([, summary]) => summary === undefined)).toEqual([]);
      expect(activities.slice(0, 5)).toEqual([
        ['modelStep', 'model step 1 of prompt 1'],
        ['dispatchHook', 'PreToolUse Read, 2 callbacks'],
        ['executeTool', 'tool Read secrets.env'],
        ['dispatchHook', 'PostToolUse Read, 1 callback'],
        ['modelStep', 'model step 2 of prompt 1'],
      ]);
      const timers = events.filter((e) => e.timerStartedEventAttributes).map(summaryOf);
      // (SessionStart's wait for the creating client starts a timer only when it has to wait.)
      expect(timers.filter((summary) => summary?.startsWith('approval'))).toEqual([
        'approval deadline: Write approved.txt',
        'approval deadline: Write denied.txt',
      ]);
      expect(timers.filter((summary) => summary === undefined)).toEqual([]);
    } finally {
      await client.connection.close();
    }
  });
});
