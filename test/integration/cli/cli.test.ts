/**
 * The `durable-agent` CLI as a real child process (built from this run's sources:
 * test/helpers/cli-build.ts) against the test run's Temporal server: listing, inspecting and
 * replaying sessions, deciding permission requests (with and without a worker), `session-<id>` for an id, `dev`,
 * and one-line errors with the right exit codes.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Client } from '@temporalio/client';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  createAgentClient,
  createAgentWorker,
  HookEvent,
  type Agent,
  type AgentOptions,
  type AgentWorker,
  type Session,
} from '../../../src/index.js';
import { SESSION_WORKFLOW, sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';
import { runCli, type CliRun } from '../../helpers/cli-process.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = (name: string) => join(repoRoot, 'test', 'fixtures', 'histories', name);
const workspace = tempDir('cli-ws');
const scratch = tempDir('cli');

/** Run the CLI as a child process; never blocks this process's worker. */
const cli = runCli;

/** The error contract: exactly one line on stderr, `durable-agent: ...`, nothing on stdout. */
function expectOneLineError(run: CliRun, code: number, pattern: RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^durable-agent: /);
  expect(lines[0]).toMatch(pattern);
  expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

/** Who the CLI says answered when no --identity is given: `<user>@<host>`, as this process sees them. */
const cliDefaultIdentity = `${userInfo().username}@${hostname()}`;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Table rows of a CLI output, split into cells. */
function rows(text: string): string[][] {
  return text.split('\n').map((line) => line.trim().split(/\s{2,}/));
}

/** A model that writes `<name>.txt` for the prompt `write <name>`, and replies otherwise. */
const writingModel = () =>
  scriptedModel((request) => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
    if (text.startsWith('write ') && request.step === 0) {
      return toolCall('Write', { file_path: `${text.slice(6)}.txt`, content: 'from the model' });
    }
    return `reply to ${text}`;
  });

let agent: Agent;
let client: Client;
let closed: Session;
/** A session whose own id starts with `session-` (its workflow id is `session-session-...`). */
let prefixed: Session;

beforeAll(async () => {
  agent = await createAgent({
    model: writingModel(),
    workspaceRoots: [workspace],
    advanced: {
      hooks: {
        [HookEvent.SessionStart]: [async () => ({ action: 'continue' })],
        [HookEvent.UserPromptSubmit]: [
          async (input) =>
            input.userPrompt === 'reject'
              ? { action: 'abort', reason: 'rejected by policy' }
              : { action: 'continue' },
        ],
        [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })],
        [HookEvent.SessionEnd]: [async () => ({ action: 'continue' })],
      },
      // Default permission: the Write tool asks a person.
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('cli') },
    },
  });
  client = await rawClient();
  closed = await agent.createSession({ sessionId: `cli-closed-${randomUUID()}` });
  await closed.send('hello');
  await closed.send('reject').catch(() => undefined);
  await closed.close();
  prefixed = await agent.createSession({ sessionId: `session-cli-${randomUUID()}` });
  await prefixed.send('hello');
  await prefixed.close();
}, 60_000);

afterAll(async () => {
  await client?.connection.close();
  await agent?.shutdown();
});

