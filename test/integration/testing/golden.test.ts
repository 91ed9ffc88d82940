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
  readGoldenSession,
  scriptedModel,
  toolCall,
  type GoldenSession,
  type HookTestEnv,
} from '../../../src/testing/index.js';
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
