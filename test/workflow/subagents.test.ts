/**
 * Sub-agents in the session workflow: a `Task` call goes through the parent's tool pipeline
 * and, when it runs, starts a child `sessionWorkflow`. The real workflow code on the
 * time-skipping server, its activities replaced by stubs that answer by session (a child's
 * activity inputs carry its `lineage`), as `session-workflow.test.ts` does.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abortReasonFor } from '../../activities/abort-reason.js';
import { HookEvent } from '../../src/common/hook-events.js';
import { Queries, Updates, type AbortRecord, type SendResult } from '../../src/common/messages.js';
import type {
  CheckPermissionOutput,
  DispatchHookInput,
  HookDispatchOutcome,
  ModelStepInput,
  ModelStepOutput,
  ToolCallDescription,
} from '../../src/common/activity-io.js';
import type { ConversationMessage } from '../../src/common/conversation.js';
import { taskTimeoutMessage } from '../../src/common/subagents.js';
import type { SessionWorkflowInput, SubagentSpec } from '../../src/common/workflow-io.js';
import { startTimeSkippingServer } from '../../src/server/test-server.js';
import { workflowBundle } from '../../src/worker/workflow-code.js';
import { timelineFromHistory } from '../../src/history/timeline.js';
import { waitFor } from '../helpers/common.js';
import { settleStub } from '../helpers/settle-stub.js';

type Server = Awaited<ReturnType<typeof startTimeSkippingServer>>;
let server: Server;
let client: Client;
let connection: NativeConnection;

beforeAll(async () => {
  server = await startTimeSkippingServer();
  client = new Client({ connection: await Connection.connect({ address: server.address }) });
  connection = await NativeConnection.connect({ address: server.address });
}, 120_000);

afterAll(async () => {
  await connection?.close();
  await client?.connection.close();
  await server?.stop();
});

/** What the stubs answer; each test scripts what it is about. */
interface Script {
  /** A dispatch's outcome (by default every callback continues). */
  dispatch?: (input: DispatchHookInput) => HookDispatchOutcome | Promise<HookDispatchOutcome>;
  /** A model step's output; `agentPath` is `main` for the parent. */
  model: (agentPath: string, step: number, input: ModelStepInput) => Promise<ModelStepOutput>;
  permission?: CheckPermissionOutput;
  /** `awaitHookSettled`: resolves when a callback that outlived its dispatch settles. */
  settled?: Promise<void>;
}

/** What the stubs saw. */
interface Seen {
  dispatched: DispatchHookInput[];
  /** The tools `executeTool` ran, by name. */
  executed: string[];
  /** Of each, whether its input said it may run again after a lost worker. */
  idempotent: boolean[];
}

const completed = (outputs: object[] = [{}]) =>
  ({
    status: 'completed',
    outputs: outputs.map((o) => ({ action: 'continue', ...o })),
    callbackCount: outputs.length,
    durationMs: 1,
  }) as HookDispatchOutcome;

const taskCall = (input: Record<string, string>, toolUseId = 't1'): ModelStepOutput => ({
  text: '',
  toolCalls: [{ toolUseId, toolName: 'Task', input }],
  finishReason: 'tool-calls',
});

const answer = (text: string): ModelStepOutput => ({ text, finishReason: 'stop' });

const researcherTask = {
  description: 'find the bug',
  prompt: 'Find the bug in parser.ts',
  subagent_type: 'researcher',
};

/** Two sub-agents; the researcher runs Bash (an `execute` tool) and has lifecycle hooks. */
function subagent(name: string, overrides: Partial<SubagentSpec> = {}): SubagentSpec {
  return {
    name,
    tools: [{ name: 'Bash', kind: 'execute' }],
    maxTurns: 5,
    timeoutMs: 60_000,
    hookCounts: {
      [HookEvent.SessionStart]: 1,
      [HookEvent.SessionEnd]: 1,
      [HookEvent.UserPromptSubmit]: 1,
    },
    permission: { preset: 'default' },
    mayUse: [],
    ...overrides,
  };
}

/**
 * Run `body` against a parent session with sub-agents on a worker with stub activities, and
 * return what the stubs saw.
 */
