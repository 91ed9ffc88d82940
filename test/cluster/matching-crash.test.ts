/**
 * The matching service SIGKILLed, round after round, while hook dispatches and permission
 * checks start on a real multi-process cluster (scripts/cluster.ts, mTLS), with three worker
 * processes that all stay alive. A task matching marked started but never delivered used to
 * end in a heartbeat timeout: a dispatch became `worker_lost`, a permission check a denial.
 * Now such an attempt is retried (its callbacks never began), so a matching crash costs
 * latency, never a decision: every prompt goes through, every callback ran exactly once,
 * every permission function's `ask` reached a person.
 *
 * `MATCHING_CRASH_ROUNDS` sets the rounds (default 4).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createAgentClient, type AgentClient, type Session } from '../../src/index.js';
import { crashAgentOptions, type CrashAgentEnv } from '../fixtures/crash-agent.js';
import { waitFor } from '../helpers/common.js';
import {
  count,
  crashEnv as plainCrashEnv,
  effects,
  killAll,
  startWorkerProcess,
} from '../helpers/processes.js';
import {
  connectToCluster,
  killService,
  readClusterState,
  startService,
} from '../../scripts/cluster.js';
import { clusterDir, clusterTlsOptions } from './cluster-env.js';

const { EventType } = temporal.api.enums.v1;

const ROUNDS = Number(process.env.MATCHING_CRASH_ROUNDS ?? 4);
const SESSIONS = 4;

const clients: AgentClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await killAll();
});

function crashEnv(overrides: Partial<CrashAgentEnv> = {}): CrashAgentEnv {
  return plainCrashEnv({ tls: clusterTlsOptions(), ...overrides });
}

/** Side-effect lines that end with `what` (any worker's): `p1` must not count `p10`'s. */
function ran(env: CrashAgentEnv, what: string): number {
  return effects(env).filter((line) => line.endsWith(` ${what}`)).length;
}

/** One prompt and what it came to: the reply's text, or the error's code. */
interface Sent {
  session: number;
  prompt: string;
  outcome: string;
}

/**
 * Send `prompt`; a `record:` prompt's permission function answers 'ask', and the ask is
 * approved as soon as it is pending (a lost check that became a denial answers `done:error`
 * with nothing to approve).
 */
async function sendOne(session: Session, prompt: string): Promise<string> {
  let settled = false;
  const reply = session.send(prompt).then(
    (r) => r.text(),
    (error: unknown) => `error:${(error as { code?: string }).code ?? String(error)}`,
  );
  void reply.finally(() => (settled = true));
  if (prompt.startsWith('record:')) {
    while (!settled) {
      const pending = await session.pendingPermissions().catch(() => []);
      for (const ask of pending) await session.approve(ask.requestId).catch(() => undefined);
      await sleep(50);
    }
  }
  return reply;
}

/** Attempts after the first of activities in the session's history (retried, lost ones). */
async function retriedAttempts(client: Client, workflowId: string): Promise<string[]> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = new Map<string, string>();
  for (const e of events) {
    const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type && e.eventId) scheduled.set(String(e.eventId), type);
  }
  return events
    .filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1,
    )
    .map((e) => {
      const started = e.activityTaskStartedEventAttributes!;
      return `${scheduled.get(String(started.scheduledEventId)) ?? '?'} attempt ${started.attempt}`;
    });
}

describe('the matching service SIGKILLed while dispatches start', () => {
  it(
    `in ${ROUNDS} rounds, with every worker alive: no dispatch is lost, no permission check denied, every callback ran once`,
    async () => {
      const env = crashEnv({ dispatchHeartbeatTimeoutMs: 2_000 });
      await Promise.all(['A', 'B', 'C'].map((label) => startWorkerProcess(env, label)));
      const client = await createAgentClient(crashAgentOptions(env));
      clients.push(client);
      const sessions = await Promise.all(
        Array.from({ length: SESSIONS }, () => client.createSession()),
      );
      const sent: Sent[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        let stop = false;
        const done = sessions.map(() => 0);
        // Every session sends back to back: half plain prompts (UserPromptSubmit and
        // TaskCompleted dispatches), half Record calls (a permission check too).
        const loops = sessions.map(async (session, i) => {
          for (let n = 0; !stop; n++) {
            const prompt = i % 2 === 0 ? `r${round}-s${i}-p${n}` : `record:r${round}-s${i}-p${n}`;
            sent.push({ session: i, prompt, outcome: await sendOne(session, prompt) });
            done[i] = n + 1;
          }
        });
        await waitFor(() => done.every((n) => n >= 1), 60_000, `round ${round}: sends under way`);
        // Somewhere in the next half second, while prompts start on all sessions.
        await sleep(Math.floor(Math.random() * 500));
        const before = readClusterState(clusterDir()).pids.matching;
        await killService(clusterDir(), 'matching', 'SIGKILL');
        const after = await startService(clusterDir(), 'matching');
        expect(after).not.toBe(before);
        // Every session finishes at least two more sends after the restart.
        const atRestart = [...done];
        await waitFor(
          () => done.every((n, i) => n >= atRestart[i]! + 2),
          90_000,
          `round ${round}: sends after the restart`,
        );
        stop = true;
        await Promise.all(loops);
      }

      // The frontend wants the client certificate: a client of the cluster's own.
      const connection = await connectToCluster(readClusterState(clusterDir()));
      const raw = new Client({ connection });
      const retried = (
        await Promise.all(sessions.map((s) => retriedAttempts(raw, s.workflowId)))
      ).flat();
      await connection.close();
      console.log(
        `[matching-crash] ${ROUNDS} rounds, ${sent.length} sends; retried attempts: ${
          retried.length ? retried.join(', ') : 'none'
        }`,
      );

      // No decision changed: every plain prompt echoed, every Record call ran (approved).
      for (const { prompt, outcome } of sent) {
        expect(outcome, prompt).toBe(
          prompt.startsWith('record:') ? 'done:success' : `echo:${prompt}`,
        );
      }
      // Every callback ran exactly once: none lost, none run twice by a retry.
      for (const { prompt } of sent) {
        expect(ran(env, `UserPromptSubmit:start ${prompt}`), prompt).toBe(1);
        if (prompt.startsWith('record:')) {
          expect(ran(env, `Record ${prompt.slice(7)}`), prompt).toBe(1);
        }
      }
      expect(count(env, 'TaskCompleted')).toBe(sent.length);
      for (const session of sessions) {
        const outcomes = (await session.timeline()).map((e) => e.outcome);
        expect(outcomes.filter((o) => o === 'worker_lost' || o === 'error')).toEqual([]);
      }
      await Promise.all(sessions.map((s) => s.close()));
      expect(count(env, 'SessionStart')).toBe(SESSIONS);
      expect(count(env, 'SessionEnd:end')).toBe(SESSIONS);
    },
    ROUNDS * 150_000 + 120_000,
  );
});
