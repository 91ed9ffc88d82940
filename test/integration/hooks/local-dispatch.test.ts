/**
 * `hookDispatch: 'local'`: a hook dispatched as a local activity runs its callbacks, keeps
 * its budget and its abort signal, and schedules no activity task.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

async function agentWith(hookDispatch: unknown, calls: string[]): Promise<Agent> {
  const agent = await createAgent({
    model: scriptedModel(() => 'ok'),
    advanced: {
      hookDispatch: hookDispatch as 'local',
      hookTimeoutMs: 2_000,
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            const prompt = String(input.userPrompt);
            calls.push(`start ${prompt}`);
            if (prompt === 'wait') {
              await new Promise((resolve) =>
                input.abortSignal!.addEventListener('abort', resolve, { once: true }),
              );
              calls.push(`aborted ${String((input.abortSignal!.reason as Error)?.message)}`);
            }
            return { action: 'continue' };
          },
        ],
        [HookEvent.TaskCompleted]: [async () => ({ action: 'continue' })],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('local') },
    },
  });
  agents.push(agent);
  return agent;
}

async function activityTypes(
  workflowId: string,
): Promise<{ scheduled: string[]; markers: number }> {
  const client = await rawClient();
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  await client.connection.close();
  const events = history.events ?? [];
  return {
    scheduled: events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => typeof n === 'string'),
    markers: events.filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    ).length,
  };
}

describe("hookDispatch: 'local'", () => {
  it('runs the callbacks as a local activity: no dispatchHook activity task in history', async () => {
    const calls: string[] = [];
    const agent = await agentWith({ UserPromptSubmit: 'local' }, calls);
    const session = await agent.createSession();
    expect((await session.send('hello')).status).toBe('completed');
    expect(calls).toEqual(['start hello']);
    const { scheduled, markers } = await activityTypes(session.workflowId);
    // UserPromptSubmit was local (a marker); TaskCompleted, not named, stayed an activity.
    expect(scheduled.filter((n) => n === 'dispatchHook')).toHaveLength(1);
    expect(markers).toBe(1);
    await session.close();
  });

  it('answers abort() only once the local dispatch ended: the callback is stopped by its budget', async () => {
    const calls: string[] = [];
    const agent = await agentWith('local', calls);
    const session = await agent.createSession();
    const pending = session.send('wait').catch((e: unknown) => e);
    await waitFor(() => calls.includes('start wait'), 10_000, 'the callback started');
    // The dispatch holds the session's workflow task, so the abort Update waits for it.
    expect(await session.abort(new Error('stop it'))).toBe(false);
    expect(await pending).toMatchObject({ code: 'HOOK_TIMEOUT', event: 'UserPromptSubmit' });
    expect(calls).toContain('aborted Hook UserPromptSubmit exceeded 2000ms');
    expect((await session.send('after')).status).toBe('completed');
    await session.close();
  });

  it('refuses SessionEnd as local, naming the option', async () => {
    await expect(agentWith({ SessionEnd: 'local' }, [])).rejects.toThrow(ConfigError);
    await expect(agentWith({ SessionEnd: 'local' }, [])).rejects.toThrow(
      /advanced\.hookDispatch\.SessionEnd cannot be 'local'/,
    );
  });
});
