/**
 * The deploy gate on a real server: sessions recorded with a v1 definition (a PreToolUse
 * that blocks `rm`), then `durable-agent gate` (a child process) and `gateDeploy` replay
 * their recorded hook inputs through another definition: a v2 that lets `rm` through flips
 * exactly the dispatches v1 blocked (exit 1), v1 against itself flips nothing (exit 0), bad
 * input exits 2 naming what was wrong; an encrypted agent's sessions are read with the key.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  HookEvent,
  type Agent,
  type HookCallback,
  type HookMap,
  type PermissionHandler,
} from '../../../src/index.js';
import { encryptionCodec } from '../../../src/payloads/encryption.js';
import {
  fetchSessionHistories,
  formatGateReport,
  gateDeploy,
  scriptedModel,
  toolCall,
  type GateReport,
} from '../../../src/testing/index.js';
import { keysVariable, newKey } from '../../helpers/encryption.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const dir = tempDir('gate');
/** One agent name per run: the gate lists only this run's sessions on a shared server. */
const name = `gate-${randomUUID().slice(0, 8)}`;
const encryptedName = `gate-enc-${randomUUID().slice(0, 8)}`;
const permissionName = `gate-perm-${randomUUID().slice(0, 8)}`;
/** A key id of this run's own: on a shared server, other sessions' key ids differ from it. */
const KEY_ID = `gate-${randomUUID().slice(0, 8)}`;
const KEY = newKey();
const KEY_RING = { currentKeyId: KEY_ID, keys: { [KEY_ID]: KEY } };

/** The permission function of the third agent: `ls` is denied, anything else allowed. */
const DENY_LS_SOURCE =
  "(r) => String(r.input.command).startsWith('ls') ? { behavior: 'deny', message: 'ls is not allowed' } : 'allow'";
const denyLs: PermissionHandler = (r) =>
  String(r.input.command).startsWith('ls')
    ? { behavior: 'deny', message: 'ls is not allowed' }
    : 'allow';

/** v1's policy: `rm` never runs. */
const V1_SOURCE =
  "async (i) => /(^|\\s)rm\\s/.test(String(i.toolInput?.command ?? '')) ? { action: 'abort', reason: 'rm is blocked' } : { action: 'continue' }";
const blockRm: HookCallback = async (i) =>
  /(^|\s)rm\s/.test(String(i.toolInput?.command ?? ''))
    ? { action: 'abort', reason: 'rm is blocked' }
    : { action: 'continue' };
