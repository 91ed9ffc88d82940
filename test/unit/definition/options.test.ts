import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import type { HookCallback, HookMap } from '../../../src/common/types.js';
import { createAgent } from '../../../src/index.js';
import type { AgentModel } from '../../../src/models/model.js';
import type { AgentOptions, SessionOptions } from '../../../src/definition/options.js';
import {
  hookCountsOf,
  resolveAgentOptions,
  validateSessionOptions,
} from '../../../src/definition/resolve.js';
import { tcpProbe, type TcpProbe } from '../../helpers/tcp-probe.js';

const model: AgentModel = {
  name: 'test-model',
  step: async () => ({ text: '', finishReason: 'stop' }),
};

const cb: HookCallback = async () => ({ action: 'continue' });

/** Out of (0, 2147483647] or not an integer (§1), each with how the message shows it. */
const badTimeouts: Array<[label: string, value: unknown, shown: string]> = [
  ['0', 0, '0'],
  ['-1', -1, '-1'],
  ['NaN', NaN, 'NaN'],
  ['2147483648', 2147483648, '2147483648'],
  ['1.5', 1.5, '1.5'],
  ['Infinity', Infinity, 'Infinity'],
  ["the string '100'", '100', "'100'"],
];

const timeoutOptions = ['hookTimeoutMs', 'sessionEndHookTimeoutMs'] as const;

