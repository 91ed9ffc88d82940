/**
 * Golden sessions: a real session's dispatches recorded from its history, the current hooks
 * run on the recorded inputs, changed decisions reported side by side; the same as a CLI gate.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookEvent, type HookCallback, type HookMap } from '../../../src/index.js';
import {
  assertGoldenSession,
  checkGoldenSession,
  createHookTestEnv,
  formatGoldenChanges,
  readGoldenSession,
  scriptedModel,
  toolCall,
  type GoldenSession,
  type HookTestEnv,
} from '../../../src/testing/index.js';
import { temporalAddress } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const dir = tempDir('golden');

const blockRmRf: HookCallback = async (input) =>
  input.toolName === 'Bash' && /rm\s+-rf/.test(String(input.toolInput?.command ?? ''))
    ? { action: 'abort', reason: 'dangerous command blocked' }
    : { action: 'continue' };
const redact: HookCallback = async (input) =>
  input.toolName === 'Bash'
    ? {
        action: 'continue',
        modifiedOutput: String(input.toolOutput ?? '').replace(/SECRET=\w+/g, 'SECRET=***'),
      }
    : { action: 'continue' };
const hooks: HookMap = {
  [HookEvent.PreToolUse]: [blockRmRf],
  [HookEvent.PostToolUse]: [redact],
};

let env: HookTestEnv;
let recorded: GoldenSession;
const file = join(dir, 'cleanup.json');
/** Recorded into a folder that did not exist. */
const nested = join(dir, 'not', 'yet', 'there', 'cleanup.json');