/** v2's policy: everything runs. */
const V2_SOURCE = "async () => ({ action: 'continue' })";

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function gateCli(args: string[], keys?: string): Promise<CliRun> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: temporalAddress(),
    DURABLE_AGENT_ENCRYPTION_KEYS: keys,
  };
  if (keys === undefined) delete env.DURABLE_AGENT_ENCRYPTION_KEYS;
  delete env.DEBUG;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repo, 'src/cli/main.ts'), 'gate', ...args],
    { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * An agent module: the agent's name and version, PreToolUse callbacks (their source) and
 * other `advanced` fields (their source).
 */
function agentModule(
  agentName: string,
  version: string,
  preToolUse: string,
  // The recorded sessions' policy unless told: the gate names a changed policy.
  advanced = "permission: 'bypass-permissions',",
): string {
  const path = join(dir, `agent-${version}-${randomUUID().slice(0, 8)}.ts`);
  writeFileSync(
    path,
    `import { HookEvent } from ${JSON.stringify(join(repo, 'src/index.ts'))};\n` +
      `export default { model: 'unused', name: ${JSON.stringify(agentName)}, version: ${JSON.stringify(version)},\n` +
      `  advanced: { ${advanced} hooks: { [HookEvent.PreToolUse]: [${preToolUse}] } } };\n`,
  );
  return path;
}

let agent: Agent;
let encrypted: Agent;
let permissioned: Agent;
let permissionSession: string;
/** The session in which v1 blocked `rm -rf build` (its first dispatch). */
let blockedSession: string;
/** The session v1 let through entirely. */
let allowedSession: string;
let encryptedSession: string;
let v1Module: string;
let v2Module: string;

/** Two prompts' worth of Bash calls: `rm -rf build` (blocked by v1) and `echo hi`. */
const blockedTurns = () => [
  toolCall('Bash', { command: 'rm -rf build' }),
  toolCall('Bash', { command: 'echo hi' }),
  'done',
];

beforeAll(async () => {
  const definition = (
    agentName: string,
    permission: 'bypass-permissions' | PermissionHandler = 'bypass-permissions',
  ) => ({
    name: agentName,
    version: 'v1',
    workspaceRoots: [dir],
    advanced: {
      permission,
      hooks: { [HookEvent.PreToolUse]: [blockRm] },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('gate') },
    },
  });
  agent = await createAgent({
    ...definition(name),
    // Blocked sessions ask for `rm -rf build` then `echo hi`; allowed ones for `ls`.
    model: scriptedModel((request) => {
      const turns = request.sessionId.startsWith('gate-blocked-')
        ? blockedTurns()
        : [toolCall('Bash', { command: 'ls' }), 'done'];
      return turns[request.modelStepIndex] ?? 'done';
    }),
  });
  const first = await agent.createSession({ sessionId: `gate-blocked-${randomUUID()}` });
  await first.send('clean up');
  await first.close();
  blockedSession = first.id;
  const second = await agent.createSession({ sessionId: `gate-allowed-${randomUUID()}` });
  await second.send('list the files');
  await second.close();
  allowedSession = second.id;

  encrypted = await createAgent({
    ...definition(encryptedName),
    encryption: KEY_RING,
    model: scriptedModel(blockedTurns()),
  });
  const sealed = await encrypted.createSession({ sessionId: `gate-enc-${randomUUID()}` });
  await sealed.send('clean up');
  await sealed.close();
  encryptedSession = sealed.id;

  permissioned = await createAgent({
    ...definition(permissionName, denyLs),
    model: scriptedModel([
      toolCall('Bash', { command: 'ls' }),
      toolCall('Bash', { command: 'echo hi' }),
      'done',
    ]),
  });
  const checked = await permissioned.createSession({ sessionId: `gate-perm-${randomUUID()}` });
  await checked.send('look around');
  await checked.close();
  permissionSession = checked.id;

  v1Module = agentModule(name, 'v1', V1_SOURCE);
  v2Module = agentModule(name, 'v2', V2_SOURCE);
}, 120_000);

afterAll(async () => {
  await agent?.close();
  await encrypted?.close();
  await permissioned?.close();
});

/** The flip v1 → v2 makes in a session where v1 blocked `rm -rf build`. */
const rmFlip = {
  seq: 0,
  event: HookEvent.PreToolUse,
  toolName: 'Bash',
  before: { action: 'abort', decidedBy: 0, reason: 'rm is blocked' },
  after: { action: 'continue' },
};