async function withParent(
  script: Script,
  input: Partial<SessionWorkflowInput>,
  body: (parent: ReturnType<typeof sessionHandle>) => Promise<void>,
): Promise<Seen> {
  const taskQueue = `subagents-test-${randomUUID()}`;
  const cleanupQueue = `${taskQueue}/cleanup`;
  const seen: Seen = { dispatched: [], executed: [], idempotent: [] };
  const activities = {
    async dispatchHook(dispatch: DispatchHookInput) {
      seen.dispatched.push(dispatch);
      const outcome = (await script.dispatch?.(dispatch)) ?? completed();
      return outcome.status === 'timeout' ? { ...outcome, cleanupQueue } : outcome;
    },
    async modelStep(step: ModelStepInput): Promise<ModelStepOutput> {
      return script.model(step.lineage?.agentPath ?? 'main', step.step, step);
    },
    async describeToolCall(call: { toolName: string }): Promise<ToolCallDescription> {
      return {
        known: true,
        kind: call.toolName === 'Bash' || call.toolName === 'Upsert' ? 'execute' : 'readonly',
        affectedPaths: [],
        // A read-only tool whose worker says it is not idempotent, a write one that is.
        ...(call.toolName === 'PaidLookup' ? { idempotent: false } : {}),
        ...(call.toolName === 'Upsert' ? { idempotent: true } : {}),
      };
    },
    async checkPermission(): Promise<CheckPermissionOutput> {
      return script.permission ?? { ok: true, result: { behavior: 'allow' } };
    },
    async executeTool(call: { toolName: string; idempotent?: boolean }) {
      seen.executed.push(call.toolName);
      seen.idempotent.push(call.idempotent === true);
      return { status: 'success', model: 'ran' };
    },
    async publishStreamEvents() {
      return undefined;
    },
  };
  const settle = settleStub(script.settled);
  const bundle = await workflowBundle();
  const worker = await Worker.create({ connection, taskQueue, workflowBundle: bundle, activities });
  const cleanup = await Worker.create({ connection, taskQueue: cleanupQueue, activities: settle });
  const sessionId = `parent-${randomUUID()}`;
  await client.workflow.start('sessionWorkflow', {
    taskQueue,
    workflowId: `session-${sessionId}`,
    args: [
      {
        sessionId,
        agentName: 'subagents-test',
        hookCounts: {
          [HookEvent.PreToolUse]: 1,
          [HookEvent.PostToolUse]: 1,
          [HookEvent.PostToolUseFailure]: 1,
        },
        hookTimeoutMs: 60_000,
        sessionEndHookTimeoutMs: 60_000,
        maxTurns: 10,
        taskQueue,
        dispatchHeartbeatTimeoutMs: 5_000,
        tools: [{ name: 'Task', kind: 'readonly' }],
        subagents: {
          maxDepth: 1,
          maxConcurrent: 4,
          timeoutMs: 60_000,
          agents: [subagent('researcher'), subagent('writer')],
        },
        ...input,
      } satisfies SessionWorkflowInput,
    ],
  });
  await worker.runUntil(
    cleanup.runUntil(async () => {
      const parent = sessionHandle(sessionId);
      await parent.handle.executeUpdate(Updates.ready);
      await body(parent);
    }),
  );
  return seen;
}

function sessionHandle(sessionId: string) {
  const handle = client.workflow.getHandle(`session-${sessionId}`);
  return {
    sessionId,
    handle,
    send: (prompt: string) =>
      handle.executeUpdate(Updates.send, {
        args: [{ requestId: randomUUID(), prompt }],
      }) as Promise<SendResult>,
    /** The child workflows the parent's history started. */
    childrenStarted: async () => {
      const history = await handle.fetchHistory();
      return (history.events ?? []).filter(
        (e) => e.startChildWorkflowExecutionInitiatedEventAttributes,
      );
    },
    /** What the model read back for each tool call of the prompt. */
    toolResults: async () => {
      const conversation: ConversationMessage[] = await handle.query(Queries.conversation);
      return conversation.flatMap((m) => (m.role === 'tool' ? m.results : []));
    },
  };
}

/**
 * The kinds of a history's events, sorted, but workflow tasks: how many workflow tasks a run
 * takes depends on timing (a child that ends while a task runs makes one more), not on it.
 */
function historyEvents(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): string[] {
  return (history.events ?? [])
    .map((event) => Object.keys(event).find((key) => key.endsWith('EventAttributes')) ?? '?')
    .filter((kind) => !kind.startsWith('workflowTask'))
    .map((kind) => kind.replace(/EventAttributes$/, ''))
    .sort();
}

/** The dispatches of one session (`main`: the parent), by event. */
function eventsOf(seen: Seen, agentPath: string): HookEvent[] {
  return seen.dispatched
    .filter((d) => (d.lineage?.agentPath ?? 'main') === agentPath)
    .map((d) => d.event);
}

