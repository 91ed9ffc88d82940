/**
 * The deploy gate's comparison (src/testing/gate.ts) on hand-made recordings: what flips,
 * what is not compared and why, session-level hook events, the text report; and `gate`'s
 * command line.
 */
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/args.js';
import { CliError } from '../../../src/cli/cli-error.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import type { HookMap } from '../../../src/common/types.js';
import {
  comparePermissionChecks,
  compareRecording,
  formatGateReport,
  sessionHookEventsOf,
  type GatePermissionCheck,
  type GateReport,
} from '../../../src/testing/gate.js';
import type { GoldenDispatch } from '../../../src/testing/golden.js';

const bash = (seq: number, command: string, decision: GoldenDispatch['decision'], version = 'v1') =>
  ({
    seq,
    event: HookEvent.PreToolUse,
    toolName: 'Bash',
    payload: { toolName: 'Bash', toolUseId: `t${seq}`, toolInput: { command } },
    budgetMs: 5000,
    decision,
    version,
  }) satisfies GoldenDispatch;

const blockRm: HookMap = {
  [HookEvent.PreToolUse]: [
    async (i) =>
      String(i.toolInput?.command).startsWith('rm ')
        ? { action: 'abort', reason: 'rm is blocked' }
        : { action: 'continue' },
  ],
};
const letAll: HookMap = { [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })] };
const blocked = { action: 'abort', decidedBy: 0, reason: 'rm is blocked' };

