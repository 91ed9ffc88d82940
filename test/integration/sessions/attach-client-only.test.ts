/**
 * `createSession({ sessionId })` of an open session from a client whose definition differs
 * from the workers' (a client-only process with no hooks, as an operator tool is): the
 * session keeps the version it started with, so attaching checks and pins nothing. Real
 * processes: a worker process of the real definition, and client processes of either
 * definition (`test/fixtures/attach-process.ts`), killed with SIGKILL where it hurts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { crashAgentOptions, type CrashAgentEnv } from '../../fixtures/crash-agent.js';
import {
  count,
  crashEnv,
  killAll,
  openGate,
  startWorkerProcess,
  waitForEffect,
} from '../../helpers/processes.js';
import { waitFor } from '../../helpers/common.js';

const fixture = fileURLToPath(new URL('../../fixtures/attach-process.ts', import.meta.url));

/** One JSON line of the attach process. */
interface StepLine {
  step: string;
  ok: boolean;
  result?: unknown;
  name?: string;
  code?: string;
  message?: string;
}

/** A client process of `attach-process.ts`. */
interface AttachProcess {
  /** The lines printed so far. */
  lines(): StepLine[];
  /** Wait until it printed the line of `step`, and return it. */
  line(step: string, timeoutMs?: number): Promise<StepLine>;
  /** Wait for its exit; resolves with every line it printed. */
  exited(): Promise<StepLine[]>;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
}

const children = new Set<ChildProcess>();
const clients: AgentClient[] = [];
afterEach(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.clear();
  await killAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function attachProcess(
  env: CrashAgentEnv,
  definition: 'client-only' | 'real',
  sessionId: string,
  steps: string[],
): AttachProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, sessionId, ...steps], {
    env: {
      ...process.env,
      CRASH_AGENT_ENV: JSON.stringify({ ...env, label: definition }),
      ATTACH_DEFINITION: definition,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as StepLine);
  return {
    lines,
    async line(step, timeoutMs = 90_000) {
      await waitFor(
        () => {
          if (lines().some((l) => l.step === step)) return true;
          if (child.exitCode !== null) {
            throw new Error(`client exited before '${step}':\n${stdout}\n${stderr}`);
          }
          return false;
        },
        timeoutMs,
        `'${step}' from the ${definition} client`,
      );
      return lines().find((l) => l.step === step)!;
    },
    async exited() {
      await exit;
      return lines();
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    },
  };
}

/** A client of the real definition in this process. */
async function realClient(env: CrashAgentEnv): Promise<AgentClient> {
  const client = await createAgentClient(crashAgentOptions(env));
  clients.push(client);
  return client;
}

describe('a client-only definition attaching with createSession({ sessionId })', () => {
  it('sends and closes an open session from other processes; SessionEnd runs once', async () => {
    const env = crashEnv();
    await startWorkerProcess(env, 'W');
    const session = await (await realClient(env)).createSession();
    expect((await session.send('one')).text()).toBe('echo:one');

    const sender = attachProcess(env, 'client-only', session.id, ['send:two']);
    expect(await sender.exited()).toEqual([
      { step: 'attach', ok: true },
      { step: 'send:two', ok: true, result: 'echo:two' },
    ]);
    const closer = attachProcess(env, 'client-only', session.id, ['close']);
    const [attached, closed] = await closer.exited();
    expect(attached).toEqual({ step: 'attach', ok: true });
    expect(closed).toMatchObject({ step: 'close', ok: true });

    expect(count(env, 'W SessionStart ')).toBe(1);
    expect(count(env, 'UserPromptSubmit:end one')).toBe(1);
    expect(count(env, 'UserPromptSubmit:end two')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
    // A closed session stays closed for it, as for any client.
    const again = attachProcess(env, 'client-only', session.id, ['send:three']);
    expect(await again.exited()).toEqual([
      expect.objectContaining({ step: 'attach', ok: false, code: 'SESSION_CLOSED' }),
    ]);
  }, 240_000);

  it('re-attaches to a session whose starting client was killed, once SessionStart ran', async () => {
    const env = crashEnv({ blockSessionStart: true });
    await startWorkerProcess(env, 'W');
    const sessionId = `attach-${randomUUID()}`;
    const starter = attachProcess(env, 'real', sessionId, ['send:first']);
    await waitForEffect(env, `SessionStart:waiting ${sessionId}`, 90_000);
    await starter.kill();
    expect(starter.lines()).toEqual([]);

    const attacher = attachProcess(env, 'client-only', sessionId, ['send:after', 'close']);
    openGate(env);
    const [attached, sent, closed] = await attacher.exited();
    expect(attached).toEqual({ step: 'attach', ok: true });
    expect(sent).toEqual({ step: 'send:after', ok: true, result: 'echo:after' });
    expect(closed).toMatchObject({ step: 'close', ok: true });
    expect(count(env, `W SessionStart ${sessionId}`)).toBe(1);
    expect(count(env, 'UserPromptSubmit:start first')).toBe(0);
    expect(count(env, 'UserPromptSubmit:end after')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
  }, 240_000);

  it('closes a session whose client-only sender was killed mid-send; the prompt ran once', async () => {
    const env = crashEnv();
    await startWorkerProcess(env, 'W');
    const session = await (await realClient(env)).createSession();
    const sender = attachProcess(env, 'client-only', session.id, ['send:block-x']);
    expect(await sender.line('attach')).toEqual({ step: 'attach', ok: true });
    await waitForEffect(env, 'UserPromptSubmit:start block-x', 90_000);
    await sender.kill();
    expect(sender.lines()).toEqual([{ step: 'attach', ok: true }]);

    const closer = attachProcess(env, 'client-only', session.id, ['close']);
    expect(await closer.line('attach')).toEqual({ step: 'attach', ok: true });
    openGate(env);
    const [, closed] = await closer.exited();
    expect(closed).toMatchObject({ step: 'close', ok: true });
    await waitForEffect(env, 'UserPromptSubmit:end block-x');
    expect(count(env, 'UserPromptSubmit:start block-x')).toBe(1);
    expect(count(env, 'UserPromptSubmit:end block-x')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
    expect((await session.describe()).status).toBe('closed');
  }, 240_000);

  it('still refuses to start a new session pinned to its own version, which no worker runs', async () => {
    const env = crashEnv();
    await startWorkerProcess(env, 'W');
    // The deployment lists the worker's version once it polls.
    await (await realClient(env)).createSession().then((s) => s.close());
    const starter = attachProcess(env, 'client-only', `attach-${randomUUID()}`, ['send:x']);
    const [line] = await starter.exited();
    expect(line).toMatchObject({ step: 'attach', ok: false, code: 'CONFIG_INVALID' });
    expect(line!.message).toContain('is not a version of Worker Deployment');
  }, 240_000);
});
