/**
 * A permission function's `signal` aborts with the reason a hook callback's `abortSignal`
 * gets (`abortReasonFor`): the prompt's abort reason (the very object in the process that
 * called `abort()`, a rebuilt Error elsewhere), in a sub-agent the one its parent answers for
 * it (the parent's abort, the Task timeout), and the activity's own cancellation when no
 * session says why.
 */
import type { Client } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createToolActivities } from '../../../activities/tool-exec.js';
import type {
  CheckPermissionInput,
  CheckPermissionOutput,
} from '../../../src/common/activity-io.js';
import type { AbortRecord } from '../../../src/common/messages.js';
import type { PermissionHandler } from '../../../src/common/permission.js';
import type { SessionLineage } from '../../../src/common/workflow-io.js';
import { AgentRegistry, rememberAbortReason } from '../../../src/definition/registry.js';
import type { AgentModel } from '../../../src/models/model.js';
import { testIdentity } from '../../helpers/registry-identity.js';

const model: AgentModel = { name: 'm', step: async () => ({ text: '', finishReason: 'stop' }) };
const CHILD = 'session-root/0-call_1';
const ROOT = 'session-root';

/** The reason each permission function call's signal aborted with. */
let reasons: unknown[] = [];
let entered: () => void = () => undefined;

/** Waits until its signal aborts, then denies. */
const waitForAbort: PermissionHandler = (request) =>
  new Promise((resolve) => {
    entered();
    request.signal.addEventListener(
      'abort',
      () => {
        reasons.push(request.signal.reason);
        resolve('deny');
      },
      { once: true },
    );
  });

afterEach(() => {
  reasons = [];
});

const lineage: SessionLineage = {
  parentSessionId: 'root',
  rootSessionId: 'root',
  agentPath: 'main/reader',
  depth: 1,
  subagent: 'reader',
  toolUseId: 'call_1',
  stream: { sessionId: 'root', requestId: 'r1' },
};

function registry(): AgentRegistry {
  const r = new AgentRegistry();
  r.register({
    name: 'default',
    hooks: {},
    model,
    tools: [],
    workspaceRoots: [],
    permission: waitForAbort,
    maxToolOutputBytes: 65_536,
    subagents: new Map([['reader', { prompt: 'You read.', tools: [] }]]),
    ...testIdentity,
  });
  return r;
}

/**
 * A client whose sessions answer the abort queries from `records` (`abortReason` of a
 * workflow id, `subagentAbortReason` of `parent>child`); a query without an answer fails.
 */
function clientAnswering(records: Record<string, AbortRecord | null>): Client {
  const getHandle = (workflowId: string) => ({
    query: async (query: { name: string }, ...args: unknown[]) => {
      const key =
        query.name === 'subagentAbortReason' ? `${workflowId}>${String(args[0])}` : workflowId;
      if (!(key in records)) throw new Error(`no answer for ${query.name} of ${key}`);
      return records[key];
    },
  });
  return {
    connection: { withDeadline: (_deadline: number, fn: () => unknown) => fn() },
    workflow: { getHandle },
    withAbortSignal: (_signal: AbortSignal, fn: () => unknown) => fn(),
  } as unknown as Client;
}

/** Ask the permission function of `workflowId`'s call, cancel the activity, and await it. */
async function cancelledAsk(
  workflowId: string,
  records: Record<string, AbortRecord | null>,
  sub?: SessionLineage,
): Promise<unknown> {
  const { checkPermission } = createToolActivities({
    registry: registry(),
    heartbeatIntervalMs: 20,
  });
  const env = new MockActivityEnvironment(
    { workflowExecution: { workflowId, runId: 'run-1' } },
    { client: clientAnswering(records) },
  );
  const asked = new Promise<void>((resolve) => (entered = resolve));
  const running = env.run<[CheckPermissionInput], CheckPermissionOutput, typeof checkPermission>(
    checkPermission,
    {
      agentName: 'default',
      sessionId: workflowId.slice('session-'.length),
      toolUseId: 'call_2',
      toolName: 'Write',
      input: {},
      kind: 'write',
      affectedPaths: [],
      ...(sub ? { lineage: sub } : {}),
    },
  );
  await asked;
  env.cancel();
  expect(await running).toMatchObject({ ok: true, result: { behavior: 'deny' } });
  expect(reasons).toHaveLength(1);
  return reasons[0];
}

/** What a sub-agent cancelled by its parent says: ask the parent. */
const askParent: AbortRecord = {
  abortId: 'parent:1',
  reason: { name: 'CancelledFailure', message: 'cancelled by its parent session' },
  askParent: ROOT,
};

describe("the permission function's signal", () => {
  it("in a sub-agent, aborts with the parent's abort reason: the very object in this process", async () => {
    const reason = new Error('stop the tree');
    rememberAbortReason('abort-local', reason);
    const parents = { abortId: 'abort-local', reason: { name: 'Error', message: 'stop the tree' } };
    const got = await cancelledAsk(
      CHILD,
      { [CHILD]: askParent, [`${ROOT}>${CHILD}`]: parents },
      lineage,
    );
    expect(got).toBe(reason);
  });

  it("in a sub-agent, aborts with a rebuilt Error of the parent's reason from another process", async () => {
    const parents = { abortId: 'abort-elsewhere', reason: { name: 'Error', message: 'halt' } };
    const got = await cancelledAsk(
      CHILD,
      { [CHILD]: askParent, [`${ROOT}>${CHILD}`]: parents },
      lineage,
    );
    expect(got).toBeInstanceOf(Error);
    expect(got).toMatchObject({ message: 'halt' });
  });

  it('in a sub-agent past its Task timeout, aborts with the SUBAGENT_TIMEOUT error', async () => {
    const message = 'Task failed: sub-agent main/reader did not finish within 500 ms';
    const timeout: AbortRecord = {
      abortId: `timeout:${CHILD}`,
      reason: { name: 'SubagentTimeout', code: 'SUBAGENT_TIMEOUT', message },
    };
    const got = await cancelledAsk(
      CHILD,
      { [CHILD]: askParent, [`${ROOT}>${CHILD}`]: timeout },
      lineage,
    );
    expect(got).toMatchObject({ name: 'SubagentTimeout', code: 'SUBAGENT_TIMEOUT', message });
  });

  it("in a top session, aborts with its own prompt's abort reason", async () => {
    const reason = { why: 'a non-Error reason' };
    rememberAbortReason('abort-top', reason);
    const own = { abortId: 'abort-top', reason: { name: 'Error', message: 'x' } };
    expect(await cancelledAsk(ROOT, { [ROOT]: own })).toBe(reason);
  });

  it("aborts with the activity's own cancellation when the session cannot say why", async () => {
    const got = await cancelledAsk(CHILD, {}, lineage);
    expect(got).toBeInstanceOf(CancelledFailure);
    expect((got as CancelledFailure).message).toBe('CANCELLED');
  });
});
