/**
 * The examples run as users would run them: the testing examples under node --test and under
 * jest, and the two-process example as two real processes against the test server.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

describe('examples/testing', () => {
  it('node-test.test.ts passes under node --test', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--test', 'examples/testing/node-test.test.ts'],
      { cwd: repo, encoding: 'utf8' },
    );
    expect(run.stdout).toMatch(/# pass 1/);
    expect(run.stdout).toMatch(/# fail 0/);
    expect(run.status).toBe(0);
  }, 60_000);

  it('hooks.jest.test.ts passes under jest, with the matchers', () => {
    const run = spawnSync(process.execPath, ['node_modules/jest/bin/jest.js', '--ci'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules' },
    });
    const output = run.stdout + run.stderr;
    expect(output).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(run.status).toBe(0);
  }, 120_000);
});

describe('examples/two-process', () => {
  const children = new Set<ChildProcess>();
  afterEach(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
    children.clear();
  });

  /** Start `examples/two-process/<file>` with `env`; its output accumulates in `output()`. */
  function start(file: string, env: NodeJS.ProcessEnv, args: string[] = []) {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', `examples/two-process/${file}`, ...args],
      { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { child, exit, stdout: () => out, stderr: () => err };
  }

  it('the worker process runs the hooks and the tool; the client process drives the session and runs none', async () => {
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress(),
      EXAMPLE_TASK_QUEUE: uniqueTaskQueue('two-process'),
    };
    const worker = start('worker.ts', env);
    await waitFor(() => worker.stdout().includes('polling task queue'), 60_000, 'the worker');

    const client = start('client.ts', env);
    expect(await client.exit, client.stdout() + client.stderr()).toBe(0);
    const clientOut = client.stdout();
    const sessionId = /session (\S+) started/.exec(clientOut)?.[1];
    expect(sessionId, clientOut).toBeDefined();
    expect(clientOut).toContain(
      '< [completed] package.json names the package "durable-agent-sdk".',
    );
    expect(clientOut).toContain('tool call: Read success');
    expect(clientOut).toContain('close(): {"closedNow":true,"sessionEndRan":true}');
    expect(clientOut).toContain(
      "what the worker's hooks decided: SessionStart continue, PreToolUse Read continue, SessionEnd continue",
    );
    // The callbacks ran in the worker, once each, and not in the client.
    const workerTag = `[worker ${worker.child.pid}]`;
    await waitFor(() => worker.stdout().includes(`SessionEnd ${sessionId}`), 10_000, 'SessionEnd');
    const hookLines = worker
      .stdout()
      .split('\n')
      .filter((line) => /\] (SessionStart|PreToolUse|SessionEnd) /.test(line));
    expect(hookLines).toEqual([
      `${workerTag} SessionStart ${sessionId}`,
      `${workerTag} PreToolUse Read {"file_path":"package.json"}`,
      `${workerTag} SessionEnd ${sessionId} (other)`,
    ]);
    expect(clientOut).not.toMatch(/\] (SessionStart|PreToolUse|SessionEnd) /);

    // Ctrl-C (SIGINT) stops the worker cleanly.
    worker.child.kill('SIGINT');
    expect(await worker.exit, worker.stderr()).toBe(0);
    expect(worker.stdout()).toContain(`${workerTag} stopped`);
  }, 120_000);

  it('each half refuses to start without TEMPORAL_ADDRESS and says what to set', async () => {
    const env = { ...process.env, TEMPORAL_ADDRESS: '' };
    for (const file of ['worker.ts', 'client.ts']) {
      const run = start(file, env);
      expect(await run.exit, file).toBe(2);
      expect(run.stderr()).toMatch(/^Set TEMPORAL_ADDRESS to /);
    }
  }, 60_000);
});
