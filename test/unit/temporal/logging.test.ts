import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import {
  RoutingLogger,
  formatEntry,
  resolveLogLevel,
  stderrLine,
  type AgentLogger,
} from '../../../src/temporal/logging.js';
import type { AgentOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import type { AgentModel } from '../../../src/models/model.js';

const model: AgentModel = { name: 'm', step: async () => ({ text: '', finishReason: 'stop' }) };

/** An error as Temporal's "Activity failed" line carries it. */
function failure(): Error {
  const error = new Error('openai gpt-4o: 401 Unauthorized: bad key');
  error.name = 'ProviderError';
  return error;
}

const activityMeta = {
  sdkComponent: 'worker',
  taskQueue: 'q1',
  taskToken: 'CiQw...',
  attempt: 1,
  activityType: 'modelStep',
  workflowId: 'session-abc',
  workflowRunId: 'run-1',
  namespace: 'default',
};

describe('resolveLogLevel', () => {
  it('defaults to WARN when neither the option nor DURABLE_AGENT_LOG_LEVEL is set', () => {
    expect(resolveLogLevel(undefined, {})).toBe('WARN');
  });

  it('reads DURABLE_AGENT_LOG_LEVEL in any case', () => {
    expect(resolveLogLevel(undefined, { DURABLE_AGENT_LOG_LEVEL: 'debug' })).toBe('DEBUG');
  });

  it('prefers advanced.logLevel over the variable', () => {
    expect(resolveLogLevel('ERROR', { DURABLE_AGENT_LOG_LEVEL: 'DEBUG' })).toBe('ERROR');
  });

  it('rejects a variable that is not a level with a ConfigError naming it and the levels', () => {
    expect(() => resolveLogLevel(undefined, { DURABLE_AGENT_LOG_LEVEL: 'loud' })).toThrow(
      new ConfigError(
        "DURABLE_AGENT_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR (any case), got 'loud'",
      ),
    );
  });
});

describe('advanced.logger and advanced.logLevel', () => {
  it('resolve to the given logger and level', () => {
    const logger: AgentLogger = console;
    const resolved = resolveAgentOptions({ model, advanced: { logger, logLevel: 'INFO' } });
    expect(resolved.logger).toBe(logger);
    expect(resolved.logLevel).toBe('INFO');
  });

  it('reject a logger without the four methods with a ConfigError naming the option', () => {
    expect(() =>
      resolveAgentOptions({
        model,
        advanced: { logger: { warn() {} } },
      } as unknown as AgentOptions),
    ).toThrow(/advanced\.logger must have debug, info, warn and error methods/);
  });

  it('reject an unknown level with a ConfigError naming the option and the value', () => {
    expect(() =>
      resolveAgentOptions({ model, advanced: { logLevel: 'LOUD' } } as unknown as AgentOptions),
    ).toThrow(/advanced\.logLevel must be one of 'TRACE', .*got 'LOUD'/);
  });
});

describe('formatEntry', () => {
  it('at WARN: one line with the error, the session and the attempt, no stack, no task token', () => {
    const entry = formatEntry('Activity failed', { ...activityMeta, error: failure() }, 'WARN');
    expect(entry.message).toBe(
      'Activity failed: ProviderError: openai gpt-4o: 401 Unauthorized: bad key',
    );
    expect(entry.meta).toEqual({
      attempt: 1,
      activityType: 'modelStep',
      sessionId: 'abc',
      error: 'ProviderError: openai gpt-4o: 401 Unauthorized: bad key',
    });
    expect(entry.stack).toBeUndefined();
    expect(stderrLine('WARN', entry)).toBe(
      '[durable-agent-sdk WARN] Activity failed: ProviderError: openai gpt-4o: 401 Unauthorized: bad key (attempt=1, activityType=modelStep, sessionId=abc)',
    );
  });

  it("names an ApplicationFailure by its type, the SDK error's class", () => {
    const wrapped = Object.assign(new Error('bad key'), {
      name: 'ApplicationFailure',
      type: 'ProviderError',
    });
    expect(formatEntry('Activity failed', { error: wrapped }, 'WARN').message).toBe(
      'Activity failed: ProviderError: bad key',
    );
  });

  it('at DEBUG: keeps the whole meta and adds the stack', () => {
    const error = failure();
    const entry = formatEntry('Activity failed', { ...activityMeta, error }, 'DEBUG');
    expect(entry.stack).toBe(error.stack);
    expect(entry.meta).toMatchObject({ taskToken: 'CiQw...', stack: error.stack });
    expect(stderrLine('DEBUG', entry)).toContain(`\n${error.stack!}`);
  });

  it('puts a multi-line message on one line', () => {
    expect(formatEntry('a\n  b', {}, 'WARN').message).toBe('a b');
  });
});

describe('RoutingLogger', () => {
  function collector() {
    const calls: string[] = [];
    const logger: AgentLogger = {
      debug: (m) => calls.push(`debug ${m}`),
      info: (m) => calls.push(`info ${m}`),
      warn: (m) => calls.push(`warn ${m}`),
      error: (m) => calls.push(`error ${m}`),
    };
    return { calls, logger };
  }

  it("routes a line to the sink of its task queue, at that sink's level", () => {
    const lines: string[] = [];
    const routing = new RoutingLogger('WARN', (line) => lines.push(line));
    const a = collector();
    const b = collector();
    routing.addSink({ taskQueues: ['qa'], logger: a.logger, level: 'INFO' });
    routing.addSink({ taskQueues: ['qb'], logger: b.logger, level: 'ERROR' });
    routing.info('to a', { taskQueue: 'qa' });
    routing.warn('dropped by b', { taskQueue: 'qb' });
    routing.error('to b', { taskQueue: 'qb' });
    expect(a.calls).toEqual(['info to a']);
    expect(b.calls).toEqual(['error to b']);
    expect(lines).toEqual([]);
  });

  it('sends a line of no known task queue to the newest sink, and stops once it is removed', () => {
    const lines: string[] = [];
    const routing = new RoutingLogger('WARN', (line) => lines.push(line));
    const a = collector();
    const remove = routing.addSink({ taskQueues: ['qa'], logger: a.logger, level: 'WARN' });
    routing.warn('core line');
    remove();
    routing.warn('after');
    routing.info('below the fallback level');
    expect(a.calls).toEqual(['warn core line']);
    expect(lines).toEqual(['[durable-agent-sdk WARN] after']);
  });

  it('maps TRACE and DEBUG to logger.debug', () => {
    const routing = new RoutingLogger('TRACE', () => undefined);
    const a = collector();
    routing.addSink({ taskQueues: [], logger: a.logger, level: 'TRACE' });
    routing.trace('t');
    routing.debug('d');
    expect(a.calls).toEqual(['debug t', 'debug d']);
  });

  it('survives a logger that throws', () => {
    const routing = new RoutingLogger('WARN', () => undefined);
    const throwing: AgentLogger = {
      debug() {},
      info() {},
      warn() {
        throw new Error('logger down');
      },
      error() {},
    };
    routing.addSink({ taskQueues: [], logger: throwing, level: 'WARN' });
    expect(() => routing.warn('x')).not.toThrow();
  });

  it('drops the lines the SDK knows to be noise (the cleanup worker has no workflows)', () => {
    const lines: string[] = [];
    const routing = new RoutingLogger('WARN', (line) => lines.push(line));
    routing.warn('No workflows registered, not polling for workflow tasks');
    expect(lines).toEqual([]);
  });
});
