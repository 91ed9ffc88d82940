/**
 * The session workflow alone: the real workflow code on the time-skipping test server, its
 * activities replaced by stubs that answer what each test scripts (as Temporal's samples test
 * a workflow with mocked activities). No hook, model or tool code runs: what is under test is
 * what the workflow makes of each outcome (dispatch outcomes, fail-closed, version refusals,
 * SessionEnd once, rollover). The rollover case runs on the suite's dev server with the same
 * stubs: on the time-skipping server a run that continued as new stalled in 3 of 8 runs under
 * load (the next run never got its first workflow task while time was being skipped).
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookEvent } from '../../src/common/hook-events.js';
import { VERSION_REFUSAL_TYPE, type VersionRefusal } from '../../src/common/identity.js';
import { Queries, Updates, type SendResult } from '../../src/common/messages.js';
import type { HookDispatchOutcome, ModelStepOutput } from '../../src/common/activity-io.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { startTimeSkippingServer } from '../../src/server/test-server.js';
import { workflowBundle } from '../../src/worker/workflow-code.js';
import { temporalAddress, waitFor } from '../helpers/common.js';
import { settleStub } from '../helpers/settle-stub.js';

type Server = Awaited<ReturnType<typeof startTimeSkippingServer>>;
let server: Server;

/** Where a session runs: a client and a worker connection to one server. */
interface Target {
  client: Client;
  connection: NativeConnection;
}
let timeSkipping: Target;
let devServer: Target;

async function connectTo(address: string): Promise<Target> {
  return {
    client: new Client({ connection: await Connection.connect({ address }) }),
    connection: await NativeConnection.connect({ address }),
  };
}

beforeAll(async () => {
  server = await startTimeSkippingServer();
  timeSkipping = await connectTo(server.address);
  devServer = await connectTo(temporalAddress());
}, 120_000);

afterAll(async () => {
  for (const target of [timeSkipping, devServer]) {
    await target?.connection.close();
    await target?.client.connection.close();
  }
  await server?.stop();
});

/** One dispatch as the stub saw it. */
interface Dispatched {
  event: HookEvent;
  payload: Record<string, unknown>;
}

/** What the stubs answer; each test overrides what it is about. */
interface Script {
  dispatch?: (input: Dispatched, attempt: number) => HookDispatchOutcome;
  model?: (promptIndex: number, step: number) => ModelStepOutput;
  /** `awaitHookSettled`: resolves when the callback that outlived its dispatch settles. */
  settled?: Promise<void>;
  /** The server the session runs on: the time-skipping one unless said. */
  on?: Target;
  /** `notifyApproval` (`advanced.approvals`): the stage and attempt of each call. */
  notify?: (stage: string, attempt: number) => void;
}

const completed = (outputs: object[] = [{}]) =>
  ({
    status: 'completed',
    outputs: outputs.map((o) => ({ action: 'continue', ...o })),
    callbackCount: outputs.length,
    durationMs: 1,
  }) as HookDispatchOutcome;

/**
 * Run `body` against a session of `input` on a worker with stub activities, and the calls the
 * stubs saw. The workflow is the real one (the test bundle).
 */