describe('compareRecording', () => {
  const recording = {
    sessionId: 's1',
    dispatches: [bash(0, 'rm -rf build', blocked), bash(1, 'echo hi', { action: 'continue' })],
  };

  it('the same policy flips nothing', async () => {
    expect(await compareRecording(recording, blockRm, { version: 'v1' })).toEqual({
      checked: 2,
      flips: [],
      uncompared: [],
    });
  });

  it('a looser policy flips exactly the dispatch it now lets through, before and after', async () => {
    expect(await compareRecording(recording, letAll, { version: 'v1' })).toEqual({
      checked: 2,
      flips: [
        {
          seq: 0,
          event: HookEvent.PreToolUse,
          toolName: 'Bash',
          before: blocked,
          after: { action: 'continue' },
        },
      ],
      uncompared: [],
    });
  });

  it('an edit of the input is a flip: modifiedInput compares as the merged value', async () => {
    const quoting: HookMap = {
      [HookEvent.PreToolUse]: [
        async () => ({ action: 'continue', modifiedInput: { command: 'echo "hi"' } }),
      ],
    };
    const { flips } = await compareRecording(
      { sessionId: 's1', dispatches: [bash(1, 'echo hi', { action: 'continue' })] },
      quoting,
    );
    expect(flips.map((f) => f.after)).toEqual([
      { action: 'continue', modifiedInput: { command: 'echo "hi"' } },
    ]);
  });

  it('an event the new definition has no callbacks for decides continue (nothing is dispatched)', async () => {
    const { flips } = await compareRecording(recording, {});
    expect(flips.map((f) => [f.seq, f.after])).toEqual([[0, { action: 'continue' }]]);
  });

  it('a callback that throws is an error decision naming the callback', async () => {
    const throwing: HookMap = {
      [HookEvent.PreToolUse]: [
        async () => ({ action: 'continue' }),
        async () => {
          throw new Error('policy service down');
        },
      ],
    };
    const { flips } = await compareRecording(recording, throwing);
    expect(flips.map((f) => f.after)).toEqual([
      { action: 'error', decidedBy: 1, reason: 'policy service down' },
      { action: 'error', decidedBy: 1, reason: 'policy service down' },
    ]);
  });

  it('does not compare another version, session-hook events, failed dispatches or other events, saying why', async () => {
    const dispatches: GoldenDispatch[] = [
      bash(0, 'rm -rf build', blocked, 'v0'),
      bash(1, 'rm -rf build', { action: 'error', reason: 'the dispatch activity failed' }),
      { ...bash(2, 'x', { action: 'continue' }), event: HookEvent.PostToolUse },
      {
        seq: 3,
        event: HookEvent.UserPromptSubmit,
        payload: { userPrompt: 'hi' },
        budgetMs: 5000,
        decision: { action: 'continue' },
        version: 'v1',
      },
    ];
    const result = await compareRecording({ sessionId: 's1', dispatches }, letAll, {
      version: 'v1',
      sessionHookEvents: new Set([HookEvent.PostToolUse]),
      events: [HookEvent.PreToolUse, HookEvent.PostToolUse],
    });
    expect(result.checked).toBe(0);
    expect(result.flips).toEqual([]);
    expect(result.uncompared.map((u) => [u.seq, u.why])).toEqual([
      [0, "decided by version 'v0', not 'v1'"],
      [1, 'no decision was recorded (the dispatch activity failed)'],
      [2, expect.stringMatching(/session-level PostToolUse callbacks \(SessionOptions\.hooks/)],
      [3, 'event UserPromptSubmit is not among the events checked'],
    ]);
  });

  it('every callback gets its own copy of the recorded input; the recording is left as it was', async () => {
    const mutating: HookMap = {
      [HookEvent.PreToolUse]: [
        async (i) => {
          (i.toolInput as { command: string }).command = 'mutated';
          return { action: 'continue' };
        },
        async (i) =>
          i.toolInput?.command === 'echo hi'
            ? { action: 'continue' }
            : { action: 'abort', reason: 'saw a mutation' },
      ],
    };
    const single = { sessionId: 's1', dispatches: [bash(1, 'echo hi', { action: 'continue' })] };
    expect((await compareRecording(single, mutating)).flips).toEqual([]);
    expect(single.dispatches[0]!.payload.toolInput.command).toBe('echo hi');
  });

  it("a sub-agent's dispatch runs its own hooks or the agent's, by its lineage, with its session and path", async () => {
    const lineage = {
      parentSessionId: 's1',
      rootSessionId: 's1',
      agentPath: 'main/cleaner',
      depth: 1,
      subagent: 'cleaner',
      toolUseId: 't0',
      stream: { sessionId: 's1', requestId: 'r1' },
    };
    const child = { ...bash(1, 'rm -rf build', blocked), sessionId: 's1/0-t0', lineage };
    const mixed = { sessionId: 's1', dispatches: [bash(0, 'rm -rf build', blocked), child] };
    const seen: unknown[] = [];
    const recordingHooks: HookMap = {
      [HookEvent.PreToolUse]: [
        async (i) => {
          seen.push([i.sessionId, i.parentSessionId, i.agentPath, i.depth]);
          return { action: 'continue' };
        },
      ],
    };
    // Inherited: the agent's hooks decide both (v2 lets `rm` through in both).
    const inherited = await compareRecording(mixed, letAll, { subagents: { cleaner: {} } });
    expect(inherited.flips.map((f) => [f.seq, f.agentPath, f.sessionId])).toEqual([
      [0, undefined, undefined],
      [1, 'main/cleaner', 's1/0-t0'],
    ]);
    // Its own: they decide its dispatch, given its session id and lineage.
    const own = await compareRecording(mixed, blockRm, {
      subagents: { cleaner: { hooks: recordingHooks } },
    });
    expect(own.flips.map((f) => f.seq)).toEqual([1]);
    expect(seen).toEqual([['s1/0-t0', 's1', 'main/cleaner', 1]]);
    // No such sub-agent in the new definition: not compared, saying why.
    const missing = await compareRecording(mixed, blockRm);
    expect(missing).toMatchObject({ checked: 1, flips: [] });
    expect(missing.uncompared).toEqual([
      {
        seq: 1,
        event: HookEvent.PreToolUse,
        toolName: 'Bash',
        agentPath: 'main/cleaner',
        sessionId: 's1/0-t0',
        why: "a sub-agent's dispatch: the definition has no sub-agent named 'cleaner' (it has: none)",
      },
    ]);
  });
});

describe('comparePermissionChecks', () => {
  const check = (command: string, answer: GatePermissionCheck['answer'], extra = {}) =>
    ({
      toolUseId: `t-${command}`,
      toolName: 'Bash',
      request: { toolName: 'Bash', input: { command }, kind: 'execute', affectedPaths: [] },
      answer,
      version: 'v1',
      ...extra,
    }) satisfies GatePermissionCheck;
  const denied = { behavior: 'deny', message: 'ls is not allowed' } as const;
  const checks = [check('ls', denied), check('echo hi', { behavior: 'allow' })];

  it('a function that answers the same flips nothing; one that allows all flips the denial', async () => {
    const same = await comparePermissionChecks(checks, (r) =>
      String(r.input.command).startsWith('ls') ? denied : 'allow',
    );
    expect(same).toEqual({ checked: 2, flips: [] });
    const lax = await comparePermissionChecks(checks, () => 'allow');
    expect(lax).toEqual({
      checked: 2,
      flips: [
        { toolUseId: 't-ls', toolName: 'Bash', before: denied, after: { behavior: 'allow' } },
      ],
    });
  });

  it("a sub-agent's check is judged by its own policy, else the agent's; an unknown one is not judged", async () => {
    const child = check('ls', denied, { subagent: 'cleaner', agentPath: 'main/cleaner' });
    const denyLs = (r: { input: Record<string, unknown> }) =>
      String(r.input.command).startsWith('ls') ? denied : ('allow' as const);
    // Inherited: the agent's new policy (allow all) flips it, named by its path.
    const inherited = await comparePermissionChecks([child], 'bypass-permissions', {
      subagents: { cleaner: {} },
    });
    expect(inherited.flips).toEqual([
      {
        toolUseId: 't-ls',
        toolName: 'Bash',
        before: denied,
        after: { behavior: 'allow' },
        agentPath: 'main/cleaner',
      },
    ]);
    // Its own policy still denies `ls`: nothing flips.
    const own = await comparePermissionChecks([child], 'bypass-permissions', {
      subagents: { cleaner: { permission: denyLs } },
    });
    expect(own).toEqual({ checked: 1, flips: [] });
    expect(await comparePermissionChecks([child], 'bypass-permissions')).toEqual({
      checked: 0,
      flips: [],
    });
  });

  it('a preset judges the recorded kind', async () => {
    const { flips } = await comparePermissionChecks(checks, 'accept-edits');
    expect(flips.map((f) => [f.toolUseId, f.after])).toEqual([
      ['t-ls', { behavior: 'ask' }],
      ['t-echo hi', { behavior: 'ask' }],
    ]);
  });

  it('a function that throws, hangs or answers nonsense is an error answer', async () => {
    const results = await Promise.all([
      comparePermissionChecks([checks[1]!], () => {
        throw new Error('policy store down');
      }),
      comparePermissionChecks([checks[1]!], () => new Promise<never>(() => undefined), {
        timeoutMs: 20,
      }),
      comparePermissionChecks([checks[1]!], () => 'maybe' as never),
    ]);
    expect(results.map((r) => r.flips[0]?.after)).toEqual([
      { behavior: 'error', message: 'policy store down' },
      { behavior: 'error', message: 'the permission function exceeded 20ms' },
      { behavior: 'error', message: expect.stringMatching(/returned "maybe" for Bash/) },
    ]);
  });

  it('skips session permission functions and checks of another version', async () => {
    const result = await comparePermissionChecks(
      [check('ls', denied, { sessionHandler: true }), check('ls', denied, { version: 'v0' })],
      () => 'allow',
      { version: 'v1' },
    );
    expect(result).toEqual({ checked: 0, flips: [] });
  });
});

describe('sessionHookEventsOf', () => {
  it('names the events whose callback count passes the definition manifest', () => {
    const events = sessionHookEventsOf({
      hookCounts: { PreToolUse: 2, PostToolUse: 1, TaskCompleted: 1 },
      manifest: {
        hooks: { PreToolUse: ['a'], PostToolUse: ['b'] },
        permission: 'preset:default',
        tools: {},
        options: {} as never,
      },
    });
    expect([...events].sort()).toEqual(['PreToolUse', 'TaskCompleted']);
  });

  it('knows none without a manifest (sessions from before versions)', () => {
    expect(sessionHookEventsOf({ hookCounts: { PreToolUse: 3 } }).size).toBe(0);
    expect(sessionHookEventsOf(undefined).size).toBe(0);
  });
});

describe('formatGateReport', () => {
  const report = (flips: GateReport['sessions'][number]['flips']): GateReport => ({
    agentName: 'ops',
    version: 'v1',
    newVersion: 'v2',
    newFingerprint: '0123456789abcdef',
    sessions: [
      {
        sessionId: 's1',
        workflowId: 'session-s1',
        version: 'v1',
        status: 'COMPLETED',
        startTime: new Date(0),
        checked: 2,
        flips,
        uncompared: [],
        permissionsChecked: 0,
        permissionFlips: [],
      },
    ],
    checked: 2,
    permissionsChecked: 0,
    flipped: flips.length,
    uncompared: 0,
    unrecordedEvents: [HookEvent.SessionEnd],
    unreadable: [],
  });

  it('lists each flip under its session, then a summary line and what has no recorded input', () => {
    const text = formatGateReport(
      report([
        {
          seq: 0,
          event: HookEvent.PreToolUse,
          toolName: 'Bash',
          before: blocked,
          after: { action: 'continue' },
        },
      ]),
    );
    expect(text.split('\n')).toEqual([
      'session s1 (COMPLETED, 2 dispatches checked): 1 flip',
      expect.stringMatching(/^ {2}dispatch +event +tool +before +after$/),
      expect.stringMatching(
        /^ {2}#0 +PreToolUse +Bash +abort by callback #1: rm is blocked +continue$/,
      ),
      "gate: agent 'ops' version 'v1' -> 'v2': 1 session, 2 dispatches checked, 1 decision flips in 1 session",
      expect.stringMatching(/^note: no recorded input for SessionEnd /),
    ]);
  });

  it('says no decision flips when none does', () => {
    expect(formatGateReport(report([]))).toMatch(
      /^session s1 \(COMPLETED, 2 dispatches checked\): no flips\ngate: .*: 1 session, 2 dispatches checked, no decision flips\n/,
    );
  });
});

describe('gate command line', () => {
  const parse = (argv: string[]) => {
    const parsed = parseCommandLine(argv, { HOME: '/nonexistent' });
    if (parsed.kind !== 'command') throw new Error('expected a command');
    return parsed;
  };

  it('takes the module, --version, --since, --limit, --event and --json; its own default timeout', () => {
    const parsed = parse([
      'gate',
      'agent.ts',
      '--version',
      'v1',
      '--since',
      '24h',
      '--limit',
      '5',
      '--event',
      'PreToolUse',
      '--event',
      'TaskCompleted',
      '--json',
    ]);
    expect(parsed).toMatchObject({
      args: ['agent.ts'],
      version: 'v1',
      sinceMs: 24 * 3600_000,
      limit: 5,
      events: ['PreToolUse', 'TaskCompleted'],
      json: true,
      timeoutMs: 120_000,
    });
  });

  it('refuses a bad --since and an empty --version as usage errors (exit 2)', () => {
    for (const [argv, message] of [
      [['gate', 'a.ts', '--since', 'soon'], /--since must be a positive duration/],
      [['gate', 'a.ts', '--version', ' '], /--version must not be empty/],
      [['gate'], /gate: missing <module\.ts\|js>/],
      [['sessions', '--since', '1h'], /sessions does not take --since/],
    ] as const) {
      let error: unknown;
      try {
        parse([...argv]);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(2);
      expect((error as Error).message).toMatch(message);
    }
  });
});
