import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bash } from '../../../src/tools/builtin/bash.js';
import { runTool } from '../../../src/tools/run-tool.js';
import { isAlive, makeContext, makeSandbox, waitFor, type Sandbox } from './fixtures.js';

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  await box.cleanup();
});

function pidsIn(text: string): number[] {
  return [...text.matchAll(/^pid (\d+)$/gm)].map((m) => Number(m[1]));
}

/** Starts two background sleeps, prints their pids (and writes them to pids.txt), waits. */
const TWO_SLEEPS =
  'sleep 30 & echo "pid $!"; echo "pid $!" >> pids.txt; ' +
  'sleep 30 & echo "pid $!"; echo "pid $!" >> pids.txt; wait';

describe('Bash', () => {
  it('captures stdout and stderr and runs in the first root', async () => {
    const result = await runTool(
      Bash,
      { command: 'echo out; echo err >&2; pwd' },
      makeContext([box.root]),
    );
    expect(result.status).toBe('success');
    expect(result.model).toContain('out\n');
    expect(result.model).toContain('err\n');
    expect(result.model).toContain(`${box.root}\n`);
    expect(result.metadata).toMatchObject({ exitCode: 0, truncated: false });
  });

  it('makes a non-zero exit an error result with the output and the exit code', async () => {
    const result = await runTool(
      Bash,
      { command: 'echo partial; exit 3' },
      makeContext([box.root]),
    );
    expect(result).toMatchObject({
      status: 'error',
      model: 'partial\nexit code 3',
      error: { type: 'NonZeroExit' },
      metadata: { exitCode: 3 },
    });
  });

  it('says (no output) for a silent success', async () => {
    const result = await runTool(Bash, { command: 'true' }, makeContext([box.root]));
    expect(result).toMatchObject({ status: 'success', model: '(no output)' });
  });

  it('keeps output within the cap, drains the rest, and says how many bytes there were', async () => {
    const result = await runTool(
      Bash,
      { command: 'yes abcdefghij | head -c 3000000; echo done >&2' },
      makeContext([box.root], { maxOutputBytes: 4096 }),
    );
    expect(result.status).toBe('success');
    expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(4096);
    expect(result.model).toContain('output truncated: 3000005 bytes total');
    expect(result.model.startsWith('abcdefghij\nabcdefghij\n')).toBe(true);
    expect(result.metadata).toMatchObject({ outputBytes: 3000005, truncated: true, exitCode: 0 });
  });

  it('saves the whole output when it was cut, names its reference in the marker and outputRef', async () => {
    const saved: Buffer[] = [];
    const result = await runTool(
      Bash,
      { command: 'yes abcdefghij | head -c 3000000; echo done >&2' },
      makeContext([box.root], {
        maxOutputBytes: 4096,
        saveFullOutput: async (text) => {
          saved.push(Buffer.from(text));
          return 'sha256:' + 'ab'.repeat(32);
        },
      }),
    );
    expect(saved).toHaveLength(1);
    expect(saved[0]!.length).toBe(3000005);
    expect(saved[0]!.toString().endsWith('done\n')).toBe(true);
    expect(result.outputRef).toBe('sha256:' + 'ab'.repeat(32));
    expect(result.model).toContain(`full output: sha256:${'ab'.repeat(32)}`);
    expect(Buffer.byteLength(result.model)).toBeLessThanOrEqual(4096);
  });

  it('on timeout kills the whole process group and says it timed out', async () => {
    const started = Date.now();
    const result = await runTool(
      Bash,
      { command: TWO_SLEEPS, timeout_ms: 500 },
      makeContext([box.root]),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ status: 'error', error: { type: 'TimeoutError' } });
    expect(result.model).toContain('timed out after 500 ms');
    const pids = pidsIn(result.model);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 'the sleeps to be gone', 3000);
  });

  it("uses the call's own budget when it is shorter than timeout_ms", async () => {
    const result = await runTool(
      Bash,
      { command: 'sleep 30', timeout_ms: 60_000 },
      makeContext([box.root], { timeoutMs: 300 }),
    );
    expect(result).toMatchObject({ status: 'error', error: { type: 'TimeoutError' } });
    expect(result.model).toContain('300 ms');
  });

  it('on abort kills the whole process group and says it was cancelled', async () => {
    const controller = new AbortController();
    const pending = runTool(
      Bash,
      { command: TWO_SLEEPS },
      makeContext([box.root], { signal: controller.signal }),
    );
    const pidFile = join(box.root, 'pids.txt');
    await waitFor(
      () => existsSync(pidFile) && pidsIn(readFileSync(pidFile, 'utf8')).length === 2,
      'both sleeps to start',
    );
    const pids = pidsIn(readFileSync(pidFile, 'utf8'));
    expect(pids.every(isAlive)).toBe(true);
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ status: 'error', error: { type: 'AbortError' } });
    expect(result.model).toContain('cancelled');
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 'the sleeps to be gone', 3000);
  });

  it('escalates to SIGKILL for processes that ignore SIGTERM', async () => {
    const result = await runTool(
      Bash,
      { command: `trap '' TERM; ${TWO_SLEEPS}`, timeout_ms: 300 },
      makeContext([box.root]),
    );
    expect(result).toMatchObject({ status: 'error', error: { type: 'TimeoutError' } });
    const pids = pidsIn(result.model);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 'the sleeps to be gone', 3000);
  });

  it('does not run at all when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runTool(
      Bash,
      { command: 'touch ran.txt' },
      makeContext([box.root], { signal: controller.signal }),
    );
    expect(result).toMatchObject({ status: 'error', error: { type: 'AbortError' } });
    expect(existsSync(join(box.root, 'ran.txt'))).toBe(false);
  });

  it('stops background jobs that keep the output open after bash exits', async () => {
    const started = Date.now();
    const result = await runTool(
      Bash,
      { command: 'sleep 30 & echo "pid $!"' },
      makeContext([box.root]),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.status).toBe('success');
    const pids = pidsIn(result.model);
    expect(pids).toHaveLength(1);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 'the sleep to be gone', 3000);
  });

  it('heartbeats while the command runs', async () => {
    const context = makeContext([box.root]);
    const result = await runTool(Bash, { command: 'sleep 1.3' }, context);
    expect(result.status).toBe('success');
    expect(context.heartbeats.length).toBeGreaterThanOrEqual(1);
  });
});