/** Calls `fn` and returns what it threw; fails the test when it returns. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw, but the call returned');
}

function expectConfigError(error: unknown, ...mentions: string[]): void {
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).code).toBe('CONFIG_INVALID');
  for (const text of mentions) expect((error as ConfigError).message).toContain(text);
}

function agentWith(advanced: Record<string, unknown>): AgentOptions {
  return { model, advanced } as AgentOptions;
}

describe('resolveAgentOptions', () => {
  describe.each(timeoutOptions)('advanced.%s', (option) => {
    it.each(badTimeouts)(
      'rejects %s with a ConfigError naming the option and value',
      (_, value, shown) => {
        const error = thrownBy(() => resolveAgentOptions(agentWith({ [option]: value })));
        expectConfigError(error, `advanced.${option}`, `got ${shown}`);
      },
    );

    it.each([1, 2147483647])('accepts %d', (value) => {
      expect(resolveAgentOptions(agentWith({ [option]: value }))[option]).toBe(value);
    });
  });

  it('defaults hookTimeoutMs to 600000', () => {
    expect(resolveAgentOptions({ model }).hookTimeoutMs).toBe(600_000);
  });

  it('defaults sessionEndHookTimeoutMs to 3000', () => {
    expect(resolveAgentOptions({ model }).sessionEndHookTimeoutMs).toBe(3_000);
  });

  it('rejects an unknown hook event key with a ConfigError naming it', () => {
    const error = thrownBy(() => resolveAgentOptions(agentWith({ hooks: { PreToolUsee: [cb] } })));
    expectConfigError(error, "'PreToolUsee'");
  });

  it.each<[string, unknown]>([
    ['a bare function', cb],
    ['an array holding a non-function', [cb, 'not a function']],
    ['an object', { handler: cb }],
  ])('rejects a hooks value that is %s with a ConfigError naming the event', (_, value) => {
    const error = thrownBy(() =>
      resolveAgentOptions(agentWith({ hooks: { [HookEvent.PreToolUse]: value } })),
    );
    expectConfigError(error, 'advanced.hooks.PreToolUse', 'array of functions');
  });

  it('rejects missing model with a ConfigError naming model', () => {
    const error = thrownBy(() => resolveAgentOptions({} as AgentOptions));
    expectConfigError(error, 'model');
  });

  it('rejects an empty model id with a ConfigError naming model', () => {
    const error = thrownBy(() => resolveAgentOptions({ model: '' }));
    expectConfigError(error, 'model', "got ''");
  });

  it("defaults toolHookErrors to 'tool-error' and accepts 'reject'", () => {
    expect(resolveAgentOptions({ model }).toolHookErrors).toBe('tool-error');
    expect(resolveAgentOptions(agentWith({ toolHookErrors: 'reject' })).toolHookErrors).toBe(
      'reject',
    );
  });

  it('rejects another toolHookErrors value with a ConfigError naming the option and value', () => {
    const error = thrownBy(() =>
      resolveAgentOptions(agentWith({ toolHookErrors: 'throw' as 'reject' })),
    );
    expectConfigError(error, 'advanced.toolHookErrors', "got 'throw'");
  });

  it('leaves requireBoundApprovals out unless it is true, and refuses a non-boolean', () => {
    expect(resolveAgentOptions({ model })).not.toHaveProperty('requireBoundApprovals');
    expect(resolveAgentOptions(agentWith({ requireBoundApprovals: false }))).not.toHaveProperty(
      'requireBoundApprovals',
    );
    expect(
      resolveAgentOptions(agentWith({ requireBoundApprovals: true })).requireBoundApprovals,
    ).toBe(true);
    const error = thrownBy(() =>
      resolveAgentOptions(agentWith({ requireBoundApprovals: 'yes' as unknown as boolean })),
    );
    expectConfigError(error, 'advanced.requireBoundApprovals', "got 'yes'");
  });
});

describe('createAgent', () => {
  // The Temporal address given: a listener that counts the connections made to it.
  let temporal: TcpProbe;
  beforeAll(async () => {
    temporal = await tcpProbe();
  });
  afterAll(() => temporal.close());

  describe.each(timeoutOptions)('advanced.%s', (option) => {
    it.each(badTimeouts)(
      'rejects %s with a ConfigError before connecting to anything',
      async (_, value, shown) => {
        const error = await createAgent({
          model,
          advanced: { [option]: value, temporal: { address: temporal.address } },
        } as AgentOptions).then(
          () => {
            throw new Error('createAgent resolved');
          },
          (e: unknown) => e,
        );
        expectConfigError(error, `advanced.${option}`, `got ${shown}`);
        expect(temporal.connections()).toBe(0);
      },
      5_000,
    );
  });
});

describe('validateSessionOptions', () => {
  describe.each(timeoutOptions)('%s', (option) => {
    it.each(badTimeouts)(
      'rejects %s with a ConfigError naming the option and value',
      (_, value, shown) => {
        const error = thrownBy(() => validateSessionOptions({ [option]: value } as SessionOptions));
        expectConfigError(error, option, `got ${shown}`);
      },
    );

    it.each([1, 2147483647])('accepts %d', (value) => {
      expect(() => validateSessionOptions({ [option]: value })).not.toThrow();
    });
  });
});

describe('hookCountsOf', () => {
  it('sums agent and session callbacks per event', () => {
    const agentHooks: HookMap = { [HookEvent.PreToolUse]: [cb, cb], [HookEvent.SessionEnd]: [cb] };
    const sessionHooks: HookMap = { [HookEvent.PreToolUse]: [cb], [HookEvent.PostToolUse]: [cb] };
    expect(hookCountsOf(agentHooks, sessionHooks)).toEqual({
      PreToolUse: 3,
      SessionEnd: 1,
      PostToolUse: 1,
    });
  });

  it('omits events whose arrays are empty', () => {
    const counts = hookCountsOf(
      { [HookEvent.PreToolUse]: [], [HookEvent.SessionStart]: [cb] },
      { [HookEvent.PreToolUse]: [] },
    );
    expect(counts).toEqual({ SessionStart: 1 });
    expect(Object.keys(counts)).not.toContain('PreToolUse');
  });

  it('treats an undefined map as empty', () => {
    expect(hookCountsOf(undefined, { [HookEvent.TaskCompleted]: [cb] })).toEqual({
      TaskCompleted: 1,
    });
  });
});

describe('advanced.temporal connection and seams options', () => {
  const temporal = (t: Record<string, unknown>) =>
    agentWith({ temporal: { envConfig: false, ...t } });

  it('refuses TLS or an API key without an address (the embedded server is plain)', () => {
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ apiKey: 'k' }))),
      'advanced.temporal.apiKey set without an address',
    );
    expect(resolveAgentOptions(temporal({ tls: false })).temporal.connection.tls).toBe(false);
  });

  it('refuses a tls option of the wrong shape, naming the key', () => {
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ address: 'h:1', tls: { caPath: 'x' } }))),
      "advanced.temporal.tls has an unknown key 'caPath'",
    );
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ address: 'h:1', tls: 'yes' }))),
      'advanced.temporal.tls must be true, false or an object',
    );
  });

  it('refuses a plugin without a name and a runtime mode it does not know', () => {
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ plugins: [{}] }))),
      'advanced.temporal.plugins[0] is not a Temporal plugin',
    );
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ runtime: 'always' }))),
      "advanced.temporal.runtime must be 'if-absent' or 'never', got 'always'",
    );
  });

  it("refuses a versioning mode it does not know, and defaults versioning to 'auto'", () => {
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ versioning: 'pinned' }))),
      "advanced.temporal.versioning must be 'auto', 'deployments' or 'off', got 'pinned'",
    );
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ versioning: true }))),
      "advanced.temporal.versioning must be 'auto', 'deployments' or 'off', got boolean",
    );
    expect(resolveAgentOptions(temporal({})).temporal.versioning).toBe('auto');
    expect(resolveAgentOptions(temporal({ versioning: 'off' })).temporal.versioning).toBe('off');
    expect(resolveAgentOptions(temporal({ versioning: 'deployments' })).temporal.versioning).toBe(
      'deployments',
    );
  });

  it('refuses a turnStatus that is not a boolean, and defaults it to false', () => {
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ turnStatus: 'yes' }))),
      "advanced.temporal.turnStatus must be true or false, got 'yes'",
    );
    expect(resolveAgentOptions(temporal({})).temporal.turnStatus).toBe(false);
    expect(resolveAgentOptions(temporal({ turnStatus: true })).temporal.turnStatus).toBe(true);
  });

  it("takes a model step heartbeat timeout from 1 s, into the session's input only when set", () => {
    expect(resolveAgentOptions(temporal({})).temporal.modelHeartbeatTimeoutMs).toBeUndefined();
    expect(
      resolveAgentOptions(temporal({ modelHeartbeatTimeoutMs: 2_000 })).temporal
        .modelHeartbeatTimeoutMs,
    ).toBe(2_000);
    expectConfigError(
      thrownBy(() => resolveAgentOptions(temporal({ modelHeartbeatTimeoutMs: 250 }))),
      'advanced.temporal.modelHeartbeatTimeoutMs must be an integer from 1000 to 3600000 (the step heartbeats every 250 ms), got 250',
    );
  });

  it("takes a tool heartbeat timeout from 1 s, into the session's input only when set", () => {
    expect(resolveAgentOptions(temporal({})).temporal.toolHeartbeatTimeoutMs).toBeUndefined();
    expect(
      resolveAgentOptions(temporal({ toolHeartbeatTimeoutMs: 2_000 })).temporal
        .toolHeartbeatTimeoutMs,
    ).toBe(2_000);
    for (const [value, shown] of [
      [999, '999'],
      [1_500.5, '1500.5'],
      ['2000', "'2000'"],
    ] as const) {
      expectConfigError(
        thrownBy(() => resolveAgentOptions(temporal({ toolHeartbeatTimeoutMs: value as never }))),
        `advanced.temporal.toolHeartbeatTimeoutMs must be an integer from 1000 to 3600000, got ${shown}`,
      );
    }
  });

  it("takes the workflow task slots from 2 to 10000, Temporal's 40 by default", () => {
    expect(resolveAgentOptions(temporal({})).temporal.maxConcurrentWorkflowTaskExecutions).toBe(40);
    expect(
      resolveAgentOptions(temporal({ maxConcurrentWorkflowTaskExecutions: 200 })).temporal
        .maxConcurrentWorkflowTaskExecutions,
    ).toBe(200);
    for (const [value, shown] of [
      [1, '1'],
      [2.5, '2.5'],
      ['40', "'40'"],
    ] as const) {
      expectConfigError(
        thrownBy(() =>
          resolveAgentOptions(temporal({ maxConcurrentWorkflowTaskExecutions: value })),
        ),
        `advanced.temporal.maxConcurrentWorkflowTaskExecutions must be an integer from 2 to 10000, got ${shown}`,
      );
    }
  });

  describe('runtime', () => {
    // The integration suite's global setup sets the variable; these read it themselves.
    const saved = process.env.DURABLE_AGENT_TEMPORAL_RUNTIME;
    afterEach(() => {
      if (saved === undefined) delete process.env.DURABLE_AGENT_TEMPORAL_RUNTIME;
      else process.env.DURABLE_AGENT_TEMPORAL_RUNTIME = saved;
    });

    it("defaults runtime to 'if-absent' (the quiet runtime unless the process has one), plugins and interceptors to none", () => {
      delete process.env.DURABLE_AGENT_TEMPORAL_RUNTIME;
      const resolved = resolveAgentOptions(temporal({}));
      expect(resolved.temporal.runtime).toBe('if-absent');
      expect(resolved.temporal.plugins).toEqual([]);
      expect(resolved.temporal.interceptors).toEqual({});
    });

    it('takes the default from DURABLE_AGENT_TEMPORAL_RUNTIME, and the option over it', () => {
      process.env.DURABLE_AGENT_TEMPORAL_RUNTIME = 'never';
      expect(resolveAgentOptions(temporal({})).temporal.runtime).toBe('never');
      expect(resolveAgentOptions(temporal({ runtime: 'if-absent' })).temporal.runtime).toBe(
        'if-absent',
      );
    });

    it('refuses a DURABLE_AGENT_TEMPORAL_RUNTIME it does not know, naming the variable', () => {
      process.env.DURABLE_AGENT_TEMPORAL_RUNTIME = 'always';
      expectConfigError(
        thrownBy(() => resolveAgentOptions(temporal({}))),
        "DURABLE_AGENT_TEMPORAL_RUNTIME must be 'if-absent' or 'never', got 'always'",
      );
    });
  });
});