describe('the parent decides whether a sub-agent starts', () => {
  it('a PreToolUse skip of the Task call starts no child; the model reads the skip', async () => {
    const seen = await withParent(
      {
        dispatch: (d) =>
          d.event === HookEvent.PreToolUse
            ? completed([{ action: 'skip', reason: 'no sub-agents today' }])
            : completed(),
        model: async (_path, step) => (step === 0 ? taskCall(researcherTask) : answer('done')),
      },
      {},
      async (parent) => {
        expect(await parent.send('go')).toMatchObject({ status: 'completed', text: 'done' });
        expect(await parent.childrenStarted()).toEqual([]);
        expect(await parent.toolResults()).toMatchObject([{ model: 'no sub-agents today' }]);
      },
    );
    expect(seen.dispatched.filter((d) => d.lineage)).toEqual([]);
  });

  it('a permission function that denies the Task call starts no child', async () => {
    await withParent(
      {
        permission: { ok: true, result: { behavior: 'deny', message: 'not here' } },
        model: async (_path, step) => (step === 0 ? taskCall(researcherTask) : answer('done')),
      },
      { permission: { handler: 'function' } },
      async (parent) => {
        const result = await parent.send('go');
        expect(result.toolCalls).toMatchObject([{ toolName: 'Task', status: 'denied' }]);
        expect(await parent.childrenStarted()).toEqual([]);
      },
    );
  });

  it('an unknown sub-agent name is a tool error naming the known ones; no child starts', async () => {
    const seen = await withParent(
      {
        model: async (_path, step) =>
          step === 0 ? taskCall({ ...researcherTask, subagent_type: 'nobody' }) : answer('done'),
      },
      {},
      async (parent) => {
        const result = await parent.send('go');
        expect(result.toolCalls).toMatchObject([{ toolName: 'Task', status: 'error' }]);
        expect(await parent.toolResults()).toMatchObject([
          { status: 'error', model: "Unknown sub-agent 'nobody'; known: researcher, writer" },
        ]);
        expect(await parent.childrenStarted()).toEqual([]);
      },
    );
    // The refusal ends at the execution stage: PostToolUseFailure sees it.
    expect(eventsOf(seen, 'main')).toEqual([HookEvent.PreToolUse, HookEvent.PostToolUseFailure]);
  });
});