async function withSession(
  script: Script,
  input: Partial<SessionWorkflowInput>,
  body: (session: ReturnType<typeof sessionHandle>) => Promise<void>,
): Promise<{ dispatched: Dispatched[]; modelSteps: number; archived: number }> {
  const { client, connection } = script.on ?? timeSkipping;
  const taskQueue = `workflow-test-${randomUUID()}`;
  const cleanupQueue = `${taskQueue}/cleanup`;
  const seen = { dispatched: [] as Dispatched[], modelSteps: 0, archived: 0 };
  const attempts = new Map<HookEvent, number>();
  const activities = {
    async dispatchHook(dispatch: { event: HookEvent; payload: Record<string, unknown> }) {
      const call = { event: dispatch.event, payload: dispatch.payload };
      seen.dispatched.push(call);
      const attempt = (attempts.get(call.event) ?? 0) + 1;
      attempts.set(call.event, attempt);
      const outcome = script.dispatch?.(call, attempt) ?? completed();
      if (outcome.status === 'timeout') return { ...outcome, cleanupQueue };
      return outcome;
    },
    async modelStep(step: { promptIndex: number; step: number }): Promise<ModelStepOutput> {
      seen.modelSteps++;
      return (
        script.model?.(step.promptIndex, step.step) ?? {
          text: `answer ${step.promptIndex}`,
          finishReason: 'stop',
        }
      );
    },
    // A call of an unknown tool is described as a write: the default preset asks a person.
    async describeToolCall() {
      return { known: true, kind: 'write', affectedPaths: [] };
    },
    async notifyApproval(event: { stage: string }) {
      script.notify?.(event.stage, Context.current().info.attempt);
    },
    async archiveRun(run: { messages: number; timelineEntries: number }) {
      seen.archived++;
      const runId = Context.current().info.workflowExecution?.runId;
      return { runId, ref: 'stub', ...run };
    },
  };
  const settle = settleStub(script.settled);
  const bundle = await workflowBundle();
  const worker = await Worker.create({ connection, taskQueue, workflowBundle: bundle, activities });
  const cleanup = await Worker.create({ connection, taskQueue: cleanupQueue, activities: settle });
  const sessionId = `wf-${randomUUID()}`;
  await client.workflow.start('sessionWorkflow', {
    taskQueue,
    workflowId: `session-${sessionId}`,
    args: [
      {
        sessionId,
        agentName: 'workflow-test',
        hookCounts: {},
        hookTimeoutMs: 60_000,
        sessionEndHookTimeoutMs: 60_000,
        maxTurns: 10,
        taskQueue,
        dispatchHeartbeatTimeoutMs: 5_000,
        ...input,
      } satisfies SessionWorkflowInput,
    ],
  });
  await worker.runUntil(
    cleanup.runUntil(async () => {
      const session = sessionHandle(client, `session-${sessionId}`);
      await session.ready();
      await body(session);
    }),
  );
  return seen;
}

function sessionHandle(client: Client, workflowId: string) {
  const handle = client.workflow.getHandle(workflowId);
  return {
    handle,
    ready: () => handle.executeUpdate(Updates.ready),
    close: () => handle.executeUpdate(Updates.close),
    send: (prompt: string) =>
      handle.executeUpdate(Updates.send, {
        args: [{ requestId: randomUUID(), prompt }],
      }) as Promise<SendResult>,
    describe: () => handle.query(Queries.describe),
  };
}

/** The detail of the session's failure an Update was refused with (a `SerializedError`). */
async function failureOf(call: Promise<unknown>): Promise<Record<string, unknown> | undefined> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return (cause as ApplicationFailure).details?.[0] as Record<string, unknown> | undefined;
}

/** The `code` of the session's failure an Update was refused with. */
async function failureCode(call: Promise<unknown>): Promise<unknown> {
  return (await failureOf(call))?.code;
}

describe('dispatch outcomes', () => {
  it('a UserPromptSubmit continue with a modified prompt reaches the model; an abort stops the prompt before it', async () => {
    const prompts: unknown[] = [];
    const seen = await withSession(
      {
        dispatch: ({ payload }) => {
          prompts.push(payload.userPrompt);
          return payload.userPrompt === 'stop'
            ? completed([{ action: 'abort', reason: 'not this one' }])
            : completed([
                { modifiedInput: { userPrompt: `[tenant] ${String(payload.userPrompt)}` } },
              ]);
        },
      },
      { hookCounts: { [HookEvent.UserPromptSubmit]: 1 } },
      async (session) => {
        const answered = await session.send('hello');
        expect(answered).toMatchObject({ status: 'completed', text: 'answer 0' });
        // The model's context holds the prompt as the callback rewrote it.
        const context = await session.handle.query(Queries.conversation);
        expect(context[0]).toEqual({ role: 'user', content: '[tenant] hello' });
        expect(await failureCode(session.send('stop'))).toBe('HOOK_ABORTED');
        expect((await session.describe()).status).toBe('open');
      },
    );
    expect(prompts).toEqual(['hello', 'stop']);
    // One model step: the aborted prompt never reached the model.
    expect(seen.modelSteps).toBe(1);
  });

  it('an event without callbacks is never dispatched', async () => {
    const seen = await withSession({}, { hookCounts: {} }, async (session) => {
      await session.send('hello');
      await session.close();
    });
    expect(seen.dispatched).toEqual([]);
    expect(seen.modelSteps).toBe(1);
  });
});

