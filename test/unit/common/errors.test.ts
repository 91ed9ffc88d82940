import { describe, expect, it } from 'vitest';
import {
  AgentSdkError,
  ConfigError,
  EngineError,
  HookError,
  HookTimeoutError,
  ModelError,
  SessionClosedError,
  SessionNotFoundError,
  ToolError,
  deserializeError,
  serializeError,
} from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';

function roundTrip(error: unknown): Error {
  // Through JSON too, as it crosses a process or workflow boundary.
  return deserializeError(JSON.parse(JSON.stringify(serializeError(error))));
}

describe('HookTimeoutError', () => {
  const error = new HookTimeoutError(HookEvent.PreToolUse, 50);

  it("has the code 'HOOK_TIMEOUT'", () => {
    expect(error.code).toBe('HOOK_TIMEOUT');
  });

  it('names the event whose budget ran out', () => {
    expect(error.event).toBe('PreToolUse');
  });

  it('carries the budget in milliseconds', () => {
    expect(error.timeoutMs).toBe(50);
  });

  it('says which event exceeded how many milliseconds', () => {
    expect(error.message).toBe('Hook PreToolUse exceeded 50ms');
  });

  it('is named HookTimeoutError', () => {
    expect(error.name).toBe('HookTimeoutError');
  });

  it('is a HookError, an AgentSdkError and an Error', () => {
    expect(error).toBeInstanceOf(HookTimeoutError);
    expect(error).toBeInstanceOf(HookError);
    expect(error).toBeInstanceOf(AgentSdkError);
    expect(error).toBeInstanceOf(Error);
  });

  it('blames no single callback', () => {
    expect(error.callbackIndex).toBeUndefined();
  });
});

describe('error classes', () => {
  it('name each error after its class', () => {
    expect(new ConfigError('x').name).toBe('ConfigError');
    expect(new HookError('HOOK_ABORTED', 'x').name).toBe('HookError');
    expect(new ModelError('x').name).toBe('ModelError');
    expect(new ToolError('x').name).toBe('ToolError');
    expect(new SessionNotFoundError('s1').name).toBe('SessionNotFoundError');
    expect(new SessionClosedError('s1').name).toBe('SessionClosedError');
    expect(new EngineError('ENGINE_ERROR', 'x').name).toBe('EngineError');
  });

  it("give ConfigError the code 'CONFIG_INVALID'", () => {
    expect(new ConfigError('bad').code).toBe('CONFIG_INVALID');
  });

  it('keep the cause they were given', () => {
    const cause = new Error('root');
    expect(new ConfigError('bad', { cause }).cause).toBe(cause);
    expect(new HookError('HOOK_CALLBACK_FAILED', 'threw', { cause }).cause).toBe(cause);
  });
});

describe('serializeError', () => {
  it('keeps the fields of a HookTimeoutError', () => {
    const serialized = serializeError(new HookTimeoutError(HookEvent.SessionEnd, 3000));
    expect(serialized).toMatchObject({
      name: 'HookTimeoutError',
      message: 'Hook SessionEnd exceeded 3000ms',
      code: 'HOOK_TIMEOUT',
      event: 'SessionEnd',
      timeoutMs: 3000,
    });
  });

  it('keeps the event and callback position of a HookError', () => {
    const serialized = serializeError(
      new HookError('HOOK_OUTPUT_INVALID', 'bad output', {
        event: HookEvent.PostToolUse,
        callbackIndex: 2,
      }),
    );
    expect(serialized).toMatchObject({
      name: 'HookError',
      code: 'HOOK_OUTPUT_INVALID',
      event: 'PostToolUse',
      callbackIndex: 2,
    });
  });

  it('keeps the stack of an error', () => {
    const error = new Error('boom');
    expect(serializeError(error).stack).toBe(error.stack);
  });

  it('gives a thrown string as the message', () => {
    expect(serializeError('boom')).toEqual({ name: 'Error', message: 'boom' });
  });

  it('gives a thrown plain object as its JSON', () => {
    expect(serializeError({ reason: 'nope' })).toEqual({
      name: 'Error',
      message: '{"reason":"nope"}',
    });
  });

  it('gives a thrown undefined as the text undefined', () => {
    expect(serializeError(undefined)).toEqual({ name: 'Error', message: 'undefined' });
  });

  it('does not throw on a thrown value JSON cannot carry', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(serializeError(cyclic)).toEqual({ name: 'Error', message: '[object Object]' });
    expect(serializeError(10n)).toEqual({ name: 'Error', message: '10' });
  });

  it('gives a result that survives JSON', () => {
    const serialized = serializeError(new HookTimeoutError(HookEvent.PreToolUse, 50));
    expect(JSON.parse(JSON.stringify(serialized))).toEqual(serialized);
  });
});