describe('one child per Task call', () => {
  it('the child runs the prompt as PreToolUse left it, SessionStart and SessionEnd once, and its text is the Task result', async () => {
    const seen = await withParent(
      {
        dispatch: (d) =>
          d.event === HookEvent.PreToolUse && !d.lineage
            ? completed([
                {
                  modifiedInput: {
                    prompt: `[tenant] ${String((d.payload.toolInput as { prompt: string }).prompt)}`,
                  },
                },
              ])
            : completed(),
        model: async (path, step) =>
          path === 'main/researcher'
            ? answer('the bug is on line 3')
            : step === 0
              ? taskCall(researcherTask)
              : answer('done'),
      },
      {},
      async (parent) => {
        expect(await parent.send('go')).toMatchObject({ status: 'completed', text: 'done' });
        const started = await parent.childrenStarted();
        expect(started).toHaveLength(1);
        const childId = `session-${parent.sessionId}/0-t1`;
        expect(started[0]!.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId).toBe(
          childId,
        );
        expect(await parent.toolResults()).toMatchObject([
          { status: 'success', model: 'the bug is on line 3' },
        ]);
        const child = await client.workflow.getHandle(childId).result();
        expect(child).toMatchObject({
          endReason: 'other',
          timeline: [],
          task: { status: 'completed', text: 'the bug is on line 3', toolCalls: 0 },
        });
      },
    );
    expect(eventsOf(seen, 'main/researcher')).toEqual([
      HookEvent.SessionStart,
      HookEvent.UserPromptSubmit,
      HookEvent.SessionEnd,
    ]);
    const submitted = seen.dispatched.find((d) => d.event === HookEvent.UserPromptSubmit);
    expect(submitted?.payload.userPrompt).toBe('[tenant] Find the bug in parser.ts');
    expect(submitted?.lineage).toMatchObject({ depth: 1, subagent: 'researcher' });
    // The parent's PostToolUse sees the child's answer as the Task's output.
    const post = seen.dispatched.find((d) => d.event === HookEvent.PostToolUse);
    expect(post?.payload.toolOutput).toBe('the bug is on line 3');
  });

  it("the child follows its top session's permissionRules: a deny rule refuses its Bash even under its bypass-permissions", async () => {
    const seen = await withParent(
      {
        model: async (path, step) =>
          path === 'main/researcher'
            ? step === 0
              ? {
                  text: '',
                  toolCalls: [
                    { toolUseId: 'b1', toolName: 'Bash', input: { command: 'rm -rf /' } },
                  ],
                  finishReason: 'tool-calls',
                }
              : answer('could not run it')
            : step === 0
              ? taskCall(researcherTask)
              : answer('done'),
      },
      {
        permissionRules: { allow: [], ask: [], deny: ['Bash'] },
        subagents: {
          maxDepth: 1,
          maxConcurrent: 4,
          timeoutMs: 60_000,
          agents: [subagent('researcher', { permission: { preset: 'bypass-permissions' } })],
        },
      },
      async (parent) => {
        expect(await parent.send('go')).toMatchObject({ status: 'completed', text: 'done' });
        const child = client.workflow.getHandle(`session-${parent.sessionId}/0-t1`);
        await child.result();
        const conversation: ConversationMessage[] = await child.query(Queries.conversation);
        expect(conversation.flatMap((m) => (m.role === 'tool' ? m.results : []))).toMatchObject([
          { toolName: 'Bash', status: 'error', model: "Denied by permissionRules.deny 'Bash'" },
        ]);
      },
    );
    // The Task call itself ran (no rule names it); the child's Bash never did.
    expect(seen.executed).toEqual([]);
  });

  it('a Task call of a child at maxDepth is a tool error naming the limit; no grandchild starts', async () => {
    await withParent(
      {
        model: async (path, step) => {
          if (path === 'main') return step === 0 ? taskCall(researcherTask) : answer('done');
          if (step > 0) return answer('could not delegate');
          return taskCall({ ...researcherTask, subagent_type: 'writer' }, 'c1');
        },
      },
      {
        subagents: {
          maxDepth: 1,
          maxConcurrent: 4,
          timeoutMs: 60_000,
          agents: [subagent('researcher', { mayUse: ['writer'] }), subagent('writer')],
        },
      },
      async (parent) => {
        expect(await parent.send('go')).toMatchObject({ status: 'completed', text: 'done' });
        expect(await parent.childrenStarted()).toHaveLength(1);
        const child = client.workflow.getHandle(`session-${parent.sessionId}/0-t1`);
        const conversation: ConversationMessage[] = await child.query(Queries.conversation);
        expect(conversation.flatMap((m) => (m.role === 'tool' ? m.results : []))).toMatchObject([
          { status: 'error', model: 'maxDepth 1 reached: main/researcher is at depth 1' },
        ]);
        const history = await child.fetchHistory();
        expect(historyEvents(history)).not.toContain('startChildWorkflowExecutionInitiated');
      },
    );
  });

  it("the parent's PostToolUse modifiedOutput is what the parent's next step reads", async () => {
    await withParent(
      {
        dispatch: (d) =>
          d.event === HookEvent.PostToolUse && !d.lineage
            ? completed([{ modifiedOutput: `checked: ${String(d.payload.toolOutput)}` }])
            : completed(),
        model: async (path, step) =>
          path === 'main/researcher'
            ? answer('line 3')
            : step === 0
              ? taskCall(researcherTask)
              : answer('done'),
      },
      {},
      async (parent) => {
        expect(await parent.send('go')).toMatchObject({ status: 'completed', text: 'done' });
        expect(await parent.toolResults()).toMatchObject([
          { status: 'success', model: 'checked: line 3' },
        ]);
      },
    );
  });

  it("the parent's history has the same events (workflow tasks aside) for a child making 1 or 20 tool calls", async () => {
    const parentEvents = async (calls: number) => {
      let events: string[] = [];
      await withParent(
        {
          model: async (path, step) => {
            if (path === 'main') return step === 0 ? taskCall(researcherTask) : answer('done');
            return step < calls
              ? {
                  text: '',
                  toolCalls: [
                    { toolUseId: `b${step}`, toolName: 'Bash', input: { command: 'ls' } },
                  ],
                  finishReason: 'tool-calls',
                }
              : answer(`made ${calls} calls`);
          },
        },
        {
          subagents: {
            maxDepth: 1,
            maxConcurrent: 4,
            timeoutMs: 60_000,
            agents: [
              subagent('researcher', {
                maxTurns: 25,
                permission: { preset: 'bypass-permissions' },
              }),
            ],
          },
        },
        async (parent) => {
          expect(await parent.send('go')).toMatchObject({ status: 'completed', text: 'done' });
          expect(await parent.toolResults()).toMatchObject([
            { status: 'success', model: `made ${calls} calls` },
          ]);
          events = historyEvents(await parent.handle.fetchHistory());
        },
      );
      return events;
    };
    const one = await parentEvents(1);
    expect(one).toContain('childWorkflowExecutionCompleted');
    expect(await parentEvents(20)).toEqual(one);
  });

  it('past its timeoutMs the child is cancelled: its SessionEnd runs, then the Task call fails with the timeout error', async () => {
    let childStepStarted = false;
    const seen = await withParent(
      {
        model: async (path, step) => {
          if (path === 'main') return step === 0 ? taskCall(researcherTask) : answer('done');
          // The child's model step hangs until it is cancelled (heartbeats carry the cancel).
          childStepStarted = true;
          const ctx = Context.current();
          const beat = setInterval(() => ctx.heartbeat(), 100);
          try {
            await Promise.race([ctx.cancelled, delay(30_000)]);
          } finally {
            clearInterval(beat);
          }
          return answer('too late');
        },
      },
      {
        subagents: {
          maxDepth: 1,
          maxConcurrent: 4,
          timeoutMs: 60_000,
          agents: [subagent('researcher', { timeoutMs: 2_000 }), subagent('writer')],
        },
      },
      async (parent) => {
        const sent = parent.send('go');
        await waitFor(() => childStepStarted, 30_000, "the child's model step");
        await server.sleep(2_000);
        expect(await sent).toMatchObject({ status: 'completed', text: 'done' });
        const message = taskTimeoutMessage('main/researcher', 2_000);
        expect(await parent.toolResults()).toMatchObject([{ status: 'error', model: message }]);
      },
    );
    const ends = seen.dispatched.filter((d) => d.event === HookEvent.SessionEnd);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ payload: { reason: 'cancelled' } });
    // The child's SessionEnd came before the parent's PostToolUseFailure of the Task call.
    const order = seen.dispatched.map((d) => `${d.lineage?.agentPath ?? 'main'} ${d.event}`);
    expect(order.indexOf('main/researcher SessionEnd')).toBeLessThan(
      order.indexOf('main PostToolUseFailure'),
    );
    const failure = seen.dispatched.find((d) => d.event === HookEvent.PostToolUseFailure);
    expect(failure?.payload.error).toMatchObject({ code: 'SUBAGENT_TIMEOUT' });
  });
});

