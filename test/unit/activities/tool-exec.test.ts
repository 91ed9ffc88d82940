/**
 * The tool execution activity's attempts: the record that the tool began, confirmed before
 * the tool runs; a later attempt that finds it ends as lost; a failure after it is final.
 */
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createActivities } from '../../../activities/index.js';
import { createToolActivities, withInlinePostToolUse } from '../../../activities/tool-exec.js';
import {
  TOOL_EXECUTION_LOST_TYPE,
  TOOL_EXECUTION_NOT_BEGUN_TYPE,
  type ExecuteToolInput,
} from '../../../src/common/activity-io.js';
import { AgentRegistry } from '../../../src/definition/registry.js';
import { defineTool } from '../../../src/tools/tool.js';
import { recordingClient } from '../../helpers/recording-client.js';
import { testIdentity } from '../../helpers/registry-identity.js';

const own = { activityType: 'executeTool' };

/** A registry whose one tool, Record, logs `ran <value>` and reports progress once. */
function setup(log: string[]) {
  const registry = new AgentRegistry();
  registry.register({
    name: 'default',
    hooks: {},
    model: { name: 'x', step: async () => ({ text: '', finishReason: 'stop' }) },
    tools: [
      defineTool({
        name: 'Record',
        description: 'Record a value',
        kind: 'write',
        inputSchema: z.object({ value: z.string() }),
        execute: async ({ value }, context) => {
          log.push(`ran ${value}`);
          context.heartbeat({ step: 1 });
          // Long enough for the 20 ms heartbeat timer to fire.
          await new Promise((r) => setTimeout(r, 100));
          return `recorded ${value}`;
        },
      }),
    ],
    workspaceRoots: [],
    maxToolOutputBytes: 65_536,
    ...testIdentity,
  });
  return registry;
}

function toolInput(value: string): ExecuteToolInput {
  return {
    sessionId: 'session-1',
    agentName: 'default',
    toolUseId: `call-${value}`,
    toolName: 'Record',
    input: { value },
    timeoutMs: 5_000,
  };
}

