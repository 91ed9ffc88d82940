/**
 * The refusal of a task of another definition (fail closed): before an activity of a
 * session runs, the worker compares the version and fingerprint the session started with
 * (carried in every activity input) with the definitions it runs, and refuses a task it
 * does not run the definition of. It never runs its own callbacks, model, tools or
 * permission function instead. Checked here, on every worker, with or without Temporal's
 * Worker Deployments.
 *
 * The refusal is an `ApplicationFailure` of type `WorkerVersionMismatch`, non-retryable for
 * Temporal (a retry of the same activity could land on this same worker again); the workflow
 * schedules the task again, without eager dispatch, until a worker of its version takes it
 * or the task's budget is spent (`workflows/session/version-refusal.ts`).
 *
 * @module
 */
import { ApplicationFailure, type ActivityFunction } from '@temporalio/common';
import { VERSION_REFUSAL_TYPE, type SessionIdentity } from '../src/common/identity.js';
import type { AgentRegistry } from '../src/definition/registry.js';

/** What a checked activity input carries. */
interface Identified extends Partial<SessionIdentity> {
  agentName?: string;
  sessionId?: string;
}

/**
 * Throw the refusal when this worker does not run the definition `input` was started with.
 * @throws ApplicationFailure of type `WorkerVersionMismatch`, its first detail the `VersionRefusal`.
 */
function checkVersion(registry: AgentRegistry, input: unknown): void {
  const identified = (input ?? {}) as Identified;
  if (typeof identified.agentName !== 'string') return;
  const refusal = registry.refusal(identified.agentName, String(identified.sessionId ?? ''), {
    ...(identified.version !== undefined ? { version: identified.version } : {}),
    ...(identified.fingerprint !== undefined ? { fingerprint: identified.fingerprint } : {}),
  });
  if (!refusal) return;
  // Logged once, by the worker's own "Activity failed" WARN line, which carries the message.
  throw ApplicationFailure.create({
    type: VERSION_REFUSAL_TYPE,
    message: refusal.message,
    nonRetryable: true,
    details: [refusal],
  });
}

/** `activities` with {@link checkVersion} before each one named in `checked`. */
export function guardVersions<T extends Record<string, ActivityFunction>>(
  registry: AgentRegistry,
  activities: T,
  checked: readonly (keyof T)[],
): T {
  const guarded: Record<string, ActivityFunction> = { ...activities };
  for (const name of checked) {
    const activity = activities[name]!;
    guarded[name as string] = async (...args: unknown[]) => {
      checkVersion(registry, args[0]);
      return activity(...args);
    };
  }
  return guarded as T;
}