/** Several `Task` calls in one model step. */
const taskCalls = (...calls: [string, Record<string, string>][]): ModelStepOutput => ({
  text: '',
  toolCalls: calls.map(([toolUseId, input]) => ({ toolUseId, toolName: 'Task', input })),
  finishReason: 'tool-calls',
});

const writerTask = { description: 'write it up', prompt: 'Write the fix', subagent_type: 'writer' };

/**
 * An activity that hangs until the workflow cancels it (heartbeats carry the cancel), then
 * calls `onCancel` with its context and ends as cancelled. In a dispatch (whose cancel the
 * workflow waits for) it sees the cancel before the session goes on.
 */
async function hangUntilCancelled<T>(fallback: T, onCancel?: (ctx: Context) => Promise<void>) {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), 100);
  try {
    await Promise.race([ctx.cancelled, delay(30_000)]);
  } catch (error) {
    await onCancel?.(ctx);
    throw error;
  } finally {
    clearInterval(beat);
  }
  return fallback;
}

/** What a child's hook callback would get as its signal's reason, and the records behind it. */
interface ReasonSeen {
  path: string;
  /** The child's own `abortReason` record. */
  own: AbortRecord | null;
  /** What the parent's `subagentAbortReason` answered for the child. */
  parents: AbortRecord | null;
  /** What `abortReasonFor` resolved: the callback's `abortSignal.reason`. */
  reason: unknown;
}

/** In a child's dispatch cancelled by its parent: what its callbacks would be told. */
async function reasonSeen(path: string, ctx: Context): Promise<ReasonSeen> {
  const childId = ctx.info.workflowExecution!.workflowId;
  const own = await client.workflow.getHandle(childId).query(Queries.abortReason);
  const parents = own?.askParent
    ? await client.workflow.getHandle(own.askParent).query(Queries.subagentAbortReason, childId)
    : null;
  return { path, own, parents, reason: await abortReasonFor(ctx, 1) };
}

/** The dispatches of `event` as `path event reason` lines, in dispatch order. */
const endsOf = (seen: Seen) =>
  seen.dispatched
    .filter((d) => d.event === HookEvent.SessionEnd)
    .map((d) => `${d.lineage?.agentPath ?? 'main'} ${String(d.payload.reason)}`);

/** The parent's input for a test with SessionEnd hooks in the parent too. */
const withSessionEnd: Partial<SessionWorkflowInput> = {
  hookCounts: {
    [HookEvent.PreToolUse]: 1,
    [HookEvent.PostToolUse]: 1,
    [HookEvent.PostToolUseFailure]: 1,
    [HookEvent.SessionEnd]: 1,
  },
};

