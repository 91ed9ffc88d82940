/**
 * Quiet by default (issue 13, item 20): a non-retryable model error is one line on the
 * worker's stderr, without a stack; `advanced.logger` gets the same entries (Temporal's
 * and an activity's `Context.current().log`) at the documented default level, WARN.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAgent,
  ModelError,
  providerModel,
  type Agent,
  type AgentLogger,
  type AgentModel,
} from '../../../src/index.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../fixtures/openai-server.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));

let server: FakeOpenAI | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.shutdown();
  await server?.close();
  agent = undefined;
  server = undefined;
});

describe('the default logger', () => {
  it("a non-retryable model error is one line on the worker process's stderr, no stack", async () => {
    server = await startFakeOpenAI([{ text: 'never' }], { apiKey: 'sk-right' });
    const env: Record<string, string | undefined> = {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress(),
      FAKE_BASE_URL: server.baseUrl,
      TASK_QUEUE: uniqueTaskQueue('logging-child'),
    };
    delete env.DURABLE_AGENT_LOG_LEVEL;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(fixtures, 'model-error-process.ts')],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout.trim())).toEqual({ code: 'MODEL_ERROR', statusCode: 401 });
    const lines = stderr.split('\n').filter((line) => line !== '');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\[durable-agent-sdk WARN\] Activity failed: ProviderError: openai-compatible gpt-4o-mini: 401 Unauthorized: Incorrect API key provided: sk-\*\*\*\. \(attempt=1, activityType=modelStep, sessionId=[\w-]+\)$/,
    );
  });
});

describe('advanced.logger', () => {
  it("gets the model error and an activity's Context.log.warn as one call each, at warn, without stacks", async () => {
    server = await startFakeOpenAI([{ text: 'never' }], { apiKey: 'sk-right' });
    const provider = providerModel({
      model: 'gpt-4o-mini',
      apiKey: 'sk-wrong',
      baseUrl: server.baseUrl,
    });
    // The first prompt goes to the provider (401); the second logs through the activity
    // context logger, as the hook dispatch activity does for a failed tool hook.
    const model: AgentModel = {
      name: 'logging-test',
      async step(request) {
        if (request.promptIndex === 0) return provider.step(request);
        Context.current().log.warn('PreToolUse dispatch failed: callback 0 threw: boom', {
          event: 'PreToolUse',
          callbackIndex: 0,
          code: 'HOOK_CALLBACK_FAILED',
        });
        return { text: 'fine', finishReason: 'stop' };
      },
    };
    const calls: Array<{ level: string; message: string; meta: Record<string, unknown> }> = [];
    const record =
      (level: string) =>
      (message: string, meta: Record<string, unknown> = {}) =>
        calls.push({ level, message, meta });
    const logger: AgentLogger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    agent = await createAgent({
      model,
      workspaceRoots: [tempDir('logging')],
      advanced: {
        logger,
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('logging') },
      },
    });
    const session = await agent.createSession();
    const failed = await session.send('one').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(ModelError);
    expect((await session.send('two')).text()).toBe('fine');
    // Entries are delivered in time order: once the second is in, the first is too.
    await waitFor(
      () => calls.some((c) => c.message.startsWith('PreToolUse dispatch failed')),
      10_000,
      'the activity context log line',
    );
    await session.close();

    expect(calls.map((c) => [c.level, c.message])).toEqual([
      [
        'warn',
        'Activity failed: ProviderError: openai-compatible gpt-4o-mini: 401 Unauthorized: Incorrect API key provided: sk-***.',
      ],
      ['warn', 'PreToolUse dispatch failed: callback 0 threw: boom'],
    ]);
    expect(calls[0]!.meta).toMatchObject({
      activityType: 'modelStep',
      attempt: 1,
      sessionId: session.id,
    });
    expect(calls[1]!.meta).toMatchObject({
      event: 'PreToolUse',
      callbackIndex: 0,
      code: 'HOOK_CALLBACK_FAILED',
      activityType: 'modelStep',
      sessionId: session.id,
    });
    for (const call of calls) {
      expect(call.meta).not.toHaveProperty('stack');
      for (const value of [call.message, ...Object.values(call.meta)]) {
        expect(String(value)).not.toContain('\n');
      }
    }
  });
});
