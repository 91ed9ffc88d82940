/**
 * The README's main job, end to end and non-interactive: a real session with the seed's
 * hooks, a worker killed with SIGKILL while an approval waits, and the summary's checks. The
 * demo runs as a child process, as `npm run demo` runs it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporalAddress } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const main = 'examples/demo/main.ts';

interface Run {
  code: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

/** Run the demo against the test server with the scripted model. */
async function runDemo(...args: string[]): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', main, ...args], {
    cwd: repo,
    env: {
      ...process.env,
      // A kept workspace (--keep) goes where it is removed after this file's tests.
      TMPDIR: tempDir('demo-tmp'),
      TEMPORAL_ADDRESS: temporalAddress(),
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

/** The workspace folder the demo announced. */
function workspaceOf(output: string): string {
  const match = /workspace: (\S+)/.exec(output);
  expect(match, output).not.toBeNull();
  return match![1]!;
}

describe('the demo', () => {
  let run: Run;
  beforeAll(async () => {
    run = await runDemo();
  }, 120_000);

  it('runs to the end, prints a line per hook dispatch, and exits 0 with every check held', () => {
    const { output, code } = run;
    expect(output).toMatch(/hook PreToolUse\s+Bash\s+abort/);
    expect(output).toMatch(/hook SessionEnd\s+continue/);
    for (const check of [
      'SessionStart ran once',
      'SessionEnd ran once',
      'the secret never reached the model',
      'the worker was killed mid-session and the session finished',
      'rm -rf was blocked and build/ is intact',
      'the .env read was redacted',
      'NOTES.md was written once, after approval, with the stamp',
    ]) {
      expect(output).toContain(`[ok  ] ${check}`);
    }
    expect(output).toContain('All checks held.');
    expect(code, output).toBe(0);
  });

  it('shows a changed output as "continue (output modified)", only where the output changed', () => {
    const postRead = run.output.match(/hook PostToolUse\s+Read\s+.*/g) ?? [];
    // Two Reads: src/app.ts passes unchanged, .env is redacted.
    expect(postRead, run.output).toHaveLength(2);
    expect(postRead.filter((line) => line.includes('continue (output modified)'))).toHaveLength(1);
    expect(run.output).toMatch(/hook PreToolUse\s+Write\s+continue \(input modified\)/);
    expect(run.output).toMatch(/hook UserPromptSubmit\s+continue \(prompt modified\)/);
  });

  it('prints the whole permission request: id, tool, kind, paths and the full input', () => {
    const line = /\? permission request (\S+): Write \(write\) on (\S+), input (.*)/.exec(
      run.output,
    );
    expect(line, run.output).not.toBeNull();
    expect(line![1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(line![2]).toMatch(/NOTES\.md$/);
    const input = JSON.parse(line![3]!) as { file_path: string; content: string };
    expect(input.file_path).toBe('NOTES.md');
    expect(input.content).toMatch(/^\/\/ Generated\n# Audit notes\n[\s\S]*keep it out of git\.\n$/);
  });

  it('says what happens while the worker restarts, and how long the takeover waits', () => {
    const { output } = run;
    expect(output).toMatch(/killing worker-1 \(pid \d+\) with SIGKILL while the request waits/);
    // The demo's stickyQueueScheduleToStartTimeoutMs is 1000 ms.
    expect(output).toContain(
      "worker-1 killed; the request waits in the session's workflow, not in a process. " +
        "A new worker takes over the session when the old one's tasks time out (about 1.0 s",
    );
    expect(output).toMatch(/starting worker-2 .*\.\.\./);
    expect(output).toMatch(/worker-2 \(pid \d+\) polls task queue \S+ \(ready after [\d.]+ s\)/);
    expect(output).toMatch(/approval recorded by worker-2 after [\d.]+ s; Write runs now/);
  });

  it('says the raw secret is still in the Temporal history: redaction protects the model only', () => {
    expect(run.output).toMatch(
      /raw secret in history: yes \(executeTool result, dispatchHook input\): a PostToolUse redaction protects the model only/,
    );
  });

  it('says where to read about encrypting the history, on the line after', () => {
    const lines = run.output.split('\n');
    const at = lines.findIndex((line) => line.includes('raw secret in history: yes'));
    expect(lines[at + 1]).toContain('encrypted history:');
    expect(lines[at + 1]).toContain('docs/security.md');
  });

  it('removes its temporary workspace', () => {
    expect(existsSync(workspaceOf(run.output))).toBe(false);
  });

  it('ends with a CLI command that inspects the session it ran, and that command works', () => {
    const lines = run.output.trimEnd().split('\n');
    const command = lines.at(-1)!.trim();
    const sessionId = /session (\S+) started/.exec(run.output)![1]!;
    expect(command).toBe(
      `npx tsx src/cli/main.ts inspect ${sessionId} --address ${temporalAddress()}`,
    );
    const [, ...cliArgs] = command.replace(/^npx tsx /, '').split(' ');
    const inspect = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...cliArgs],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(inspect.status, inspect.stderr).toBe(0);
    expect(inspect.stdout).toContain(`session ${sessionId}`);
    expect(inspect.stdout).toMatch(/PreToolUse\s+Bash.*abort/);
    expect(inspect.stdout).toMatch(/SessionEnd marker\s+reason=other/);
  });
});

describe('the demo with --keep', () => {
  const kept: string[] = [];
  afterAll(() => {
    for (const dir of kept) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the workspace, with the stamped NOTES.md, and says where it is', async () => {
    const { code, output } = await runDemo('--keep');
    const line = /Kept \(--keep\): (.*)/.exec(output);
    if (line) kept.push(...line[1]!.split(', '));
    expect(code, output).toBe(0);
    const workspace = workspaceOf(output);
    expect(kept).toContain(workspace);
    expect(existsSync(join(workspace, 'NOTES.md'))).toBe(true);
  }, 120_000);
});

describe('the demo command line', () => {
  it('answers --help with its usage, exit 0, no stack trace', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', main, '--help'], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: npm run demo/);
    for (const flag of ['--interactive', '--ui', '--keep', '--record-fixture FILE', '--help']) {
      expect(run.stdout).toContain(flag);
    }
    expect(run.stdout + run.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses an unknown option by name, with the usage, exit 2', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', main, '--bogus'], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^demo: Unknown option '--bogus'/);
    expect(run.stderr).toContain('usage: npm run demo');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