describe('durable-agent gate', () => {
  it('a v2 that lets rm through: exit 1, listing exactly the dispatch v1 blocked, per session', async () => {
    const run = await gateCli([v2Module, '--since', '1h', '--json']);
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as GateReport;
    expect(report).toMatchObject({ agentName: name, version: 'v1', newVersion: 'v2', flipped: 1 });
    const byId = new Map(report.sessions.map((s) => [s.sessionId, s]));
    expect([...byId.keys()].sort()).toEqual([allowedSession, blockedSession].sort());
    // rm -rf build (blocked by v1), then echo hi and ls (let through by both).
    expect(byId.get(blockedSession)).toMatchObject({ checked: 2, flips: [rmFlip], uncompared: [] });
    expect(byId.get(allowedSession)).toMatchObject({ checked: 1, flips: [], uncompared: [] });

    const text = await gateCli([v2Module, '--since', '1h']);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toMatch(
      new RegExp(
        `session ${blockedSession} \\(COMPLETED, 2 dispatches checked\\): 1 flip\\n` +
          ' +dispatch +event +tool +before +after\\n' +
          ' +#0 +PreToolUse +Bash +abort by callback #1: rm is blocked +continue\\n',
      ),
    );
    expect(text.stdout).toContain(
      `session ${allowedSession} (COMPLETED, 1 dispatch checked): no flips`,
    );
    expect(text.stdout).toMatch(
      new RegExp(
        `gate: agent '${name}' version 'v1' -> 'v2': 2 sessions, 3 dispatches checked, 1 decision flips in 1 session`,
      ),
    );
  }, 60_000);

  it('v1 against itself: exit 0, no decision flips', async () => {
    const run = await gateCli([v1Module, '--since', '1h']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/2 sessions, 3 dispatches checked, no decision flips/);
  }, 60_000);

  it('--limit 1 checks only the most recent session', async () => {
    const run = await gateCli([v2Module, '--since', '1h', '--limit', '1', '--json']);
    // The most recent closed session is the allowed one: nothing of it flips.
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as GateReport;
    expect(report.sessions.map((s) => s.sessionId)).toEqual([allowedSession]);
  }, 60_000);

  it('bad input exits 2 with one line naming it: a missing or invalid module, no sessions, no server', async () => {
    const invalid = join(dir, 'invalid-version.mjs');
    writeFileSync(
      invalid,
      `export default { model: 'unused', name: '${name}', version: 'not a build id!' };\n`,
    );
    const throws = join(dir, 'throws.mjs');
    writeFileSync(throws, "throw new Error('module failed to load');\n");
    const cases: Array<[string[], RegExp]> = [
      [[join(dir, 'missing-agent.ts')], /no such file: .*missing-agent\.ts/],
      [[throws], /cannot load .*throws\.mjs: module failed to load/],
      [[invalid], /invalid-version\.mjs: .*version/],
      [
        [v2Module, '--version', 'v9'],
        new RegExp(`no sessions of agent '${name}' version 'v9' in namespace 'default'`),
      ],
      [[v2Module, '--address', '127.0.0.1:1'], /cannot reach Temporal at 127\.0\.0\.1:1/],
      [[v2Module, '--event', 'Nope'], /--event: unknown hook event 'Nope'/],
      [[v2Module, '--since', 'yesterday'], /--since must be a positive duration/],
    ];
    const runs = await Promise.all(cases.map(([args]) => gateCli(args)));
    runs.forEach((run, i) => {
      const [args, message] = cases[i]!;
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)]);
    });
  }, 120_000);

  it("an encrypted agent's sessions are read with the key ring; without it, exit 2 naming the key id", async () => {
    const v2 = agentModule(encryptedName, 'v2', V2_SOURCE);
    const right = await gateCli([v2, '--since', '1h', '--json'], keysVariable([KEY_ID, KEY]));
    expect(right.code, right.stderr).toBe(1);
    const report = JSON.parse(right.stdout) as GateReport;
    expect(report.sessions).toHaveLength(1);
    expect(report.sessions[0]).toMatchObject({
      sessionId: encryptedSession,
      checked: 2,
      flips: [rmFlip],
    });

    const missing = await gateCli([v2, '--since', '1h'], keysVariable(['other-key', newKey()]));
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(
      new RegExp(
        `no sessions of agent '${encryptedName}' .*could not be read .*key id '${KEY_ID}'`,
      ),
    );
  }, 60_000);
});

