/**
 * A hook dispatch, permission check or tool execution whose attempt was lost, on real worker processes
 * SIGKILLed at chosen points: as the worker receives the task (before the dispatch records
 * that its callbacks began: what a matching crash does to a task it marked started but never
 * delivered) or while a callback runs (after the record). The first is retried and runs the
 * callbacks once; the second is not re-run. Side effects are counted from what the callbacks
 * wrote, attempts from the session's history.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { createAgentClient, HookError, type AgentClient } from '../../../src/index.js';
import { HOOK_DISPATCH_LOST_TYPE } from '../../../src/common/activity-io.js';
import { crashAgentOptions, type CrashAgentEnv } from '../../fixtures/crash-agent.js';
import { historyOf, startedAttempt } from '../../helpers/history.js';
import { pendingAsk } from '../../helpers/common.js';
import {
  count,
  crashEnv,
  killAll,
  startWorkerProcess,
  waitForEffect,
  type WorkerProcess,
} from '../../helpers/processes.js';

const { TimeoutType } = temporal.api.enums.v1;

const clients: AgentClient[] = [];
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function clientFor(env: CrashAgentEnv): Promise<AgentClient> {
  const client = await createAgentClient(crashAgentOptions(env));
  clients.push(client);
  return client;
}

/** Resolves once the worker process has exited (it killed itself). */
function exitOf(worker: WorkerProcess): Promise<void> {
  const { child } = worker;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** The failures the history records for activity tasks that failed, by their type. */
async function failedActivityTypes(workflowId: string): Promise<string[]> {
  const history = await historyOf(workflowId);
  return (history.events ?? [])
    .map((e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type)
    .filter((type): type is string => typeof type === 'string');
}

describe('a hook dispatch attempt lost with its worker', () => {
  it('before its callbacks began: retried on another worker, the callbacks run once, the prompt goes through', async () => {
    const env = crashEnv();
    // D runs SessionStart, then dies as it receives the UserPromptSubmit dispatch.
    const dying = await startWorkerProcess(
      { ...env, dieOnReceipt: ['dispatchHook:UserPromptSubmit'] },
      'D',
    );
    const client = await clientFor(env);
    const session = await client.createSession();
    const sending = session.send('hello').then(
      (result) => result.text(),
      (error: unknown) => error,
    );
    await exitOf(dying);
    expect(count(env, 'UserPromptSubmit:start hello')).toBe(0);
    await startWorkerProcess(env, 'B');
    expect(await sending).toBe('echo:hello');
    expect(count(env, 'UserPromptSubmit:start hello')).toBe(1);
    expect(count(env, 'B UserPromptSubmit:start hello')).toBe(1);

    const history = await historyOf(session.workflowId);
    // Attempt 1 (D's) timed out without a heartbeat; attempt 2 (B's) ran the callbacks.
    const retried = startedAttempt(history, 2);
    expect(retried?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    const timeline = await session.timeline();
    expect(timeline.filter((e) => e.event === 'UserPromptSubmit').map((e) => e.outcome)).toEqual([
      'continue',
    ]);
    await session.close();
    expect(count(env, 'SessionStart')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
  }, 180_000);

  it('after its callbacks began: the retried attempt refuses, the callback is not run again, the prompt fails as worker lost', async () => {
    const env = crashEnv();
    const a = await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    const pending = session.send('block me').catch((e: unknown) => e);
    await waitForEffect(env, 'A UserPromptSubmit:start block me');
    await a.kill();
    await startWorkerProcess(env, 'B');
    const error = await pending;
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({ code: 'HOOK_WORKER_LOST', event: 'UserPromptSubmit' });
    expect(count(env, 'UserPromptSubmit:start block me')).toBe(1);

    // Attempt 2 started after attempt 1's heartbeat timeout, found attempt 1's record and
    // failed without a callback (no attempt 3).
    const history = await historyOf(session.workflowId);
    expect(startedAttempt(history, 2)?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    expect(startedAttempt(history, 3)).toBeUndefined();
    expect(await failedActivityTypes(session.workflowId)).toEqual([HOOK_DISPATCH_LOST_TYPE]);
    const timeline = await session.timeline();
    expect(timeline.filter((e) => e.event === 'UserPromptSubmit').map((e) => e.outcome)).toEqual([
      'worker_lost',
    ]);
    expect((await session.send('after')).text()).toBe('echo:after');
    await session.close();
    expect(count(env, 'SessionStart')).toBe(1);
  }, 180_000);
});

describe('a permission check attempt lost with its worker', () => {
  it('is asked again on another worker: the call is not denied', async () => {
    const env = crashEnv();
    // D dies as it receives the permission check of the Record call.
    const dying = await startWorkerProcess({ ...env, dieOnReceipt: ['checkPermission'] }, 'D');
    const client = await clientFor(env);
    const session = await client.createSession();
    const sending = session.send('record:v1').then(
      (result) => result.text(),
      (error: unknown) => error,
    );
    await exitOf(dying);
    await startWorkerProcess(env, 'B');
    // The function answered 'ask' on B: a person decides (no denial from the lost attempt).
    const requestId = await pendingAsk(session, 60_000, 'the retried permission check to ask');
    await session.approve(requestId);
    expect(await sending).toBe('done:success');
    expect(count(env, 'Record v1')).toBe(1);
    const history = await historyOf(session.workflowId);
    expect(startedAttempt(history, 2)?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    await session.close();
  }, 180_000);
});

describe('a tool execution attempt lost with its worker', () => {
  it('before the tool began: retried on another worker, the tool runs once, the call succeeds', async () => {
    const env = crashEnv({ toolHeartbeatTimeoutMs: 3_000 });
    // D runs everything up to the tool, then dies as it receives the execution.
    const dying = await startWorkerProcess({ ...env, dieOnReceipt: ['executeTool'] }, 'D');
    const client = await clientFor(env);
    const session = await client.createSession();
    const sending = session.send('record:t1').then(
      (result) => result.text(),
      (error: unknown) => error,
    );
    await session.approve(await pendingAsk(session, 60_000, 'the Record call to ask'));
    await exitOf(dying);
    expect(count(env, 'Record t1')).toBe(0);
    await startWorkerProcess(env, 'B');
    expect(await sending).toBe('done:success');
    expect(count(env, 'Record t1')).toBe(1);
    expect(count(env, 'B Record t1')).toBe(1);
    // Attempt 1 (D's) timed out without a heartbeat; attempt 2 (B's) ran the tool.
    const history = await historyOf(session.workflowId);
    expect(startedAttempt(history, 2)?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    await session.close();
  }, 180_000);
  // After the tool began: inline-dispatch-crash.test.ts and crash-bash.test.ts (the retried
  // attempt finds the record and the call ends as a tool that failed to run).
});