describe('fail-closed', () => {
  it('after a timeout whose callback has not settled, dispatches are refused without running; once it settles they run', async () => {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    let dispatches = 0;
    const seen = await withSession(
      {
        settled,
        dispatch: () => {
          dispatches++;
          return dispatches === 1
            ? ({
                status: 'timeout',
                callbackCount: 1,
                durationMs: 100,
                settled: false,
                cleanupQueue: '',
                dispatchId: 'd-1',
              } as HookDispatchOutcome)
            : completed();
        },
      },
      { hookCounts: { [HookEvent.UserPromptSubmit]: 1 } },
      async (session) => {
        expect(await failureCode(session.send('slow'))).toBe('HOOK_TIMEOUT');
        expect((await session.describe()).pendingCleanups).toBe(1);
        expect(await failureCode(session.send('refused'))).toBe('HOOK_CLEANUP_PENDING');
        settle();
        while ((await session.describe()).pendingCleanups > 0) await server.sleep(100);
        expect(await session.send('after')).toMatchObject({ status: 'completed' });
      },
    );
    // The refused prompt scheduled nothing: two dispatches, one model step.
    expect(seen.dispatched.map((d) => d.payload.userPrompt)).toEqual(['slow', 'after']);
    expect(seen.modelSteps).toBe(1);
  });
});

describe('version refusals', () => {
  const refusal = (): never => {
    const detail: VersionRefusal = {
      code: 'WORKER_VERSION_MISMATCH',
      message: 'this worker runs v1',
      agentName: 'workflow-test',
      sessionId: 's',
      sessionVersion: 'v2',
      sessionFingerprint: 'f2',
      workerVersions: ['v1'],
    } as VersionRefusal;
    throw ApplicationFailure.create({
      type: VERSION_REFUSAL_TYPE,
      message: detail.message,
      details: [detail],
      nonRetryable: true,
    });
  };

  it('a refused dispatch is scheduled again until a worker takes it; the prompt goes on', async () => {
    const seen = await withSession(
      { dispatch: (_call, attempt) => (attempt <= 2 ? refusal() : completed()) },
      { hookCounts: { [HookEvent.UserPromptSubmit]: 1 }, version: 'v2', fingerprint: 'f2' },
      async (session) => {
        expect(await session.send('hello')).toMatchObject({ status: 'completed' });
      },
    );
    expect(seen.dispatched).toHaveLength(3);
    expect(seen.modelSteps).toBe(1);
  });

  it('refused past the budget: the prompt fails with the refusal code, naming the versions', async () => {
    const seen = await withSession(
      { dispatch: () => refusal() },
      {
        hookCounts: { [HookEvent.UserPromptSubmit]: 1 },
        hookTimeoutMs: 2_000,
        version: 'v2',
        fingerprint: 'f2',
      },
      async (session) => {
        const failure = await failureOf(session.send('hello'));
        expect(failure).toMatchObject({ code: 'WORKER_VERSION_MISMATCH' });
        expect(failure?.message).toMatch(/version 'v2' .*refused by a worker of version 'v1'/);
        // Not at the first refusal: scheduled again (with backoff) until the 2 s budget ran out.
        expect(failure?.message).toMatch(/within (\d{4,}) ms/);
      },
    );
    expect(seen.dispatched.length).toBeGreaterThan(1);
  });
});

