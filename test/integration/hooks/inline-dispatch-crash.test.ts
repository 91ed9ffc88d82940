/**
 * An inline UserPromptSubmit dispatch (`hookDispatch: { UserPromptSubmit: 'inline' }`) whose
 * worker process is killed with SIGKILL while a callback runs: what the README promises,
 * at-least-once. The model step holding the callbacks is retried on the next worker at its
 * heartbeat timeout; there the callbacks run again, then the model, once; nothing of the
 * send is lost and the conversation holds the prompt once.
 * An inline PostToolUse dispatch (`{ PostToolUse: 'inline' }`) killed the same way: at most
 * once, as the README promises: the call ends as a tool that failed to run at the tool's
 * heartbeat timeout, and PostToolUseFailure is dispatched on the next worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { crashAgentOptions } from '../../fixtures/crash-agent.js';
import {
  count,
  crashEnv,
  effects,
  killAll,
  openGate,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import { pendingAsk } from '../../helpers/common.js';

const clients: AgentClient[] = [];
afterEach(async () => {
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('an inline dispatch whose worker is killed', () => {
  it('runs its callbacks again on the next worker, then the model once: nothing lost', async () => {
    const env = crashEnv({ hookDispatch: { UserPromptSubmit: 'inline' }, recordModel: true });
    const a = await startWorkerProcess(env, 'A');
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const session = await client.createSession();
    expect((await session.send('first')).text()).toBe('echo:first');
    const pending = session.send('block second');
    await waitForEffect(env, 'A UserPromptSubmit:start block second');
    await a.kill();
    openGate(env);
    await startWorkerProcess(env, 'B');
    expect((await pending).text()).toBe('echo:block second');
    expect((await session.send('third')).text()).toBe('echo:third');
    // The callbacks ran on A (cut short) and again on B; the model once, on B.
    expect(count(env, 'A UserPromptSubmit:start block second')).toBe(1);
    expect(count(env, 'A UserPromptSubmit:end block second')).toBe(0);
    expect(count(env, 'B UserPromptSubmit:start block second')).toBe(1);
    expect(count(env, 'B UserPromptSubmit:end block second')).toBe(1);
    const models = effects(env).filter((line) => line.includes(' model '));
    expect(models.map((line) => line.replace(/ hits=.*/, ''))).toEqual([
      'A model first messages=1',
      'B model block second messages=3',
      'B model third messages=5',
    ]);
    const conversation = await session.conversation();
    expect(conversation.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'first',
      'block second',
      'third',
    ]);
    expect(
      (await session.timeline())
        .filter((e) => e.event === 'UserPromptSubmit')
        .map((e) => e.outcome),
    ).toEqual(['continue', 'continue', 'continue']);
    await session.close();
    expect(count(env, 'SessionEnd:end')).toBe(1);
  }, 120_000);

  it("PostToolUse inline: a kill while its callbacks run loses the tool's result with them; the tool ran once", async () => {
    const env = crashEnv({
      hookDispatch: { PostToolUse: 'inline' },
      toolHooks: true,
      toolHeartbeatTimeoutMs: 2_000,
    });
    const a = await startWorkerProcess(env, 'A');
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const session = await client.createSession();
    const pending = session.send('record:hold-it');
    const requestId = await pendingAsk(session, 15_000, 'the ask');
    await session.approve(requestId);
    await waitForEffect(env, 'A PostToolUse:start recorded hold-it');
    await a.kill();
    await startWorkerProcess(env, 'B');
    // At the tool's heartbeat timeout the call ends as a tool that failed to run: at most once.
    expect((await pending).text()).toBe('done:error');
    expect(count(env, 'Record hold-it')).toBe(1);
    expect(count(env, 'PostToolUse:end')).toBe(0);
    const failures = effects(env).filter((line) => line.includes('PostToolUseFailure:start'));
    expect(failures).toHaveLength(1);
    // The retried attempt (on B) found A's record that the tool began, and did not run it.
    expect(failures[0]).toMatch(
      /^B PostToolUseFailure:start Tool Record failed to run: .*attempt 1 began the tool/,
    );
    // No row for the callbacks that were cut short; the failure's dispatch as usual.
    expect(
      (await session.timeline())
        .filter((e) => e.event.startsWith('PostToolUse'))
        .map((e) => [e.event, e.outcome]),
    ).toEqual([['PostToolUseFailure', 'continue']]);
    openGate(env);
    await session.close();
  }, 120_000);

  it('PostToolUse inline after a read-only tool: the call keeps its record, so a kill still runs tool and callbacks once', async () => {
    // A read-only call alone may run again after a lost worker; one whose activity runs
    // PostToolUse callbacks may not (they run at most once).
    const env = crashEnv({
      hookDispatch: { PostToolUse: 'inline' },
      toolHooks: true,
      recordKind: 'readonly',
      toolHeartbeatTimeoutMs: 2_000,
    });
    const a = await startWorkerProcess(env, 'A');
    const client = await createAgentClient(crashAgentOptions(env));
    clients.push(client);
    const session = await client.createSession();
    const pending = session.send('record:hold-read');
    await session.approve(await pendingAsk(session, 15_000, 'the ask'));
    await waitForEffect(env, 'A PostToolUse:start recorded hold-read');
    await a.kill();
    await startWorkerProcess(env, 'B');
    expect((await pending).text()).toBe('done:error');
    expect(count(env, 'Record hold-read')).toBe(1);
    expect(count(env, 'PostToolUse:start')).toBe(1);
    expect(effects(env).filter((line) => line.includes('PostToolUseFailure:start'))).toEqual([
      expect.stringMatching(/^B PostToolUseFailure:start .*attempt 1 began the tool/),
    ]);
    openGate(env);
    await session.close();
  }, 120_000);
});