function runIn<R>(
  env: MockActivityEnvironment,
  fn: (input: ExecuteToolInput) => Promise<R>,
  input: ExecuteToolInput,
): Promise<R> {
  return env.run<[ExecuteToolInput], R, typeof fn>(fn, input);
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('executeTool attempts', () => {
  it('records that the tool began, confirmed, before it runs; every heartbeat keeps the record', async () => {
    const log: string[] = [];
    const heartbeats: unknown[] = [];
    const { executeTool } = createToolActivities({ registry: setup(log), heartbeatIntervalMs: 20 });
    const env = new MockActivityEnvironment(own, { client: recordingClient(log) });
    env.on('heartbeat', (details: unknown) => heartbeats.push(details));
    const result = await runIn(env, executeTool, toolInput('v1'));
    expect(result).toMatchObject({ status: 'success', model: 'recorded v1' });
    expect(log).toEqual(['record {"began":"call-v1"}', 'recorded', 'ran v1']);
    // The tool's own details go as `progress`, beside the record; the timer's carry it alone.
    expect(heartbeats).toContainEqual({ began: 'call-v1', progress: { step: 1 } });
    expect(heartbeats).toContainEqual({ began: 'call-v1' });
    for (const details of heartbeats) expect(details).toMatchObject({ began: 'call-v1' });
  });

  it('does not run the tool when the server does not confirm the record, and may be retried', async () => {
    const log: string[] = [];
    const { executeTool } = createToolActivities({ registry: setup(log), heartbeatIntervalMs: 20 });
    const client = recordingClient(log, async () => {
      throw new Error('14 UNAVAILABLE: connection refused');
    });
    const error = await rejectionOf(
      runIn(new MockActivityEnvironment(own, { client }), executeTool, toolInput('v2')),
    );
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).type).toBe(TOOL_EXECUTION_NOT_BEGUN_TYPE);
    expect((error as ApplicationFailure).nonRetryable).toBe(false);
    expect((error as ApplicationFailure).message).toMatch(/^Tool Record could not record/);
    // Three tries, then it gives up: the tool never ran.
    expect(log.filter((line) => line.startsWith('record '))).toHaveLength(3);
    expect(log.filter((line) => line.startsWith('ran '))).toEqual([]);
  });

  it('a later attempt whose earlier one began the tool fails as lost without running it, on any version', async () => {
    const log: string[] = [];
    const { executeTool } = createActivities({
      registry: setup(log),
      cleanupQueue: 'cq',
      heartbeatIntervalMs: 20,
      payloadStore: {} as never,
    });
    const input = {
      ...toolInput('v3'),
      version: 'another-version',
      fingerprint: '0123456789abcdef',
    };
    // Refused by the version guard instead, the workflow would schedule the execution again
    // as a new activity (attempt 1, no record), and the tool would run twice.
    const error = await rejectionOf(
      runIn(
        new MockActivityEnvironment(
          { ...own, attempt: 2, heartbeatDetails: { began: 'call-v3' } },
          { client: recordingClient(log) },
        ),
        executeTool,
        input,
      ),
    );
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).type).toBe(TOOL_EXECUTION_LOST_TYPE);
    expect((error as ApplicationFailure).nonRetryable).toBe(true);
    expect((error as ApplicationFailure).message).toMatch(/^attempt 1 began the tool/);
    expect(log).toEqual([]);
  });

  it('a later attempt whose earlier one was lost before the record runs the tool', async () => {
    const log: string[] = [];
    const { executeTool } = createToolActivities({ registry: setup(log), heartbeatIntervalMs: 20 });
    const env = new MockActivityEnvironment(
      { ...own, attempt: 2, heartbeatDetails: undefined },
      { client: recordingClient(log) },
    );
    const result = await runIn(env, executeTool, toolInput('v4'));
    expect(result.status).toBe('success');
    expect(log).toEqual(['record {"began":"call-v4"}', 'recorded', 'ran v4']);
  });

  it('an idempotent call sends no record: a later attempt runs it again', async () => {
    const log: string[] = [];
    const { executeTool } = createToolActivities({ registry: setup(log), heartbeatIntervalMs: 20 });
    const input: ExecuteToolInput = { ...toolInput('v5'), idempotent: true };
    const first = await runIn(
      new MockActivityEnvironment(own, { client: recordingClient(log) }),
      executeTool,
      input,
    );
    expect(first.status).toBe('success');
    // Attempt 2 of the same call (its first lost with its worker): it runs again.
    const second = await runIn(
      new MockActivityEnvironment(
        { ...own, attempt: 2, heartbeatDetails: undefined },
        { client: recordingClient(log) },
      ),
      executeTool,
      input,
    );
    expect(second.status).toBe('success');
    expect(log.filter((line) => line.startsWith('record'))).toEqual([]);
    expect(log).toEqual(['ran v5', 'ran v5']);
  });

  it("describes a tool's idempotent only when it is not what its kind implies", async () => {
    const registry = new AgentRegistry();
    const tool = (name: string, kind: 'readonly' | 'write', idempotent?: boolean) =>
      defineTool({
        name,
        description: name,
        kind,
        ...(idempotent !== undefined ? { idempotent } : {}),
        inputSchema: z.object({}),
        execute: async () => 'ok',
      });
    registry.register({
      name: 'default',
      hooks: {},
      model: { name: 'x', step: async () => ({ text: '', finishReason: 'stop' }) },
      tools: [
        tool('Lookup', 'readonly'),
        tool('PaidLookup', 'readonly', false),
        tool('Upsert', 'write', true),
        tool('Send', 'write'),
      ],
      workspaceRoots: [],
      maxToolOutputBytes: 65_536,
      ...testIdentity,
    });
    const { describeToolCall } = createToolActivities({ registry, heartbeatIntervalMs: 20 });
    const describe = (toolName: string) =>
      describeToolCall({ agentName: 'default', sessionId: 's', toolName, input: {} });
    expect(await describe('Lookup')).toEqual({ known: true, kind: 'readonly', affectedPaths: [] });
    expect(await describe('PaidLookup')).toMatchObject({ kind: 'readonly', idempotent: false });
    expect(await describe('Upsert')).toMatchObject({ kind: 'write', idempotent: true });
    expect(await describe('Send')).toEqual({ known: true, kind: 'write', affectedPaths: [] });
  });

  it('a failure after the tool ran (its inline PostToolUse threw) is final: no attempt runs it again', async () => {
    const log: string[] = [];
    const { executeTool } = createToolActivities({ registry: setup(log), heartbeatIntervalMs: 20 });
    const withInline = withInlinePostToolUse(executeTool, async () => {
      throw new Error('the cleanup queue is gone');
    });
    const input: ExecuteToolInput = {
      ...toolInput('v5'),
      hook: {} as NonNullable<ExecuteToolInput['hook']>,
    };
    const error = await rejectionOf(
      runIn(new MockActivityEnvironment(own, { client: recordingClient(log) }), withInline, input),
    );
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect((error as ApplicationFailure).nonRetryable).toBe(true);
    expect((error as ApplicationFailure).message).toBe('the cleanup queue is gone');
    expect(log.filter((line) => line.startsWith('ran '))).toEqual(['ran v5']);
  });
});