describe('consecutive Task calls run side by side', () => {
  it('two Task calls start two children before either completes; results in call order', async () => {
    const started = new Set<string>();
    await withParent(
      {
        model: async (path, step) => {
          if (path === 'main') {
            return step === 0
              ? taskCalls(['t1', researcherTask], ['t2', writerTask])
              : answer('done');
          }
          // Each child waits for the other to be running (at most 15 s: run one after the
          // other, each would answer alone). The writer answers first.
          started.add(path);
          const deadline = Date.now() + 15_000;
          while (started.size < 2 && Date.now() < deadline) await delay(20);
          if (path === 'main/researcher') await delay(300);
          return answer(`${path} saw ${started.size}`);
        },
      },
      {},
      async (parent) => {
        const result = await parent.send('go');
        expect(result).toMatchObject({ status: 'completed', text: 'done' });
        expect(result.toolCalls.map((c) => [c.toolUseId, c.status])).toEqual([
          ['t1', 'success'],
          ['t2', 'success'],
        ]);
        expect(await parent.toolResults()).toMatchObject([
          { toolUseId: 't1', model: 'main/researcher saw 2' },
          { toolUseId: 't2', model: 'main/writer saw 2' },
        ]);
        // Both starts are in the history before the first child's completion.
        const kinds = ((await parent.handle.fetchHistory()).events ?? []).map((e) =>
          e.startChildWorkflowExecutionInitiatedEventAttributes
            ? 'start'
            : e.childWorkflowExecutionCompletedEventAttributes
              ? 'completed'
              : undefined,
        );
        const starts = kinds.flatMap((k, i) => (k === 'start' ? [i] : []));
        expect(starts).toHaveLength(2);
        expect(starts[1]).toBeLessThan(kinds.indexOf('completed'));
      },
    );
  });

  it('maxConcurrent is checked in call order, whichever PreToolUse answers first', async () => {
    await withParent(
      {
        // The first call's PreToolUse answers last.
        dispatch: (d) =>
          d.event === HookEvent.PreToolUse && d.payload.toolUseId === 't1'
            ? delay(500).then(() => completed())
            : completed(),
        model: async (path, step) => {
          if (path !== 'main') return answer(`${path} done`);
          return step === 0
            ? taskCalls(['t1', researcherTask], ['t2', writerTask], ['t3', researcherTask])
            : answer('done');
        },
      },
      {
        subagents: {
          maxDepth: 1,
          maxConcurrent: 1,
          timeoutMs: 60_000,
          agents: [subagent('researcher'), subagent('writer')],
        },
      },
      async (parent) => {
        await parent.send('go');
        const refused = {
          status: 'error',
          model: 'maxConcurrent 1: 1 sub-agents of this session are running',
        };
        expect(await parent.toolResults()).toMatchObject([
          { toolUseId: 't1', status: 'success', model: 'main/researcher done' },
          { toolUseId: 't2', ...refused },
          { toolUseId: 't3', ...refused },
        ]);
        const started = await parent.childrenStarted();
        expect(
          started.map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId),
        ).toEqual([`session-${parent.sessionId}/0-t1`]);
      },
    );
  });
});