describe('sessions', () => {
  it('lists the session with its status and times, as an aligned table', async () => {
    // Visibility is eventually consistent: wait until the server lists it.
    await waitFor(async () => {
      for await (const execution of client.workflow.list({
        query: `WorkflowId = '${closed.workflowId}'`,
      })) {
        if (execution.status.name === 'COMPLETED') return true;
      }
      return false;
    }, 20_000);
    const run = await cli(['sessions', '--limit', '1000']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SESSION +STATUS +STARTED +CLOSED +AGENT +STATE$/);
    const row = lines.find((l) => l.startsWith(`${closed.id} `));
    expect(row, run.stdout).toMatch(
      /^cli-closed-\S+ +COMPLETED +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +\S+ +\S+$/,
    );
    // Aligned: STATUS starts in the same column on every line.
    const column = lines[0]!.indexOf('STATUS');
    expect(row!.slice(column)).toMatch(/^COMPLETED/);
  });

  it('a terminated session is listed as terminated, and --status running no longer lists it (its DurableAgentStatus stays running)', async () => {
    const dead = await agent.createSession({ sessionId: `cli-terminated-${randomUUID()}` });
    const live = await agent.createSession({ sessionId: `cli-live-${randomUUID()}` });
    await dead.send('hello');
    await live.send('hello');
    /** Workflow ids the server lists for `query`, among these two sessions. */
    const listed = async (query: string) => {
      const ids: string[] = [];
      for await (const execution of client.workflow.list({
        query: `WorkflowId IN ('${dead.workflowId}', '${live.workflowId}') AND ${query}`,
      })) {
        ids.push(execution.workflowId);
      }
      return ids.sort();
    };
    const both = [dead.workflowId, live.workflowId].sort();
    // Visibility is eventually consistent: wait until the server lists both as running.
    await waitFor(
      async () => (await listed(`DurableAgentStatus = 'running'`)).length === 2,
      20_000,
      'both sessions listed as running',
    );
    await client.workflow.getHandle(dead.workflowId).terminate('terminated by the test');
    await waitFor(
      async () => (await listed(`ExecutionStatus = 'Terminated'`)).length === 1,
      20_000,
      'the terminated session listed as Terminated',
    );
    // Temporal's own account: the attribute alone still says running.
    expect(await listed(`DurableAgentStatus = 'running'`)).toEqual(both);
    expect(await listed(`ExecutionStatus = 'Running' AND DurableAgentStatus = 'running'`)).toEqual([
      live.workflowId,
    ]);

    type Row = { sessionId: string; status: string; agentStatus?: string; sessionStatus?: string };
    const listing = async (...args: string[]) => {
      const run = await cli(['sessions', '--limit', '1000', '--json', ...args]);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as Row[]).filter(
        (r) => r.sessionId === dead.id || r.sessionId === live.id,
      );
    };
    expect((await listing('--status', 'running')).map((r) => r.sessionId)).toEqual([live.id]);
    expect(await listing('--status', 'terminated')).toEqual([
      expect.objectContaining({
        sessionId: dead.id,
        status: 'TERMINATED',
        agentStatus: 'running',
        sessionStatus: 'terminated',
      }),
    ]);
    const table = await cli(['sessions', '--limit', '1000']);
    expect(table.code, table.stderr).toBe(0);
    const cells = rows(table.stdout);
    expect(cells.find((r) => r[0] === dead.id)).toEqual([
      dead.id,
      'TERMINATED',
      expect.any(String),
      expect.any(String),
      expect.any(String),
      'terminated',
    ]);
    expect(cells.find((r) => r[0] === live.id)?.[5]).toBe('running');
    // closed: the completed sessions (the first test waited for this one to be listed).
    const closedRun = await cli(['sessions', '--status', 'closed', '--limit', '1000', '--json']);
    expect(closedRun.code, closedRun.stderr).toBe(0);
    const closedRows = JSON.parse(closedRun.stdout) as Row[];
    expect(closedRows.find((r) => r.sessionId === closed.id)?.sessionStatus).toBe('closed');
    expect(closedRows.map((r) => r.sessionId)).not.toContain(dead.id);
    await live.close();
  });
});