describe('serializeError then deserializeError', () => {
  it('rebuilds a HookTimeoutError with its event, budget and message', () => {
    const error = roundTrip(new HookTimeoutError(HookEvent.PreToolUse, 50));
    expect(error).toBeInstanceOf(HookTimeoutError);
    expect(error).toMatchObject({
      name: 'HookTimeoutError',
      code: 'HOOK_TIMEOUT',
      event: 'PreToolUse',
      timeoutMs: 50,
      message: 'Hook PreToolUse exceeded 50ms',
    });
  });

  it.each([
    'HOOK_OUTPUT_INVALID',
    'HOOK_CALLBACK_FAILED',
    'HOOK_ABORTED',
    'HOOK_CLEANUP_PENDING',
    'HOOK_WORKER_LOST',
    'HOOK_CALLBACKS_MISSING',
    'PROMPT_REJECTED',
    'TASK_FAILED',
    'SESSION_START_FAILED',
  ] as const)('rebuilds a HookError with code %s, its event and callback position', (code) => {
    const error = roundTrip(
      new HookError(code, 'hook trouble', { event: HookEvent.UserPromptSubmit, callbackIndex: 1 }),
    );
    expect(error).toBeInstanceOf(HookError);
    expect(error).not.toBeInstanceOf(HookTimeoutError);
    expect(error).toMatchObject({
      name: 'HookError',
      code,
      message: 'hook trouble',
      event: 'UserPromptSubmit',
      callbackIndex: 1,
    });
  });

  it('rebuilds a ConfigError', () => {
    const error = roundTrip(new ConfigError('hookTimeoutMs must be > 0'));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', message: 'hookTimeoutMs must be > 0' });
  });

  it('rebuilds a ModelError', () => {
    const error = roundTrip(new ModelError('rate limited'));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'MODEL_ERROR', message: 'rate limited' });
  });

  it('rebuilds a ToolError', () => {
    const error = roundTrip(new ToolError('no such tool'));
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ code: 'TOOL_ERROR', message: 'no such tool' });
  });

  it('rebuilds a SessionNotFoundError with its sessionId', () => {
    const error = roundTrip(new SessionNotFoundError('s-1'));
    expect(error).toBeInstanceOf(SessionNotFoundError);
    expect(error).toMatchObject({
      code: 'SESSION_NOT_FOUND',
      sessionId: 's-1',
      message: "No session with id 's-1'",
    });
  });

  it('rebuilds a SessionClosedError with its sessionId', () => {
    const error = roundTrip(new SessionClosedError('s-1'));
    expect(error).toBeInstanceOf(SessionClosedError);
    expect(error).toMatchObject({
      code: 'SESSION_CLOSED',
      sessionId: 's-1',
      message: "Session 's-1' is closed",
    });
  });

  it('rebuilds an EngineError with its code', () => {
    const error = roundTrip(new EngineError('TEMPORAL_CLI_UNAVAILABLE', 'no temporal binary'));
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({
      code: 'TEMPORAL_CLI_UNAVAILABLE',
      message: 'no temporal binary',
    });
  });

  it('keeps the stack of our errors', () => {
    const original = new HookTimeoutError(HookEvent.PreToolUse, 50);
    expect(roundTrip(original).stack).toBe(original.stack);
  });

  it('rebuilds a plain Error as an Error with its message and stack', () => {
    const original = new Error('boom');
    const error = roundTrip(original);
    expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
    expect(error.name).toBe('Error');
    expect(error.message).toBe('boom');
    expect(error.stack).toBe(original.stack);
  });

  it('keeps the name of a built-in error subclass', () => {
    const error = roundTrip(new TypeError('not a function'));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('TypeError');
    expect(error.message).toBe('not a function');
  });

  it('keeps a foreign string code', () => {
    const original = Object.assign(new Error('no such file'), { code: 'ENOENT' });
    const error = roundTrip(original);
    expect((error as Error & { code?: string }).code).toBe('ENOENT');
  });

  it("rebuilds a sub-agent session's refusal as an AgentSdkError with its code", () => {
    const error = roundTrip(
      new AgentSdkError('SUBAGENT_SESSION', "Session 'p/1-t' is a sub-agent: send acts on 'p'"),
    );
    expect(error).toBeInstanceOf(AgentSdkError);
    expect(error).toMatchObject({
      code: 'SUBAGENT_SESSION',
      message: expect.stringMatching(/'p'$/),
    });
  });

  it('rebuilds a thrown string as an Error with that message', () => {
    const error = roundTrip('boom');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('Error');
    expect(error.message).toBe('boom');
  });

  it('rebuilds a thrown plain object as an Error whose message is its JSON', () => {
    const error = roundTrip({ reason: 'nope', retry: false });
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('{"reason":"nope","retry":false}');
  });

  it('rebuilds a thrown number as an Error whose message is the number', () => {
    const error = roundTrip(42);
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('42');
  });

  it('rebuilds a thrown null as an Error whose message is null', () => {
    const error = roundTrip(null);
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toBe('null');
  });
});
