/**
 * A hook test env's teardown: replay every session it created against the current workflow
 * code, then stop its worker, client and server, each step bounded.
 *
 * @module
 */
import type { DataConverter } from '@temporalio/common';
import { messageOf } from '../common/errors.js';
import type { AgentClient } from '../client/client.js';
import { fetchRunHistories, type SessionHistory } from '../history/files.js';
import type { Session } from '../client/session.js';
import type { EnvServer } from './env-server.js';
import { replaySessionHistories } from './replay.js';
import type { RestartableWorker } from './worker-kill.js';

/** What a teardown stops, and the sessions it replays. */
interface TeardownParts {
  sessions: ReadonlyMap<string, Session>;
  client: AgentClient;
  workers: RestartableWorker;
  server: EnvServer;
  /** Upper bound of each step, ms. */
  stepTimeoutMs: number;
  dataConverter: DataConverter;
}

/**
 * Replay the sessions, then stop the client, the worker and the server (even when a
 * replay failed).
 * @throws {Error} listing every step that failed.
 */
export async function teardownEnv(parts: TeardownParts): Promise<void> {
  const { sessions, client, workers, server, stepTimeoutMs, dataConverter } = parts;
  const problems: string[] = [];
  try {
    const histories: SessionHistory[] = [];
    for (const session of sessions.values()) {
      try {
        const runs = await withTimeout(
          fetchRunHistories(client.temporal, session.workflowId),
          stepTimeoutMs,
          `fetching the history of session ${session.id}`,
        );
        for (const history of runs) {
          histories.push({ sessionId: session.id, workflowId: session.workflowId, history });
        }
      } catch (error) {
        problems.push(`session ${session.id}: its history could not be read: ${messageOf(error)}`);
      }
    }
    try {
      await withTimeout(
        replaySessionHistories(histories, { dataConverter }),
        stepTimeoutMs + histories.length * 5_000,
        'replaying the sessions',
      );
    } catch (error) {
      problems.unshift(messageOf(error));
    }
  } finally {
    await withTimeout(client.close(), stepTimeoutMs, 'closing the client').catch((error) =>
      problems.push(messageOf(error)),
    );
    await withTimeout(workers.shutdown(), stepTimeoutMs, 'stopping the worker').catch((error) =>
      problems.push(messageOf(error)),
    );
    await withTimeout(server.stop(), stepTimeoutMs, 'stopping the server').catch((error) =>
      problems.push(messageOf(error)),
    );
  }
  if (problems.length > 0) throw new Error(`HookTestEnv teardown failed:\n${problems.join('\n')}`);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