/** An agent module whose default export has `hooks` (the text of a HookMap's entries). */
const agentModule = (body: string) => {
  const path = join(dir, `agent-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(
    path,
    `import { HookEvent } from ${JSON.stringify(join(repo, 'src/index.ts'))};\n` +
      `export default { model: 'unused', advanced: { hooks: { ${body} } } };\n`,
  );
  return path;
};
/** The same policy as `hooks`, as an agent module. */
const sameHooks = () =>
  agentModule(
    `[HookEvent.PreToolUse]: [async (i) => /rm\\s+-rf/.test(String(i.toolInput?.command)) ? { action: 'abort', reason: 'dangerous command blocked' } : { action: 'continue' }],` +
      `[HookEvent.PostToolUse]: [async (i) => ({ action: 'continue', modifiedOutput: String(i.toolOutput ?? '').replace(/SECRET=\\w+/g, 'SECRET=***') })]`,
  );
const goldenCli = (...args: string[]) =>
  spawnSync(
    process.execPath,
    ['--import', 'tsx', join(repo, 'src/cli/main.ts'), 'golden', ...args],
    {
      encoding: 'utf8',
      cwd: repo,
    },
  );

beforeAll(async () => {
  env = await createHookTestEnv({
    agent: {
      model: scriptedModel([
        toolCall('Bash', { command: 'rm -rf build' }),
        toolCall('Bash', { command: 'echo SECRET=abc123' }),
        'done',
      ]),
      workspaceRoots: [dir],
      advanced: { permission: 'bypass-permissions', hooks },
    },
  });
  const session = await env.createSession();
  await session.send('clean up');
  await session.close();
  recorded = await env.recordGolden(session, file);
  await env.recordGolden(session, nested);
});
afterAll(async () => {
  await env?.teardown();
});

describe('golden sessions', () => {
  it('records every dispatch with its input and decision', () => {
    expect(recorded.dispatches.map((d) => [d.event, d.toolName, d.decision.action])).toEqual([
      [HookEvent.PreToolUse, 'Bash', 'abort'],
      [HookEvent.PreToolUse, 'Bash', 'continue'],
      [HookEvent.PostToolUse, 'Bash', 'continue'],
    ]);
    expect(recorded.dispatches[2]!.decision.modifiedOutput).toBe('SECRET=***\n');
    expect(readGoldenSession(file)).toEqual(recorded);
  });

  it('recordGolden creates the folder of its file', () => {
    expect(existsSync(nested)).toBe(true);
    expect(readGoldenSession(nested).dispatches).toEqual(recorded.dispatches);
  });

  it('the same hooks decide the same on the recorded inputs', async () => {
    const report = await checkGoldenSession(readGoldenSession(file), hooks);
    expect(report).toMatchObject({ checked: 3, changes: [] });
    await assertGoldenSession(recorded, hooks);
  });

  it('a policy change is reported per decision, before and after', async () => {
    const looser: HookMap = {
      ...hooks,
      [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })],
    };
    const report = await checkGoldenSession(recorded, looser);
    expect(report.changes).toEqual([
      {
        seq: 0,
        event: HookEvent.PreToolUse,
        toolName: 'Bash',
        before: { action: 'abort', decidedBy: 0, reason: 'dangerous command blocked' },
        after: { action: 'continue' },
      },
    ]);
    await expect(assertGoldenSession(recorded, looser)).rejects.toThrow(
      /1 of 3 hook decisions changed[\s\S]*#0 +PreToolUse +Bash +abort by callback #1: dangerous command blocked +continue/,
    );
  });

  it('a malformed recording is refused, naming the file and the problem', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ format: 'durable-agent-golden/1', dispatches: [{ event: 'Nope' }] }),
    );
    expect(() => readGoldenSession(bad)).toThrow(/bad\.json, dispatch 0: unknown event "Nope"/);
    writeFileSync(bad, '{not json');
    expect(() => readGoldenSession(bad)).toThrow(/bad\.json is not readable JSON/);
  });

  it('the CLI gate: exit 0 when no decision changed, 1 with the table when one did', () => {
    const cli = (agent: string) => goldenCli(agent, dir);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify(recorded)); // a valid copy now
    const ok = cli(sameHooks());
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/cleanup\.json: 3 decisions, none changed/);
    const changed = cli(
      agentModule(`[HookEvent.PreToolUse]: [async () => ({ action: 'continue' })]`),
    );
    expect(changed.status).toBe(1);
    expect(changed.stdout).toMatch(/cleanup\.json: 2 of 3 decisions changed/);
    expect(changed.stdout).toMatch(
      /#2 +PostToolUse +Bash +continue output="SECRET=\*\*\*\\n" +continue/,
    );
  }, 60_000);

  it('the CLI gate exits 2, never 1, when it cannot check: a malformed or missing recording, a missing or unloadable module', () => {
    const bad = tempDir('golden-bad');
    const malformed = join(bad, 'malformed.json');
    writeFileSync(
      malformed,
      JSON.stringify({ format: 'durable-agent-golden/1', dispatches: [{ event: 'Nope' }] }),
    );
    const notJson = join(bad, 'not-json.json');
    writeFileSync(notJson, '{not json');
    const noOptions = join(bad, 'no-options.mjs');
    writeFileSync(noOptions, 'export default 42;\n');
    const throws = join(bad, 'throws.mjs');
    writeFileSync(throws, "throw new Error('module failed to load');\n");
    const module = sameHooks();
    const cases: Array<[string[], RegExp]> = [
      [[module, malformed], /malformed\.json, dispatch 0: unknown event "Nope"/],
      [[module, notJson], /not-json\.json is not readable JSON/],
      [[module, join(bad, 'missing.json')], /no such file or folder: .*missing\.json/],
      [[module, mkdtempSync(join(bad, 'empty-'))], /no \.json recordings in /],
      [[join(bad, 'missing-agent.ts'), file], /no such file: .*missing-agent\.ts/],
      [[noOptions, file], /must export the agent's options as default/],
      [[throws, file], /cannot load .*throws\.mjs: module failed to load/],
      [[module], /golden: missing <recordings>/],
    ];
    for (const [args, message] of cases) {
      const run = goldenCli(...args);
      expect(run.status, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)]);
    }
  }, 120_000);
});

describe('golden sessions with sub-agents', () => {
  it("records a Task call's sub-agent dispatches with its parent's and checks them with the sub-agent's hooks", async () => {
    const subEnv = await createHookTestEnv({
      address: temporalAddress(),
      agent: {
        // The top session delegates to the cleaner, who runs `rm -rf build` (blocked).
        model: scriptedModel((request) => {
          const answered = request.messages.at(-1)?.role === 'tool';
          if (request.agentPath === 'main/cleaner') {
            return answered ? 'cleaned' : toolCall('Bash', { command: 'rm -rf build' });
          }
          return answered
            ? 'done'
            : toolCall('Task', { description: 'Clean', prompt: 'clean', subagent_type: 'cleaner' });
        }),
        workspaceRoots: [dir],
        advanced: {
          permission: 'bypass-permissions',
          hooks,
          subagents: { agents: { cleaner: { description: 'Cleans', prompt: 'You clean.' } } },
        },
      },
    });
    try {
      const session = await subEnv.createSession();
      await session.send('clean up');
      await session.close();
      const golden = await subEnv.recordGolden(session, join(dir, 'subagents', 'task.json'));
      const child = golden.dispatches.find((d) => d.lineage)?.sessionId;
      expect(child).toMatch(new RegExp(`^${session.id}/`));
      // The cleaner's dispatch sits where its session ran: after the Task call's PreToolUse.
      expect(
        golden.dispatches.map((d) => [d.seq, d.lineage?.agentPath ?? 'main', d.event, d.toolName]),
      ).toEqual([
        [0, 'main', HookEvent.PreToolUse, 'Task'],
        [1, 'main/cleaner', HookEvent.PreToolUse, 'Bash'],
        [2, 'main', HookEvent.PostToolUse, 'Task'],
      ]);
      expect(golden.dispatches[1]).toMatchObject({
        sessionId: child,
        lineage: { subagent: 'cleaner', parentSessionId: session.id, depth: 1 },
        decision: { action: 'abort', reason: 'dangerous command blocked' },
      });

      // The cleaner inherits the agent's hooks: the same decisions.
      const inherit = { subagents: { cleaner: {} } };
      expect(await checkGoldenSession(golden, hooks, inherit)).toMatchObject({ changes: [] });
      // Its own hooks decide its dispatches, given its lineage as live.
      const seen: unknown[] = [];
      const own = {
        subagents: {
          cleaner: {
            hooks: {
              [HookEvent.PreToolUse]: [
                async (input: Parameters<HookCallback>[0]) => {
                  seen.push([input.sessionId, input.parentSessionId, input.agentPath, input.depth]);
                  return { action: 'continue' as const };
                },
              ],
            },
          },
        },
      };
      const report = await checkGoldenSession(golden, hooks, own);
      expect(seen).toEqual([[child, session.id, 'main/cleaner', 1]]);
      expect(report.changes).toEqual([
        {
          seq: 1,
          event: HookEvent.PreToolUse,
          toolName: 'Bash',
          agentPath: 'main/cleaner',
          sessionId: child,
          before: { action: 'abort', decidedBy: 0, reason: 'dangerous command blocked' },
          after: { action: 'continue' },
        },
      ]);
      expect(formatGoldenChanges(report.changes)).toMatch(
        /#1 main\/cleaner +PreToolUse +Bash +abort by callback #1: dangerous command blocked +continue/,
      );
      // The CLI gate reads the module's sub-agents: the cleaner's own hooks let `rm` through.
      const module = join(dir, 'subagents-agent.ts');
      writeFileSync(
        module,
        `import { HookEvent } from ${JSON.stringify(join(repo, 'src/index.ts'))};\n` +
          `const pass = { [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })] };\n` +
          `export default { model: 'unused', advanced: { hooks: pass, subagents: { agents: ` +
          `{ cleaner: { description: 'Cleans', prompt: 'You clean.', hooks: pass } } } } };\n`,
      );
      const cli = goldenCli(module, join(dir, 'subagents'));
      expect(cli.stderr).toBe('');
      expect(cli.status).toBe(1);
      expect(cli.stdout).toMatch(/task\.json: 1 of 3 decisions changed/);
      expect(cli.stdout).toMatch(/#1 main\/cleaner +PreToolUse +Bash +abort by callback #1/);
      // A definition without the sub-agent cannot decide its dispatches.
      expect((await checkGoldenSession(golden, hooks)).changes).toMatchObject([
        {
          seq: 1,
          after: { action: 'error', reason: expect.stringMatching(/no sub-agent named 'cleaner'/) },
        },
      ]);
    } finally {
      await subEnv.teardown();
    }
  }, 120_000);
});