describe('abort and close reach the sub-agents first', () => {
  it("an abort of the parent's prompt cancels both children; the send is aborted after their SessionEnd; their hooks get the abort's reason", async () => {
    const seenByChildren: ReasonSeen[] = [];
    const order: string[] = [];
    let running = 0;
    const seen = await withParent(
      {
        // Each child's UserPromptSubmit waits until it is cancelled.
        dispatch: (d) => {
          const path = d.lineage?.agentPath ?? 'main';
          order.push(`${path} ${d.event}`);
          if (d.event !== HookEvent.UserPromptSubmit) return completed();
          running++;
          return hangUntilCancelled(completed(), async (ctx) => {
            seenByChildren.push(await reasonSeen(path, ctx));
          });
        },
        model: async (_path, step) =>
          step === 0 ? taskCalls(['t1', researcherTask], ['t2', writerTask]) : answer('done'),
      },
      withSessionEnd,
      async (parent) => {
        const sent = parent.send('go').then((r) => {
          order.push('send answered');
          return r;
        });
        await waitFor(() => running === 2, 30_000, 'both children running');
        const reason = { name: 'Error', message: 'stop both' };
        const aborted = await parent.handle.executeUpdate(Updates.abort, {
          args: [{ abortId: 'abort-both', reason }],
        });
        expect(aborted).toEqual({ aborted: true });
        const result = await sent;
        expect(result.status).toBe('aborted');
        expect(result.toolCalls.map((c) => [c.toolUseId, c.status])).toEqual([
          ['t1', 'cancelled'],
          ['t2', 'cancelled'],
        ]);
        expect(seenByChildren.map((r) => r.path).sort()).toEqual([
          'main/researcher',
          'main/writer',
        ]);
        for (const child of seenByChildren) {
          expect(child.own).toMatchObject({ askParent: `session-${parent.sessionId}` });
          expect(child.parents).toEqual({ abortId: 'abort-both', reason });
          // Not remembered in this process: a rebuilt Error with the abort's message.
          expect(child.reason).toBeInstanceOf(Error);
          expect(child.reason).toMatchObject({ message: 'stop both' });
        }
      },
    );
    expect(endsOf(seen).sort()).toEqual(['main/researcher cancelled', 'main/writer cancelled']);
    // Both SessionEnds were dispatched before the send answered.
    const answeredAt = order.indexOf('send answered');
    expect(order.indexOf('main/researcher SessionEnd')).toBeLessThan(answeredAt);
    expect(order.indexOf('main/writer SessionEnd')).toBeLessThan(answeredAt);
  });

  it("the Task timeout reaches the child's hooks as SUBAGENT_TIMEOUT", async () => {
    const seenByChildren: ReasonSeen[] = [];
    let running = false;
    await withParent(
      {
        dispatch: (d) => {
          if (d.event !== HookEvent.UserPromptSubmit) return completed();
          running = true;
          return hangUntilCancelled(completed(), async (ctx) => {
            seenByChildren.push(await reasonSeen('main/researcher', ctx));
          });
        },
        model: async (_path, step) => (step === 0 ? taskCall(researcherTask) : answer('done')),
      },
      {
        subagents: {
          maxDepth: 1,
          maxConcurrent: 4,
          timeoutMs: 60_000,
          agents: [subagent('researcher', { timeoutMs: 2_000 })],
        },
      },
      async (parent) => {
        const sent = parent.send('go');
        await waitFor(() => running, 30_000, "the child's UserPromptSubmit");
        await server.sleep(2_000);
        expect(await sent).toMatchObject({ status: 'completed', text: 'done' });
        const message = taskTimeoutMessage('main/researcher', 2_000);
        expect(seenByChildren).toHaveLength(1);
        expect(seenByChildren[0]!.parents).toMatchObject({
          reason: { code: 'SUBAGENT_TIMEOUT', message },
        });
        expect(seenByChildren[0]!.reason).toMatchObject({ code: 'SUBAGENT_TIMEOUT', message });
      },
    );
  });

  it("closing the parent while a child runs ends the child first (its SessionEnd 'cancelled'), then the parent", async () => {
    let running = false;
    const seen = await withParent(
      {
        model: async (path, step) => {
          if (path === 'main') return step === 0 ? taskCall(researcherTask) : answer('done');
          running = true;
          return hangUntilCancelled(answer('too late'));
        },
      },
      withSessionEnd,
      async (parent) => {
        const sent = parent.send('go');
        await waitFor(() => running, 30_000, 'the child running');
        expect(await parent.handle.executeUpdate(Updates.close)).toMatchObject({
          closedNow: true,
          sessionEndRan: true,
        });
        expect(await sent).toMatchObject({ status: 'aborted' });
      },
    );
    expect(endsOf(seen)).toEqual(['main/researcher cancelled', 'main other']);
  });

  it('a cancel of the parent from outside ends the child first, then the parent', async () => {
    let running = false;
    const seen = await withParent(
      {
        model: async (path, step) => {
          if (path === 'main') return step === 0 ? taskCall(researcherTask) : answer('done');
          running = true;
          return hangUntilCancelled(answer('too late'));
        },
      },
      withSessionEnd,
      async (parent) => {
        void parent.send('go').catch(() => undefined);
        await waitFor(() => running, 30_000, 'the child running');
        await parent.handle.cancel();
        // Polled, not awaited with result(): awaiting a result skips the test server's time.
        await waitFor(
          async () => (await parent.handle.describe()).status.name === 'CANCELLED',
          30_000,
          'the parent cancelled',
        );
      },
    );
    expect(endsOf(seen)).toEqual(['main/researcher cancelled', 'main cancelled']);
  });
});

