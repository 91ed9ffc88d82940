/**
 * The `describeDefinition` activity: a session moving to another version
 * (`workflows/handlers/upgrade.ts`) asks a worker of that version which definition it runs,
 * and records that worker's fingerprint and manifest as its own from then on. A worker that
 * does not run the version refuses, as every other task of another version is refused
 * (`version-guard.ts`), so the session asks again until a worker of that version answers.
 *
 * @module
 */
import { ApplicationFailure } from '@temporalio/common';
import { VERSION_REFUSAL_TYPE, type VersionRefusal } from '../src/common/identity.js';
import type { DefinitionIdentity, DescribeDefinitionInput } from '../src/common/activity-io.js';
import type { AgentRegistry } from '../src/definition/registry.js';

/** Build `describeDefinition` on `registry`. */
export function createDefinitionActivities(deps: { registry: AgentRegistry }) {
  return {
    /**
     * The identity of the definition this worker runs as `input.version` of `input.agentName`.
     * @throws ApplicationFailure of type `WorkerVersionMismatch` when it runs no such version.
     */
    async describeDefinition(input: DescribeDefinitionInput): Promise<DefinitionIdentity> {
      const versions = deps.registry.versionsOf(input.agentName);
      const agent = versions.get(input.version);
      if (agent) {
        return { version: agent.version, fingerprint: agent.fingerprint, manifest: agent.manifest };
      }
      const workerVersions = [...versions.keys()];
      const refusal: VersionRefusal = {
        code: 'WORKER_VERSION_MISMATCH',
        message:
          `Refused: session '${input.sessionId}' moves to agent '${input.agentName}' version ` +
          `'${input.version}'; this worker runs version ${workerVersions.map((v) => `'${v}'`).join(', ') || 'none of it'}.`,
        agentName: input.agentName,
        sessionId: input.sessionId,
        sessionVersion: input.version,
        sessionFingerprint: 'unknown',
        workerVersions,
      };
      throw ApplicationFailure.create({
        type: VERSION_REFUSAL_TYPE,
        message: refusal.message,
        nonRetryable: true,
        details: [refusal],
      });
    },
  };
}