describe('SessionEnd', () => {
  it('SessionEnd runs once: after it failed, the next close closes without calling it again', async () => {
    const seen = await withSession(
      {
        dispatch: () => ({
          status: 'error',
          error: { name: 'Error', message: 'flush failed' },
          callbackIndex: 0,
          callbackCount: 1,
          durationMs: 1,
        }),
      },
      { hookCounts: { [HookEvent.SessionEnd]: 1 } },
      async (session) => {
        // The callback's own error, named with its event.
        expect(await failureOf(session.close())).toMatchObject({
          message: 'flush failed',
          event: 'SessionEnd',
        });
        expect((await session.describe()).sessionEndMarker).toMatchObject({ reason: 'other' });
        expect(await session.close()).toMatchObject({ closedNow: true });
        expect(await session.handle.result()).toMatchObject({ endReason: 'other' });
      },
    );
    expect(seen.dispatched.map((d) => d.event)).toEqual([HookEvent.SessionEnd]);
  });
});

describe('rollover', () => {
  it('continues as new after continueAsNewAfterPrompts, archiving the run first; the next run answers the next prompt', async () => {
    const seen = await withSession(
      { on: devServer },
      { continueAsNewAfterPrompts: 1 },
      async (session) => {
        const first = (await session.handle.describe()).runId;
        expect(await session.send('one')).toMatchObject({ status: 'completed', text: 'answer 0' });
        await waitFor(
          async () => (await session.handle.describe()).runId !== first,
          60_000,
          'the session to continue as new',
        );
        expect(await session.send('two')).toMatchObject({ status: 'completed', text: 'answer 1' });
        expect((await session.describe()).promptsHandled).toBe(2);
        const { archives } = await session.handle.query(Queries.archives);
        expect(archives[0]).toMatchObject({ runId: first, ref: 'stub', messages: 2 });
      },
    );
    expect(seen.archived).toBeGreaterThanOrEqual(1);
    expect(seen.modelSteps).toBe(2);
  });
});

describe('approval stages (advanced.approvals)', () => {
  it('hour-scale stages come in order, once each; a notify that always fails is logged and the deadline still denies', async () => {
    const notified: string[] = [];
    const hour = 60 * 60 * 1000;
    await withSession(
      {
        model: (_prompt, step) =>
          step === 0
            ? {
                text: '',
                finishReason: 'tool-calls',
                toolCalls: [{ toolUseId: 'call-1', toolName: 'Write', input: { file_path: 'a' } }],
              }
            : { text: 'done', finishReason: 'stop' },
        notify: (stage, attempt) => {
          notified.push(`${stage}#${attempt}`);
          throw new Error('chat is down');
        },
      },
      {
        tools: [{ name: 'Write', kind: 'write' }],
        permission: { preset: 'default' },
        permissionTimeoutMs: 4 * hour,
        approvals: {
          remindAfterMs: hour / 2,
          escalateAfterMs: 2 * hour,
          escalateTo: 'ops',
          notify: true,
        },
      },
      async (session) => {
        const sent = session.send('write a');
        await waitFor(
          async () => (await session.handle.query(Queries.pendingPermissions)).length > 0,
          30_000,
          'the ask',
        );
        // Past the deadline and every retry (an Update's wait does not skip time: a sleep does).
        await server.sleep(5 * hour);
        const result = await sent;
        expect(result).toMatchObject({ status: 'completed', text: 'done' });
        expect(result.toolCalls).toMatchObject([{ toolName: 'Write', status: 'denied' }]);
        // Each stage's notification ran its 5 attempts (it is not awaited by the wait).
        await waitFor(() => notified.length === 15, 30_000, 'every attempt of every stage');
        expect((await session.describe()).status).toBe('open');
      },
    );
    expect(notified).toEqual(
      ['remind', 'escalate', 'deadline'].flatMap((stage) =>
        [1, 2, 3, 4, 5].map((attempt) => `${stage}#${attempt}`),
      ),
    );
  });
});
