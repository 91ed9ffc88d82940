/**
 * Sessions on a real multi-process Temporal cluster (PostgreSQL; frontend, history, matching
 * and worker services as processes: scripts/cluster.ts, started by the global setup), with
 * three worker processes on one task queue. The cluster's services are killed with SIGKILL
 * and restarted under running sessions; side effects are counted from what the callbacks
 * wrote (test/fixtures/crash-agent.ts), across processes.
 *
 * The frontend requires mTLS: the worker processes and the clients connect with the
 * cluster's CA and client certificate (`advanced.temporal.tls`, test/cluster/cluster-env.ts).
 */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient, type Session } from '../../src/index.js';
import { crashAgentOptions, type CrashAgentEnv } from '../fixtures/crash-agent.js';
import { pendingAsk, waitFor } from '../helpers/common.js';
import { clusterDir, clusterTlsOptions } from './cluster-env.js';
import {
  count,
  crashEnv as plainCrashEnv,
  effects,
  killAll,
  openGate,
  startWorkerProcess,
  waitForEffect,
  type WorkerProcess,
} from '../helpers/processes.js';
import {
  killService,
  readClusterState,
  startService,
  type ClusterService,
} from '../../scripts/cluster.js';

const clients: AgentClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await killAll();
});

/** A crash env whose workers and clients connect with the cluster's client certificate. */
function crashEnv(overrides: Partial<CrashAgentEnv> = {}): CrashAgentEnv {
  return plainCrashEnv({ tls: clusterTlsOptions(), ...overrides });
}

/** SIGKILL one service of the cluster and start it again on the same ports. */
async function crashAndRestart(service: ClusterService): Promise<void> {
  const before = readClusterState(clusterDir()).pids[service];
  await killService(clusterDir(), service, 'SIGKILL');
  const after = await startService(clusterDir(), service);
  expect(after).not.toBe(before);
}

async function clientFor(env: CrashAgentEnv): Promise<AgentClient> {
  const client = await createAgentClient(crashAgentOptions(env));
  clients.push(client);
  return client;
}

/** Three worker processes on the env's task queue. */
async function threeWorkers(env: CrashAgentEnv): Promise<WorkerProcess[]> {
  return Promise.all(['A', 'B', 'C'].map((label) => startWorkerProcess(env, label)));
}

function openNamedGate(env: CrashAgentEnv, name: string): void {
  writeFileSync(`${env.gateFile}.${name}`, 'open');
}

/** Labels (A, B, C...) of the workers whose callbacks wrote lines containing `fragment`. */
function workersThatRan(env: CrashAgentEnv, fragment: string): Set<string> {
  return new Set(
    effects(env)
      .filter((line) => line.includes(fragment))
      .map((line) => line.split(' ')[0]!),
  );
}

describe.each(['history', 'matching'] as const)('the %s service killed with SIGKILL', (service) => {
  it('mid-session, with three workers: every session finishes, SessionStart and SessionEnd ran once each, no completed dispatch re-ran, a pending approval survived', async () => {
    // The SDK's default heartbeat timeout (5 s): the outage is shorter than it.
    const env = crashEnv({ dispatchHeartbeatTimeoutMs: 5_000 });
    await threeWorkers(env);
    const client = await clientFor(env);
    const sessions = await Promise.all(Array.from({ length: 6 }, () => client.createSession()));
    const replies = await Promise.all(sessions.map((s, i) => s.send(`first ${i}`)));
    expect(replies.map((r) => r.text())).toEqual(sessions.map((_, i) => `echo:first ${i}`));

    // One session waits for a person; the others have a hook in flight on some worker.
    const asking = sessions[0]!;
    const approval = asking.send('record:kept');
    const requestId = await pendingAsk(asking, 30_000, 'the permission request');
    const inFlight = sessions.slice(1).map((s, i) => s.send(`gate:${service} ${i}`));
    for (let i = 0; i < inFlight.length; i++) {
      await waitForEffect(env, `UserPromptSubmit:start gate:${service} ${i}`, 30_000);
    }

    await crashAndRestart(service);
    openNamedGate(env, service);

    const settled = await Promise.all(inFlight);
    expect(settled.map((r) => r.text())).toEqual(
      inFlight.map((_, i) => `echo:gate:${service} ${i}`),
    );
    // The ask outlived the crash: approving it now runs the tool once, with the approved input.
    expect((await asking.pendingPermissions()).map((p) => p.requestId)).toEqual([requestId]);
    await asking.approve(requestId, { updatedInput: { value: 'approved' } });
    expect((await approval).text()).toBe('done:success');
    // New prompts after the restart reach the workers (matching dispatches their tasks).
    const after = await Promise.all(sessions.map((s, i) => s.send(`after ${i}`)));
    expect(after.map((r) => r.text())).toEqual(sessions.map((_, i) => `echo:after ${i}`));
    await Promise.all(sessions.map((s) => s.close()));

    expect(count(env, 'SessionStart')).toBe(sessions.length);
    expect(count(env, 'SessionEnd:end')).toBe(sessions.length);
    expect(count(env, 'Record')).toBe(1);
    expect(count(env, 'Record approved')).toBe(1);
    for (let i = 0; i < sessions.length; i++) {
      expect(count(env, `UserPromptSubmit:start first ${i}`), `first ${i}`).toBe(1);
      expect(count(env, `UserPromptSubmit:start after ${i}`), `after ${i}`).toBe(1);
    }
    for (let i = 0; i < inFlight.length; i++) {
      expect(count(env, `UserPromptSubmit:start gate:${service} ${i}`)).toBe(1);
      expect(count(env, `UserPromptSubmit:end gate:${service} ${i}`)).toBe(1);
    }
    // The three workers shared the work.
    expect(workersThatRan(env, 'UserPromptSubmit:start').size).toBeGreaterThan(1);
  });
});