describe('durable-agent gate on permission checks', () => {
  it('re-judges recorded permission-function checks: the same function flips nothing, bypass-permissions flips the denial', async () => {
    const same = await gateCli([
      agentModule(permissionName, 'v1', V1_SOURCE, `permission: ${DENY_LS_SOURCE},`),
      '--since',
      '1h',
      '--json',
    ]);
    expect(same.code, same.stderr).toBe(0);
    const kept = JSON.parse(same.stdout) as GateReport;
    expect(kept.sessions).toHaveLength(1);
    // ls (denied) and echo hi (allowed): both checks recorded, both judged the same.
    expect(kept.sessions[0]).toMatchObject({
      sessionId: permissionSession,
      permissionsChecked: 2,
      permissionFlips: [],
    });
    expect(kept.sessions[0]!.policyChange).toBeUndefined();

    const bypass = await gateCli([
      agentModule(permissionName, 'v2', V1_SOURCE, "permission: 'bypass-permissions',"),
      '--since',
      '1h',
    ]);
    expect(bypass.code, bypass.stderr).toBe(1);
    expect(bypass.stdout).toMatch(
      new RegExp(
        `session ${permissionSession} \\(COMPLETED, 2 dispatches, 2 permission checks checked\\): 1 flip\\n` +
          '  permission Bash \\([^)]+\\): deny: ls is not allowed -> allow\\n' +
          '  permission policy: function:[0-9a-f]+ -> preset:bypass-permissions\\n',
      ),
    );
    expect(bypass.stdout).toMatch(/1 decision flips in 1 session/);
  }, 60_000);
});

describe('gateDeploy', () => {
  it('replays every run of a session that continued as new, counting dispatches across runs', async () => {
    const rolledName = `gate-can-${randomUUID().slice(0, 8)}`;
    const rolling = await createAgent({
      name: rolledName,
      version: 'v1',
      workspaceRoots: [dir],
      // Each prompt asks for `rm -rf build` once, then answers.
      model: scriptedModel((request) =>
        request.step === 0 ? toolCall('Bash', { command: 'rm -rf build' }) : 'done',
      ),
      advanced: {
        permission: 'bypass-permissions',
        continueAsNewAfterPrompts: 1,
        hooks: { [HookEvent.PreToolUse]: [blockRm] },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('gate-can') },
      },
    });
    try {
      const session = await rolling.createSession({ sessionId: `gate-can-${randomUUID()}` });
      await session.send('clean up');
      await session.send('clean up again');
      await session.close();
      // The premise: more than one run. A third run is the right outcome too: when the
      // second prompt's rollover archive finishes before the close arrives, the session
      // continues as new once more and closes in a run with no dispatches.
      expect(
        (await fetchSessionHistories(rolling.client, session.id)).length,
      ).toBeGreaterThanOrEqual(2);
      const report = await gateDeploy({
        agent: {
          model: 'unused',
          name: rolledName,
          advanced: { hooks: { [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })] } },
        },
        client: rolling.client,
      });
      expect(report.sessions).toHaveLength(1);
      // One blocked `rm` per prompt, one prompt per run.
      expect(
        report.sessions[0]!.flips.map((f) => [f.seq, f.before.action, f.after.action]),
      ).toEqual([
        [0, 'abort', 'continue'],
        [1, 'abort', 'continue'],
      ]);
    } finally {
      await rolling.close();
    }
  }, 60_000);

  it('reports the same flips in code, with an encrypted agent read through a client with its codec', async () => {
    const connection = await Connection.connect({ address: temporalAddress() });
    try {
      const plain = new Client({ connection });
      const v2 = {
        model: 'unused',
        name,
        version: 'v2',
        advanced: {
          hooks: {
            [HookEvent.PreToolUse]: [async () => ({ action: 'continue' as const })],
          },
        },
      };
      const report = await gateDeploy({
        agent: v2,
        client: plain,
        since: new Date(Date.now() - 3600_000),
      });
      expect(report.flipped).toBe(1);
      expect(report.sessions.find((s) => s.sessionId === blockedSession)?.flips).toEqual([rmFlip]);

      // Only UserPromptSubmit replayed: nothing of PreToolUse is compared.
      const narrowed = await gateDeploy({
        agent: v2,
        client: plain,
        events: [HookEvent.UserPromptSubmit],
      });
      expect(narrowed).toMatchObject({ checked: 0, flipped: 0, uncompared: 3 });

      const sealed = new Client({
        connection,
        dataConverter: { payloadCodecs: [encryptionCodec(KEY_RING)] },
      });
      const encryptedReport = await gateDeploy({
        agent: { ...v2, name: encryptedName },
        client: sealed,
      });
      expect(encryptedReport.sessions.map((s) => s.flips)).toEqual([[rmFlip]]);

      await expect(gateDeploy({ agent: v2, client: plain, version: 'v9' })).rejects.toThrow(
        new RegExp(`no sessions of agent '${name}' version 'v9'`),
      );
    } finally {
      await connection.close();
    }
  }, 60_000);
});