describe('inspect', () => {
  it("shows a closed session's dispatches from its history, the SessionEnd marker and the status", async () => {
    const run = await cli(['inspect', closed.id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`session ${closed.id} (workflow ${closed.workflowId})`);
    const table = rows(run.stdout);
    const body = table.filter((cells) => /^(\d+|--)$/.test(cells[0] ?? ''));
    expect(body.map((cells) => cells.slice(0, 5))).toEqual([
      ['0', 'SessionStart', '1', 'continue', expect.stringMatching(/ms$/)],
      ['1', 'UserPromptSubmit', '1', 'continue', expect.stringMatching(/ms$/)],
      ['2', 'UserPromptSubmit', '1', 'abort', 'rejected by policy'],
      [
        '--',
        'SessionEnd marker',
        'reason=other',
        expect.stringMatching(/^recorded .*\(event \d+\)$/),
      ],
      ['3', 'SessionEnd', '1', 'continue', expect.stringMatching(/ms$/)],
    ]);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^status: COMPLETED at \S+ \(end reason other, 2 prompts\)$/,
    );
  });

  it('--json prints the timeline rebuilt from history', async () => {
    const run = await cli(['inspect', closed.id, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const timeline = JSON.parse(run.stdout) as {
      status: string;
      sessionId: string;
      dispatches: Array<{ event: string; decision: string; reason?: string }>;
      sessionEndMarker: { reason: string; eventId: number };
    };
    expect(timeline.sessionId).toBe(closed.id);
    expect(timeline.status).toBe('COMPLETED');
    expect(timeline.dispatches.map((d) => d.decision)).toEqual([
      'continue',
      'continue',
      'abort',
      'continue',
    ]);
    expect(timeline.sessionEndMarker.reason).toBe('other');
    // The history agrees with the workflow's own record.
    const own = await closed.timeline();
    expect(timeline.dispatches.map((d) => [d.event, d.decision, d.reason])).toEqual(
      own.map((e) => [e.event, e.outcome, e.reason]),
    );
  });

  it('--json into a pipe read slower than it is written (| jq): the whole timeline, over 1 MB', async () => {
    // Prompts under the offload threshold (256 KiB), each echoed in the reply: the timeline
    // holds both, 1.2 MB in all, far more than a pipe buffer (64 KiB).
    const session = await agent.createSession({ sessionId: `cli-big-${randomUUID()}` });
    const prompts = ['x', 'y', 'z'].map((c) => `${c} ${c.repeat(200_000)}`);
    for (const prompt of prompts) await session.send(prompt);
    await session.close();
    const run = await cli(['inspect', session.id, '--json'], { stallReaderMs: 2000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.length).toBeGreaterThan(1_000_000);
    const timeline = JSON.parse(run.stdout) as {
      prompts: Array<{ prompt: string; text?: string }>;
    };
    // Compared by digest: a failure's diff of 1.2 MB of text says nothing.
    const digest = (text?: string) => text && `${text.slice(0, 12)}…(${text.length})`;
    expect(timeline.prompts.map((p) => digest(p.prompt))).toEqual(prompts.map(digest));
    for (const p of timeline.prompts) expect(p.text?.length).toBeGreaterThan(200_000);
  });

  it("takes the workflow id the Web UI shows (session-<id>) for the session's id", async () => {
    const [byId, byWorkflowId] = await Promise.all([
      cli(['inspect', closed.id, '--json']),
      cli(['inspect', closed.workflowId, '--json']),
    ]);
    expect(byWorkflowId.code, byWorkflowId.stderr).toBe(0);
    expect(byWorkflowId.stdout).toBe(byId.stdout);
    expect((JSON.parse(byWorkflowId.stdout) as { sessionId: string }).sessionId).toBe(closed.id);
  });

  it('finds a session whose own id starts with session-, by its id and by its workflow id', async () => {
    expect(prefixed.workflowId).toBe(`session-${prefixed.id}`);
    const [byId, byWorkflowId] = await Promise.all([
      cli(['inspect', prefixed.id]),
      cli(['inspect', prefixed.workflowId]),
    ]);
    for (const run of [byId, byWorkflowId]) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`session ${prefixed.id} (workflow ${prefixed.workflowId})`);
    }
  });

  it('reads a history file too', async () => {
    const run = await cli(['inspect', fixture('timeout-fail-closed.json')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /\n1 +UserPromptSubmit +1 +timeout +Hook UserPromptSubmit exceeded 100ms/,
    );
  });
});

describe('replay', () => {
  it('replays a session by id against the current workflow code: deterministic', async () => {
    const run = await cli(['replay', closed.id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('deterministic: yes\n');
  });

  it('replays a session by its workflow id (session-<id>): deterministic', async () => {
    const run = await cli(['replay', closed.workflowId]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('deterministic: yes\n');
  });

  it('replays a committed history file: deterministic', async () => {
    const run = await cli(['replay', fixture('session-end-failed-then-closed.json')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('deterministic: yes\n');
  });

  it("replays a session that ran to its end without an ERROR line (the replayer has none of the worker's sinks)", async () => {
    const run = await cli(['replay', fixture('prompts-and-close.json')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('deterministic: yes\n');
    expect(run.stderr).not.toMatch(/ERROR/);
  });

  it('a run no workflow task has run in yet (only its start) has nothing to replay: yes, at once', async () => {
    const json = JSON.parse(readFileSync(fixture('prompts-and-close.json'), 'utf8')) as {
      events: unknown[];
    };
    const path = join(scratch, 'just-started.json');
    writeFileSync(path, JSON.stringify({ events: json.events.slice(0, 1) }));
    const run = await cli(['replay', path]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      'deterministic: yes (no workflow task has run yet: nothing to replay)\n',
    );
  });

  it('reports a history the code does not match: NO, where, and why', async () => {
    const json = JSON.parse(readFileSync(fixture('prompts-and-close.json'), 'utf8')) as {
      events: Array<Record<string, unknown> & { eventId: string }>;
    };
    const scheduled = json.events.filter((e) => {
      const a = e.activityTaskScheduledEventAttributes as { activityType: { name: string } };
      return a?.activityType.name === 'dispatchHook';
    })[1]!;
    (
      scheduled.activityTaskScheduledEventAttributes as { activityType: { name: string } }
    ).activityType.name = 'renamedHookActivity';
    const path = join(scratch, 'tampered.json');
    writeFileSync(path, JSON.stringify(json));
    const run = await cli(['replay', path]);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('deterministic: NO');
    expect(lines[1]).toBe(`  where: history event ${scheduled.eventId} (ActivityTaskScheduled)`);
    expect(lines[2]).toMatch(/^ {2}why: .*Nondeterminism.*'renamedHookActivity'/);
    expect(run.stderr).toBe('');
  });

  it('a garbage file: one line and exit 1', async () => {
    const path = join(scratch, 'garbage.json');
    writeFileSync(path, 'this is not\na history\n');
    expectOneLineError(await cli(['replay', path]), 1, /garbage\.json is not JSON/);
    const notHistory = join(scratch, 'not-history.json');
    writeFileSync(notHistory, JSON.stringify({ hello: 'world' }));
    expectOneLineError(await cli(['replay', notHistory]), 1, /is not a Temporal history/);
    expectOneLineError(
      await cli(['replay', join(scratch, 'missing.json')]),
      1,
      /no such file: .*missing\.json/,
    );
  });
});

describe('errors', () => {
  it('an unknown session: one line and exit 1, for every command that takes one', async () => {
    const id = `no-such-${randomUUID()}`;
    const runs = await Promise.all([
      cli(['inspect', id]),
      cli(['replay', id]),
      cli(['pending', id]),
      cli(['approve', id, 'req-1']),
      cli(['deny', id, 'req-1']),
    ]);
    for (const run of runs) expectOneLineError(run, 1, new RegExp(`no session '${id}'`));
  });

  it('an unreachable server: one line and exit 1, without waiting out --timeout', async () => {
    // A refused port fails at once; the bound only tells "at once" from "after 120 s".
    const run = await cli(['sessions', '--address', '127.0.0.1:1', '--timeout', '120s']);
    expectOneLineError(run, 1, /cannot reach Temporal at 127\.0\.0\.1:1/);
    expect(run.ms).toBeLessThan(60_000);
  }, 180_000);

  it('usage errors: one line and exit 2', async () => {
    const runs = await Promise.all([
      cli([]),
      cli(['inspect']),
      cli(['frobnicate']),
      cli(['sessions', '--limit', 'ten']),
      cli(['approve', 'a', 'b', '--interrupt']),
      cli(['approve', 'a', 'b', '--input', '{not json']),
      cli(['inspect', 'a', 'b']),
      cli(['pending', 'a', '--timeout', 'soon']),
      cli(['approve', 'a', 'b', '--timeout', '0']),
      cli(['golden', 'a.ts', 'b', '--timeout', '1s']),
    ]);
    const patterns = [
      /missing command/,
      /inspect: missing <sessionId/,
      /unknown command 'frobnicate'/,
      /--limit must be a positive integer/,
      /approve does not take --interrupt/,
      /--input is not valid JSON/,
      /unexpected argument 'b'/,
      /--timeout must be a positive duration \(milliseconds, or 500ms, 10s, 2m\), got 'soon'/,
      /--timeout must be a positive duration .*got '0'/,
      /golden does not take --timeout/,
    ];
    runs.forEach((run, i) => expectOneLineError(run, 2, patterns[i]!));
  });

  it("--version and -v print the package's version and exit 0", async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    const runs = await Promise.all([cli(['--version']), cli(['-v'])]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(`${version}\n`);
      expect(run.stderr).toBe('');
    }
  });

  it('--help prints the commands and exits 0', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    for (const command of ['sessions', 'inspect', 'replay', 'pending', 'approve', 'deny', 'dev']) {
      expect(run.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    expect(run.stdout).toMatch(/^ {2}--timeout T .*\n.*\(default: 10s\)$/m);
    expect(run.stdout).toMatch(/^ {2}-v, --version +the version of durable-agent-sdk/m);
    expect(run.stdout).toMatch(
      /golden: 0 no decision changed, 1 some changed, 2 bad input or usage/,
    );
  });
});

describe('pending, approve, deny', () => {
  async function askingSession(prompt: string) {
    const session = await agent.createSession({ sessionId: `cli-ask-${randomUUID()}` });
    const response = session.send(prompt);
    await waitFor(async () => (await session.pendingPermissions()).length === 1, 20_000, 'ask');
    return { session, response };
  }

  async function pendingViaCli(session: Session) {
    const run = await cli(['pending', session.id, '--json']);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Array<{ requestId: string; toolName: string; digest: string }>;
  }

  it('approve with an edited input: the tool runs once with it', async () => {
    const { session, response } = await askingSession('write approved');
    // By its workflow id, as the Web UI shows it.
    const table = await cli(['pending', session.workflowId]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^REQUEST +DIGEST +TOOL +KIND +INPUT +ASKED +DEADLINE\n/);
    expect(table.stdout).toMatch(/ Write +write +\{"file_path":"approved\.txt"/);

    const [request] = await pendingViaCli(session);
    expect(request?.toolName).toBe('Write');
    const run = await cli([
      'approve',
      session.workflowId,
      request!.requestId,
      '--input',
      JSON.stringify({ file_path: 'approved.txt', content: 'approved from the CLI' }),
    ]);
    expect(run.code, run.stderr).toBe(0);
    // Bound to the digest it read from the request, which it prints for the record.
    expect(run.stdout).toBe(
      `approved ${request!.requestId} in session ${session.id} (digest ${request!.digest.slice(0, 12)}, the pending request's)\n`,
    );
    const result = await response;
    expect(result.status).toBe('completed');
    expect(result.toolCalls.map((c) => c.status)).toEqual(['success']);
    expect(readFileSync(join(workspace, 'approved.txt'), 'utf8')).toBe('approved from the CLI');
    expect(await pendingViaCli(session)).toEqual([]);

    // The decided request is gone: another answer, either way, is refused and says how it
    // was decided, by the CLI's default identity (no --identity was given).
    const decided =
      `request ${request!.requestId} \\(Write approved\\.txt\\) was already approved by ` +
      `${escapeRegExp(cliDefaultIdentity)} at \\S+Z`;
    // (At once: each only reads the history, and nine CLI calls one after another took most
    // of the test's minute on a loaded machine.)
    const refused = await Promise.all(
      [
        ['deny', session.id, request!.requestId],
        ['approve', session.id, request!.requestId],
        ['approve', session.id, request!.requestId, '--input', '{"file_path":"other.txt"}'],
      ].map((again) => cli(again)),
    );
    for (const run of refused) {
      expectOneLineError(run, 1, new RegExp(`^durable-agent: ${decided}; nothing was sent$`));
    }
    // The same answer again (the same edited input, its keys in another order) is done, as
    // the API's retried approve() is: exit 0, saying by whom and when; the tool ran once.
    const same = await cli([
      'approve',
      session.id,
      request!.requestId,
      '--input',
      JSON.stringify({ content: 'approved from the CLI', file_path: 'approved.txt' }),
    ]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toBe('');
    expect(same.stdout).toMatch(
      new RegExp(`^${decided}: the same answer, applied once; nothing was sent\\n$`),
    );
    expect(readFileSync(join(workspace, 'approved.txt'), 'utf8')).toBe('approved from the CLI');
    // And inspect shows the tool's dispatch, open session and all.
    const inspect = await cli(['inspect', session.id]);
    expect(inspect.stdout).toMatch(/\n2 +PreToolUse +Write +1 +continue/);
    expect(inspect.stdout.trimEnd().split('\n').at(-1)).toBe('status: RUNNING');
    await session.close();
    // Seven CLI processes one after another (each loads Temporal's client: 2 s and more at
    // load 20 on 2 cores): 57 s of the default 60 s in one such run.
  }, 180_000);

  it('deny with a message and --interrupt: the tool never runs and the prompt stops', async () => {
    const { session, response } = await askingSession('write denied');
    const [request] = await pendingViaCli(session);
    const run = await cli([
      'deny',
      session.id,
      request!.requestId,
      '--message',
      'not today',
      '--interrupt',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      `denied ${request!.requestId} in session ${session.id} (interrupt) (digest ${request!.digest.slice(0, 12)}, the pending request's)\n`,
    );
    const result = await response;
    expect(result.status).toBe('interrupted');
    expect(result.toolCalls.map((c) => c.status)).toEqual(['denied']);
    expect(() => readFileSync(join(workspace, 'denied.txt'))).toThrow();

    // The same denial again is done (exit 0, by whom and when); another one is refused.
    const decided =
      `request ${request!.requestId} \\(Write denied\\.txt\\) was already denied by ` +
      `${escapeRegExp(cliDefaultIdentity)} at \\S+Z: "not today"`;
    const same = await cli([
      'deny',
      session.id,
      request!.requestId,
      '--message',
      'not today',
      '--interrupt',
    ]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toMatch(
      new RegExp(`^${decided}: the same answer, applied once; nothing was sent\\n$`),
    );
    for (const other of [
      ['--message', 'not today'],
      ['--message', 'not now', '--interrupt'],
    ]) {
      expectOneLineError(
        await cli(['deny', session.id, request!.requestId, ...other]),
        1,
        new RegExp(`^durable-agent: ${decided}; nothing was sent$`),
      );
    }
    await session.close();
  });
});

describe('no worker polling the session', () => {
  it('a session no worker ever polled: pending, approve and deny say so at once, naming its task queue', async () => {
    const taskQueue = uniqueTaskQueue('cli-no-worker');
    const id = `cli-no-worker-${randomUUID()}`;
    // Started straight on a queue nobody polls: it never runs.
    const handle = await client.workflow.start(SESSION_WORKFLOW, {
      workflowId: sessionWorkflowId(id),
      taskQueue,
      args: [{ sessionId: id }],
      memo: { sessionId: id },
    });
    try {
      const [pending, approve, deny] = await Promise.all([
        cli(['pending', id, '--timeout', '60s']),
        cli(['approve', id, 'req-1', '--timeout', '60s']),
        cli(['deny', id, 'req-1', '--timeout', '60s']),
      ]);
      const none = `session '${id}' has no worker: no worker has polled workflow task queue '${taskQueue}' in the last 5 minutes`;
      expectOneLineError(
        pending!,
        1,
        new RegExp(`${none}; its permission requests are read through the agent's worker`),
      );
      for (const [run, verb] of [
        [approve!, 'approval'],
        [deny!, 'denial'],
      ] as const) {
        expectOneLineError(
          run,
          1,
          new RegExp(
            `${none}; nothing was sent\\. The ${verb} is applied by the agent's worker: .*pass --wait`,
          ),
        );
      }
      // At once: none of them waited for its 60 s bound.
      for (const run of [pending!, approve!, deny!]) expect(run.ms).toBeLessThan(60_000);

      // --wait sends it and waits for a worker, within --timeout. The bound covers connecting
      // and finding the session too, and the note comes 1 s into the wait: 8 s leaves room
      // for both on a loaded machine (2 s did not, at load 20 on 2 cores).
      const waited = await cli(['approve', id, 'req-1', '--wait', '--timeout', '8s']);
      expect(waited.code, waited.stderr).toBe(1);
      expect(waited.stdout).toBe('');
      const lines = waited.stderr.trimEnd().split('\n');
      expect(lines, waited.stderr).toHaveLength(2);
      expect(lines[0]).toMatch(
        new RegExp(
          `^waiting up to [\\d.]+ m?s for a worker of task queue '${taskQueue}' to apply the approval \\.\\.\\.$`,
        ),
      );
      expect(lines[1]).toMatch(
        new RegExp(
          `^durable-agent: the approval of req-1 was sent to session '${id}' but not applied within 8 s: ` +
            `no worker has polled workflow task queue '${taskQueue}' in the last 5 minutes; ` +
            `it may still apply when a worker polls '${taskQueue}' .*check with: durable-agent pending ${id}$`,
        ),
      );
      expect(waited.ms).toBeGreaterThanOrEqual(2000);
    } finally {
      await handle.terminate('cli test over');
    }
  }, 120_000);

  it('a worker that stopped: pending and approve give up after --timeout naming the queue, the refused approval is never applied, and approve --wait applies once a worker polls again', async () => {
    const taskQueue = uniqueTaskQueue('cli-worker-gone');
    const options: AgentOptions = {
      model: writingModel(),
      workspaceRoots: [workspace],
      advanced: {
        hooks: { [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })] },
        temporal: { address: temporalAddress(), taskQueue },
      },
    };
    let worker: AgentWorker | undefined = await createAgentWorker(options);
    const agentClient = await createAgentClient(options);
    const tag = randomUUID();
    try {
      const ask = async (name: string) => {
        const session = await agentClient.createSession({ sessionId: `cli-gone-${name}-${tag}` });
        const response = session.send(`write ${name}-${tag}`);
        // Awaited below; if the test fails first, its rejection at close is not an unhandled one.
        response.catch(() => undefined);
        await waitFor(async () => (await session.pendingPermissions()).length === 1, 20_000);
        const [request] = await session.pendingPermissions();
        return { session, response, requestId: request!.requestId };
      };
      const refused = await ask('refused');
      const waited = await ask('waited');
      await worker.shutdown();
      worker = undefined;

      const pending = await cli(['pending', refused.session.id, '--timeout', '2s']);
      expectOneLineError(
        pending,
        1,
        new RegExp(
          `^durable-agent: no answer from session '${refused.session.id}' within 2 s: no worker of ` +
            `its task queue '${taskQueue}' answered \\(.*workflow task queue '${taskQueue}'.*\\); ` +
            "start the agent's worker, or pass a longer --timeout$",
        ),
      );
      const approve = await cli([
        'approve',
        refused.session.id,
        refused.requestId,
        '--input',
        JSON.stringify({ file_path: `refused-${tag}.txt`, content: 'refused approval' }),
        '--timeout',
        '2s',
      ]);
      expectOneLineError(
        approve,
        1,
        new RegExp(
          `no answer from session '${refused.session.id}' within 2 s: .*; nothing was sent; ` +
            "start the agent's worker and run approve again, or pass --wait",
        ),
      );

      // approve --wait: sent while no worker polls, applied when one does.
      let waiting = false;
      const waitRun = cli(
        ['approve', waited.session.workflowId, waited.requestId, '--wait', '--timeout', '90s'],
        { onStderr: (text) => (waiting ||= /waiting up to .* for a worker/.test(text)) },
      );
      await waitFor(() => waiting, 30_000, 'approve --wait to say it waits for a worker');
      worker = await createAgentWorker(options);
      const run = await waitRun;
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(
        `approved ${waited.requestId} in session ${waited.session.id} (unbound: no digest)\n`,
      );
      const result = await waited.response;
      expect(result.toolCalls.map((c) => c.status)).toEqual(['success']);
      expect(readFileSync(join(workspace, `waited-${tag}.txt`), 'utf8')).toBe('from the model');

      // The refused approval was never sent: with a worker back, its request still waits
      // (a query is answered after the workflow tasks already due, an update's included).
      const still = await cli(['pending', refused.session.id, '--json']);
      expect(still.code, still.stderr).toBe(0);
      expect(
        (JSON.parse(still.stdout) as Array<{ requestId: string }>).map((r) => r.requestId),
      ).toEqual([refused.requestId]);
      const approved = await cli(['approve', refused.session.id, refused.requestId]);
      expect(approved.code, approved.stderr).toBe(0);
      expect((await refused.response).toolCalls.map((c) => c.status)).toEqual(['success']);
      expect(readFileSync(join(workspace, `refused-${tag}.txt`), 'utf8')).toBe('from the model');
      await Promise.all([refused.session.close(), waited.session.close()]);
    } finally {
      await agentClient.close();
      await worker?.shutdown();
    }
  }, 180_000);
});

describe('dev', () => {
  it('runs an agent module on an embedded server until SIGINT, then stops cleanly', async () => {
    const modulePath = join(scratch, 'dev-agent.mts');
    const testing = pathToFileURL(join(repoRoot, 'src', 'testing', 'index.ts')).href;
    const index = pathToFileURL(join(repoRoot, 'src', 'index.ts')).href;
    writeFileSync(
      modulePath,
      [
        `import { HookEvent } from '${index}';`,
        `import { scriptedModel } from '${testing}';`,
        'export default {',
        "  model: scriptedModel(() => 'hello from dev'),",
        "  advanced: { hooks: { [HookEvent.SessionStart]: [async () => ({ action: 'continue' })] } },",
        '};',
        '',
      ].join('\n'),
    );
    let address: string | undefined;
    const dev = cli(['dev', modulePath], {
      onStdout: (text) => {
        address ??= /Temporal dev server: (\S+)/.exec(text)?.[1];
      },
    });
    try {
      await waitFor(() => address !== undefined, 60_000, 'the dev server address');
      const options = (await import(pathToFileURL(modulePath).href)) as {
        default: Parameters<typeof createAgent>[0];
      };
      // A client of the same definition drives a session the dev worker serves.
      const { createAgentClient } = await import('../../../src/index.js');
      const devClient = await createAgentClient({
        ...options.default,
        advanced: { ...options.default.advanced, temporal: { address: address! } },
      });
      try {
        const session = await devClient.createSession({ sessionId: 'dev-session' });
        expect((await session.send('hi')).text()).toBe('hello from dev');
        await session.close();
      } finally {
        await devClient.close();
      }
      const inspect = await cli(['inspect', 'dev-session', '--address', address!]);
      expect(inspect.stdout).toMatch(/\n0 +SessionStart +1 +continue/);
    } finally {
      dev.child.kill('SIGINT');
    }
    const run = await dev;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Worker: .*dev-agent\.mts on task queue 'durable-agent\.default'/);
    expect(run.stderr).toMatch(/stopping \(SIGINT\) \.\.\.\nstopped\n$/);
    // The server went with it.
    await expect(Connection.connect({ address: address!, connectTimeout: 1000 })).rejects.toThrow();
  }, 90_000);
});