describe('the frontend service restarted', () => {
  it('under a live session: the worker and the client reconnect, the session goes on, SessionStart and SessionEnd ran once', async () => {
    const env = crashEnv({ dispatchHeartbeatTimeoutMs: 5_000 });
    await threeWorkers(env);
    const client = await clientFor(env);
    const session = await client.createSession();
    expect((await session.send('before')).text()).toBe('echo:before');
    await killService(clusterDir(), 'frontend', 'SIGTERM');
    await startService(clusterDir(), 'frontend');
    expect((await session.send('after')).text()).toBe('echo:after');
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: true });
    expect(count(env, 'SessionStart')).toBe(1);
    expect(count(env, 'UserPromptSubmit:start before')).toBe(1);
    expect(count(env, 'UserPromptSubmit:start after')).toBe(1);
    expect(count(env, 'SessionEnd:end')).toBe(1);
  });
});

describe('a rolling restart of the workers', () => {
  it('with hooks in flight on each stopping worker: it finishes them within the shutdown grace (>= the hook budget) and exits; none is lost or re-run', async () => {
    // The grace time covers the longest hook budget, so a stop never cuts a hook short.
    const env = crashEnv({
      hookTimeoutMs: 20_000,
      shutdownGraceTimeMs: 20_000,
      dispatchHeartbeatTimeoutMs: 5_000,
    });
    const workers = await threeWorkers(env);
    const client = await clientFor(env);
    const sessions: Session[] = [];
    for (const [index, old] of workers.entries()) {
      const label = ['A', 'B', 'C'][index]!;
      const round = `r${index}`;
      // Prompts (on sessions of their own) until the worker to stop holds one in flight;
      // `<n>` keeps prompt 1's lines apart from prompt 10's.
      const sends: Array<Promise<{ text(): string }>> = [];
      while (
        count(env, `${label} UserPromptSubmit:start gate:${round}`) === 0 ||
        sends.length < 3
      ) {
        expect(sends.length, `prompts sent before ${label} held one`).toBeLessThan(30);
        const n = sends.length;
        sessions[n] ??= await client.createSession();
        sends.push(sessions[n]!.send(`gate:${round} <${n}>`));
        await waitForEffect(env, `UserPromptSubmit:start gate:${round} <${n}>`, 30_000);
      }
      const held = count(env, `${label} UserPromptSubmit:start gate:${round}`);
      await startWorkerProcess(env, `${label}${index}`);
      const exited = new Promise<number | null>((resolve) => old.child.once('exit', resolve));
      const stopping = new Promise<void>((resolve) =>
        old.child.stdout?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('stopping')) resolve();
        }),
      );
      old.child.kill('SIGTERM');
      await stopping;
      // The worker is draining, its hooks still running: let them finish now.
      openNamedGate(env, round);
      expect(await exited).toBe(0);
      const replies = await Promise.all(sends);
      expect(replies.map((r) => r.text())).toEqual(
        sends.map((_, n) => `echo:gate:${round} <${n}>`),
      );
      expect(count(env, `${label} UserPromptSubmit:end gate:${round}`)).toBe(held);
      for (let n = 0; n < sends.length; n++) {
        expect(count(env, `UserPromptSubmit:start gate:${round} <${n}>`)).toBe(1);
        expect(count(env, `UserPromptSubmit:end gate:${round} <${n}>`)).toBe(1);
      }
    }
    await Promise.all(sessions.map((s) => s.close()));
    expect(count(env, 'SessionStart')).toBe(sessions.length);
    expect(count(env, 'SessionEnd:end')).toBe(sessions.length);
  });
});

describe('fail-closed on the cluster', () => {
  it('holds across three workers: none runs a dispatch while the callback held by one cleans up; once it settles, the next runs', async () => {
    const env = crashEnv({ hookTimeoutMs: 300 });
    // A alone polls, so A runs the callback that gets stuck.
    await startWorkerProcess(env, 'A');
    const client = await clientFor(env);
    const session = await client.createSession();
    expect(await session.send('block a while').catch((e: unknown) => e)).toMatchObject({
      code: 'HOOK_TIMEOUT',
    });
    expect(count(env, 'A UserPromptSubmit:start block a while')).toBe(1);
    await startWorkerProcess(env, 'B');
    await startWorkerProcess(env, 'C');
    for (let i = 0; i < 6; i++) {
      expect(await session.send(`refused ${i}`).catch((e: unknown) => e)).toMatchObject({
        code: 'HOOK_CLEANUP_PENDING',
      });
    }
    expect(count(env, 'UserPromptSubmit:start refused')).toBe(0);
    openGate(env);
    await waitFor(
      async () => (await session.describe()).pendingCleanups === 0,
      20_000,
      'the callback to settle',
    );
    expect(count(env, 'A UserPromptSubmit:end block a while')).toBe(1);
    expect((await session.send('open')).text()).toBe('echo:open');
    expect(count(env, 'UserPromptSubmit:start open')).toBe(1);
    await session.close();
  });
});