describe('gateDeploy with sub-agents', () => {
  it("re-runs a Task call's sub-agent dispatches with its callbacks, reported in the top session", async () => {
    const subName = `gate-sub-${randomUUID().slice(0, 8)}`;
    const cleaner = { description: 'Cleans', prompt: 'You clean.' };
    const delegating = await createAgent({
      name: subName,
      version: 'v1',
      workspaceRoots: [dir],
      // The top session delegates to the cleaner, who runs `rm -rf build` (blocked by v1).
      model: scriptedModel((request) => {
        const answered = request.messages.at(-1)?.role === 'tool';
        if (request.agentPath === 'main/cleaner') {
          return answered ? 'cleaned' : toolCall('Bash', { command: 'rm -rf build' });
        }
        return answered
          ? 'done'
          : toolCall('Task', { description: 'Clean', prompt: 'clean', subagent_type: 'cleaner' });
      }),
      advanced: {
        permission: 'bypass-permissions',
        hooks: { [HookEvent.PreToolUse]: [blockRm] },
        subagents: { agents: { cleaner } },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('gate-sub') },
      },
    });
    try {
      const session = await delegating.createSession();
      expect((await session.send('clean up')).text()).toBe('done');
      await session.close();
      const letThrough: HookMap = {
        [HookEvent.PreToolUse]: [async () => ({ action: 'continue' as const })],
      };
      const gate = (subagents?: Record<string, typeof cleaner & { hooks?: HookMap }>) =>
        gateDeploy({
          agent: {
            model: 'unused',
            name: subName,
            advanced: {
              hooks: letThrough,
              ...(subagents ? { subagents: { agents: subagents } } : {}),
            },
          },
          client: delegating.client,
        });

      // The cleaner inherits v2's hooks: its blocked `rm` flips, under the top session.
      const inherited = await gate({ cleaner });
      expect(inherited.sessions.map((s) => s.sessionId)).toEqual([session.id]);
      expect(inherited.sessions[0]).toMatchObject({ checked: 2, uncompared: [] });
      expect(inherited.sessions[0]!.flips).toEqual([
        {
          seq: 1,
          event: HookEvent.PreToolUse,
          toolName: 'Bash',
          agentPath: 'main/cleaner',
          sessionId: expect.stringMatching(new RegExp(`^${session.id}/`)),
          before: { action: 'abort', decidedBy: 0, reason: 'rm is blocked' },
          after: { action: 'continue' },
        },
      ]);
      expect(formatGateReport(inherited)).toMatch(
        / +#1 main\/cleaner +PreToolUse +Bash +abort by callback #1: rm is blocked +continue/,
      );

      // Its own hooks still block `rm`: nothing flips.
      const own = await gate({
        cleaner: { ...cleaner, hooks: { [HookEvent.PreToolUse]: [blockRm] } },
      });
      expect(own).toMatchObject({ checked: 2, flipped: 0, uncompared: 0 });

      // A definition without the sub-agent: its dispatch is not compared, and says why.
      const without = await gate();
      expect(without.sessions[0]!.uncompared).toEqual([
        expect.objectContaining({
          seq: 1,
          agentPath: 'main/cleaner',
          why: expect.stringMatching(/no sub-agent named 'cleaner'/),
        }),
      ]);
    } finally {
      await delegating.close();
    }
  }, 60_000);
});
