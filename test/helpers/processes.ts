/** Real worker and client processes for crash and cross-process tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CrashAgentEnv } from '../fixtures/crash-agent.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from './common.js';
import { tempDir } from './temp-dirs.js';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** A worker process running the crash agent. */
export interface WorkerProcess {
  child: ChildProcess;
  cleanupQueue: string;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
}

const started = new Set<ChildProcess>();

/** Kill every process a test started (call in afterEach/afterAll). */
export async function killAll(): Promise<void> {
  await Promise.all([...started].map((child) => killProcess(child)));
}

/** SIGKILL `child` (a no-op once it exited), and wait for the exit. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  started.delete(child);
}

/** A fresh environment: its own task queue, effects file and gate file (removed after the file's tests). */
export function crashEnv(overrides: Partial<CrashAgentEnv> = {}): CrashAgentEnv {
  const dir = tempDir('crash');
  const effectsFile = join(dir, 'effects.log');
  writeFileSync(effectsFile, '');
  return {
    address: temporalAddress(),
    taskQueue: uniqueTaskQueue('crash'),
    effectsFile,
    gateFile: join(dir, 'gate'),
    label: 'test',
    ...overrides,
  };
}

/**
 * Start a worker process and wait until it polls.
 * @param extraEnv environment variables the process gets besides this one's (e.g. TEMPORAL_TLS_*).
 */
export async function startWorkerProcess(
  env: CrashAgentEnv,
  label: string,
  extraEnv: Record<string, string> = {},
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(fixtures, 'worker-process.ts')], {
    env: { ...process.env, ...extraEnv, CRASH_AGENT_ENV: JSON.stringify({ ...env, label }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const cleanupQueue = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ready (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) =>
      reject(new Error(`worker ${label} exited (${code}) before ready:\n${output}`)),
    );
  });
  return { child, cleanupQueue, kill: () => killProcess(child) };
}

/** Run one client command in another process; returns its JSON line. */
export async function runClientProcess(
  env: CrashAgentEnv,
  args: string[],
): Promise<{ ok: boolean; result?: unknown; code?: string; message?: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(fixtures, 'client-process.ts'), ...args],
    {
      env: { ...process.env, CRASH_AGENT_ENV: JSON.stringify({ ...env, label: 'client' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  started.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  started.delete(child);
  const line = stdout.trim().split('\n').at(-1);
  if (!line) throw new Error(`client process printed nothing (exit ${code}):\n${stderr}`);
  return JSON.parse(line) as { ok: boolean; result?: unknown; code?: string; message?: string };
}

/** The side-effect lines recorded so far. */
export function effects(env: CrashAgentEnv): string[] {
  return readFileSync(env.effectsFile, 'utf8').split('\n').filter(Boolean);
}

/** Lines that mention `fragment`. */
export function count(env: CrashAgentEnv, fragment: string): number {
  return effects(env).filter((line) => line.includes(fragment)).length;
}

/** Wait until a side effect shows up. */
export async function waitForEffect(
  env: CrashAgentEnv,
  fragment: string,
  timeoutMs = 15_000,
): Promise<void> {
  await waitFor(() => count(env, fragment) > 0, timeoutMs, `side effect '${fragment}'`);
}

/** Let blocked callbacks go. */
export function openGate(env: CrashAgentEnv): void {
  writeFileSync(env.gateFile, 'open');
}

/**
 * Start `node --import tsx <script>` with `env` as JSON in the variable `variable`, and wait
 * until it prints `ready` (rejects with its output when it exits first). Killed by
 * {@link killAll}.
 */
export async function startReadyProcess(
  script: string,
  variable: string,
  env: object,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, [variable]: JSON.stringify(env) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready')) resolve();
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`process exited (${code}):\n${output}`)));
  });
  return child;
}
