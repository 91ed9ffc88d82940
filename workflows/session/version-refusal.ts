/**
 * A task refused by a worker of another definition (`activities/version-guard.ts`), seen
 * from the workflow: schedule it again, without eager dispatch (so Temporal's matching, not
 * the worker that ran this workflow task, picks the worker), with a short backoff, until a
 * worker of the session's version takes it or the task's budget is spent; then fail with the
 * refusal's code (`WORKER_VERSION_MISMATCH` or `VERSION_FINGERPRINT_MISMATCH`), naming both
 * versions. A refusal never fails the session while a worker of its version may exist, and
 * the refused task never ran anything.
 *
 * @module
 */
import { ActivityFailure, ApplicationFailure, sleep } from '@temporalio/workflow';
import type { SerializedError } from '../../src/common/errors.js';
import type { HookEvent } from '../../src/common/hook-events.js';
import {
  VERSION_REFUSAL_TYPE,
  manifestDifferences,
  type SessionIdentity,
  type VersionRefusal,
} from '../../src/common/identity.js';
import type { SessionLineage, SessionWorkflowInput } from '../../src/common/workflow-io.js';
import { toFailure } from './failures.js';

/**
 * A task refused because a worker claims the session's version with another definition (a
 * fingerprint mismatch) is retried for at most {@link FINGERPRINT_BUDGET_MS}, not the task's
 * whole budget: that is a deploy giving two definitions one version, which retrying rarely
 * mends (a worker of the right definition, if any, takes the task within seconds), and a
 * hook's 10 minutes of retries left the caller waiting and the history hundreds of retries
 * longer.
 */
const FINGERPRINT_BUDGET_MS = 30_000;

/** First wait before a refused task is scheduled again, ms; it doubles up to {@link MAX_WAIT_MS}. */
const FIRST_WAIT_MS = 50;
const MAX_WAIT_MS = 2_000;

/** Codes a task refused everywhere fails with. */
const VERSION_REFUSAL_CODES: readonly string[] = [
  'WORKER_VERSION_MISMATCH',
  'VERSION_FINGERPRINT_MISMATCH',
];

/**
 * The session's version and fingerprint, for an activity input (none for old sessions), and
 * in a sub-agent its lineage (the worker picks the sub-agent's hooks, tools and model by it).
 */
export function identityFields(
  input: SessionWorkflowInput,
): Partial<SessionIdentity> & { lineage?: SessionLineage } {
  const identity =
    input.version !== undefined && input.fingerprint !== undefined
      ? { version: input.version, fingerprint: input.fingerprint }
      : {};
  return input.lineage ? { ...identity, lineage: input.lineage } : identity;
}

/** The refusal carried by an activity's failure, if it is one. */
export function versionRefusalOf(error: unknown): VersionRefusal | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof ApplicationFailure) || cause.type !== VERSION_REFUSAL_TYPE) {
    return undefined;
  }
  const detail = cause.details?.[0] as VersionRefusal | undefined;
  return detail && typeof detail.code === 'string' ? detail : undefined;
}

/** Whether `error` is the failure {@link withRefusalRetries} raised once its budget was spent. */
export function isRefusedEverywhere(error: unknown): error is ApplicationFailure {
  if (!(error instanceof ApplicationFailure)) return false;
  const code = (error.details?.[0] as SerializedError | undefined)?.code;
  return code !== undefined && VERSION_REFUSAL_CODES.includes(code);
}

/**
 * Run `attempt` (`eager`: whether the activity may be dispatched eagerly, true the first time
 * only) until it is not refused; after `budgetMs` of refusals, fail.
 * @throws ApplicationFailure (non-retryable) with the refusal's code, naming both versions,
 *   and for a fingerprint mismatch what differs; `attempt`'s own failures as they are.
 */
export function withRefusalRetries<T>(
  input: SessionWorkflowInput,
  what: { task: string; event?: HookEvent },
  budgetMs: number,
  attempt: (eager: boolean) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  // The first attempt is not wrapped in an async function (which would cost every activity
  // of a session two promises, where `.catch` costs one).
  return attempt(true).catch((error: unknown) =>
    retryRefused(input, what, budgetMs, attempt, started, error),
  );
}

/**
 * What {@link withRefusalRetries} does once its first try failed with `error`, for a caller
 * that awaits the first try itself (`attempt(true)`, started at `started`): wait, then try
 * again until a try is not refused.
 * @throws `error` itself when it is not a refusal; as {@link withRefusalRetries} otherwise.
 */
export function retryRefused<T>(
  input: SessionWorkflowInput,
  what: { task: string; event?: HookEvent },
  budgetMs: number,
  attempt: (eager: boolean) => Promise<T>,
  started: number,
  error: unknown,
): Promise<T> {
  const retries = refusalRetries(input, what, budgetMs, attempt, started);
  return retries.afterRefusal(error, 0).then(() => retries.retried());
}

/** The waits and tries after refusals of a task first tried at `started`. */
function refusalRetries<T>(
  input: SessionWorkflowInput,
  what: { task: string; event?: HookEvent },
  budgetMs: number,
  attempt: (eager: boolean) => Promise<T>,
  started: number,
) {
  /** Wait after the refusal `error` of try `tries`; rethrow anything else, or a spent budget. */
  async function afterRefusal(error: unknown, tries: number): Promise<void> {
    const refusal = versionRefusalOf(error);
    if (!refusal) throw error;
    const waited = Date.now() - started;
    const budget =
      refusal.code === 'VERSION_FINGERPRINT_MISMATCH'
        ? Math.min(budgetMs, FINGERPRINT_BUDGET_MS)
        : budgetMs;
    if (waited >= budget) throw refusedEverywhere(input, what, refusal, waited);
    await sleep(Math.max(1, Math.min(FIRST_WAIT_MS * 2 ** tries, MAX_WAIT_MS, budget - waited)));
  }

  /** Try again (never eagerly: matching picks the worker) until a try is not refused. */
  async function retried(): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt(false);
      } catch (error) {
        await afterRefusal(error, tries);
      }
    }
  }

  return { afterRefusal, retried };
}

function refusedEverywhere(
  input: SessionWorkflowInput,
  what: { task: string; event?: HookEvent },
  refusal: VersionRefusal,
  waitedMs: number,
): ApplicationFailure {
  const mine = `agent '${refusal.agentName}' version '${refusal.sessionVersion}' (fingerprint ${refusal.sessionFingerprint})`;
  const theirs = refusal.workerVersions.map((v) => `'${v}'`).join(', ') || 'none';
  let message =
    `No worker of ${mine} took ${what.task} within ${waitedMs} ms: ` +
    `it was refused by a worker of version ${theirs}, and never ran elsewhere.`;
  if (refusal.code === 'VERSION_FINGERPRINT_MISMATCH') {
    const differences =
      input.manifest && refusal.workerManifest
        ? manifestDifferences(input.manifest, refusal.workerManifest)
        : [];
    message +=
      ` That worker claims version '${refusal.sessionVersion}' with another definition ` +
      `(fingerprint ${refusal.workerFingerprint ?? 'unknown'}); what differs (session vs worker): ` +
      `${differences.join('; ') || 'not known'}. Give the changed definition a new \`version\`.`;
  }
  return toFailure({
    name: what.event ? 'HookError' : 'EngineError',
    code: refusal.code,
    message,
    sessionId: refusal.sessionId,
    ...(what.event ? { event: what.event } : {}),
  });
}