describe('fail-closed holds inside a child', () => {
  it("a child's callback that outlived its timeout refuses the child's next dispatch and holds its SessionEnd until it settles", async () => {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const bash = (toolUseId: string, command: string): ModelStepOutput => ({
      text: '',
      toolCalls: [{ toolUseId, toolName: 'Bash', input: { command } }],
      finishReason: 'tool-calls',
    });
    let childSteps = 0;
    const childEvents: HookEvent[] = [];
    const seen = await withParent(
      {
        settled,
        model: async (path, step) => {
          if (path === 'main') return step === 0 ? taskCall(researcherTask) : answer('done');
          childSteps = step + 1;
          return [bash('b1', 'slow'), bash('b2', 'refused'), answer('child done')][step]!;
        },
        // The child's first PreToolUse outlives its budget; its callback is still running.
        dispatch: (d) => {
          if (d.lineage) childEvents.push(d.event);
          return d.lineage && d.event === HookEvent.PreToolUse
            ? ({
                status: 'timeout',
                callbackCount: 1,
                durationMs: 100,
                settled: false,
                cleanupQueue: '',
                dispatchId: 'child-d-1',
              } as HookDispatchOutcome)
            : completed();
        },
      },
      {
        subagents: {
          maxDepth: 1,
          maxConcurrent: 4,
          timeoutMs: 60_000,
          agents: [
            subagent('researcher', {
              hookCounts: {
                [HookEvent.SessionStart]: 1,
                [HookEvent.SessionEnd]: 1,
                [HookEvent.PreToolUse]: 1,
              },
            }),
            subagent('writer'),
          ],
        },
      },
      async (parent) => {
        const sent = parent.send('go');
        const child = client.workflow.getHandle(`session-${parent.sessionId}/0-t1`);
        // A failed assertion must still let the callback settle, or the worker never stops.
        try {
          // The child's prompt is over; its end waits on the callback still cleaning up.
          await waitFor(
            async () =>
              childSteps === 3 && (await child.query(Queries.describe)).status === 'closing',
            30_000,
            "the child's prompt over and its end waiting",
          );
          expect(await child.query(Queries.describe)).toMatchObject({ pendingCleanups: 1 });
          expect(childEvents).not.toContain(HookEvent.SessionEnd);
          // The second Bash call's PreToolUse was refused without running: an error result.
          const conversation: ConversationMessage[] = await child.query(Queries.conversation);
          const results = conversation.flatMap((m) => (m.role === 'tool' ? m.results : []));
          expect(results).toHaveLength(2);
          expect(results[1]).toMatchObject({ toolUseId: 'b2', status: 'error' });
          expect(JSON.stringify(results[1])).toContain('still cleaning up');
        } finally {
          settle();
        }
        expect(await sent).toMatchObject({ status: 'completed', text: 'done' });
      },
    );
    // One PreToolUse ran in the child (the refused one ran nothing), then SessionEnd once.
    expect(eventsOf(seen, 'main/researcher')).toEqual([
      HookEvent.SessionStart,
      HookEvent.PreToolUse,
      HookEvent.SessionEnd,
    ]);
  });
});

describe('a tool execution says whether it may run again after a lost worker', () => {
  it('a read-only call may, unless its worker says it is not idempotent; a write call only when its worker says it is', async () => {
    const call = (toolUseId: string, toolName: string): ModelStepOutput => ({
      text: '',
      toolCalls: [{ toolUseId, toolName, input: {} }],
      finishReason: 'tool-calls',
    });
    const tools = ['Read', 'PaidLookup', 'Bash', 'Upsert'];
    const seen = await withParent(
      {
        model: async (_path, step) =>
          step < tools.length ? call(`c${step}`, tools[step]!) : answer('done'),
        // Bash and Upsert are write kinds: the default preset would ask; allowed here.
        permission: { ok: true, result: { behavior: 'allow' } },
      },
      {
        permission: { handler: 'function' },
        tools: tools.map((name) => ({
          name,
          kind: name === 'Bash' || name === 'Upsert' ? ('execute' as const) : ('readonly' as const),
        })),
      },
      async (parent) => {
        expect((await parent.send('go')).status).toBe('completed');
      },
    );
    expect(seen.executed).toEqual(tools);
    expect(seen.idempotent).toEqual([true, false, false, true]);
  });
});

describe("a sub-agent under the parent's budget", () => {
  const usage = { inputTokens: 100, outputTokens: 20, totalTokens: 120 };

  it('a child past its Task timeout is charged its whole allotment; the recount agrees', async () => {
    let childStepStarted = false;
    await withParent(
      {
        model: async (path, step) => {
          if (path === 'main')
            return { ...(step === 0 ? taskCall(researcherTask) : answer('done')), usage };
          // The child's model step hangs until the timeout cancels it: its spend is unknown.
          childStepStarted = true;
          await hangUntilCancelled(undefined);
          return answer('too late');
        },
      },
      {
        budget: { caps: { totalTokens: 1000 }, maxOutputTokens: 20 },
        subagents: {
          maxDepth: 1,
          maxConcurrent: 4,
          timeoutMs: 60_000,
          agents: [subagent('researcher', { timeoutMs: 2_000 }), subagent('writer')],
        },
      },
      async (parent) => {
        const sent = parent.send('go');
        await waitFor(() => childStepStarted, 30_000, "the child's model step");
        await server.sleep(2_000);
        // 120 of the parent's step, then the child's 880: nothing is left for another step.
        expect(await sent).toMatchObject({
          status: 'budget_exceeded',
          budgetExceeded: { budget: 'totalTokens', spent: 1000 },
        });
        expect(await parent.childrenStarted()).toHaveLength(1);
        const history = await parent.handle.fetchHistory();
        expect(timelineFromHistory(history).budget?.spent.totalTokens).toBe(1000);
        const description = await parent.handle.query(Queries.describe);
        expect(description.budget?.spent.totalTokens).toBe(1000);
      },
    );
  });
});
