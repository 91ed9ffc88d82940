/**
 * `session.upgrade()`, the client side: which version to move to, whether a worker of it
 * serves the session's task queue, and Temporal's re-pin of the session (Worker
 * Deployments), around the workflow's `upgrade` Update (`workflows/handlers/upgrade.ts`).
 *
 * @module
 */
import type { WorkflowClient as Client, WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ConfigError, SessionClosedError } from '../common/errors.js';
import { VERSION_RULE, VERSION_RULE_TEXT, versionOfWorkerIdentity } from '../common/identity.js';
import type { UpgradeAnswer, UpgradeRequest } from '../common/messages.js';

const PINNED = proto.temporal.api.workflow.v1.VersioningOverride.PinnedOverrideBehavior;

/** `TASK_QUEUE_TYPE_ACTIVITY` of Temporal's API: `finish` asks a worker by an activity. */
const ACTIVITY_TASK_QUEUE = 2;

/** Where a session runs, from Temporal's description of its execution. */
interface Placement {
  taskQueue: string;
  /** The agent's name, from the session's memo (undefined if it has none). */
  agentName: string | undefined;
  /** The Worker Deployment version it is pinned to; undefined: unversioned (versioning off). */
  pinned: { deploymentName: string; buildId: string } | undefined;
}

/** @throws {SessionClosedError} when the session's workflow is not running. */
async function placementOf(handle: WorkflowHandle, sessionId: string): Promise<Placement> {
  const description = await handle.describe();
  if (description.status.name !== 'RUNNING') throw new SessionClosedError(sessionId);
  const versioning = description.raw.workflowExecutionInfo?.versioningInfo;
  const version =
    versioning?.versioningOverride?.pinned?.version ?? versioning?.deploymentVersion ?? undefined;
  const agentName = description.memo?.agentName;
  return {
    taskQueue: description.taskQueue,
    agentName: typeof agentName === 'string' ? agentName : undefined,
    pinned:
      version?.deploymentName && version.buildId
        ? { deploymentName: version.deploymentName, buildId: version.buildId }
        : undefined,
  };
}

/** The current version of Worker Deployment `deploymentName`, if it has one. */
async function currentVersionOf(
  client: Client,
  deploymentName: string,
): Promise<string | undefined> {
  const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({
    namespace: client.options.namespace,
    deploymentName,
  });
  const routing = workerDeploymentInfo?.routingConfig;
  return routing?.currentDeploymentVersion?.buildId ?? undefined;
}

/** `'v1', 'v2'`, or `none`. */
function listOf(versions: Iterable<string>): string {
  return [...new Set(versions)].map((v) => `'${v}'`).join(', ') || 'none';
}

/**
 * @throws {ConfigError} when no worker of `buildId` has polled `taskQueue`, naming the
 *   deployment's versions.
 */
async function checkServed(
  client: Client,
  deploymentName: string,
  buildId: string,
  taskQueue: string,
): Promise<void> {
  let queues: string[] = [];
  try {
    const { workerDeploymentVersionInfo } =
      await client.workflowService.describeWorkerDeploymentVersion({
        namespace: client.options.namespace,
        deploymentVersion: { deploymentName, buildId },
      });
    queues = (workerDeploymentVersionInfo?.taskQueueInfos ?? []).map((q) => q.name ?? '');
  } catch {
    // NOT_FOUND: no worker of that version ever polled.
  }
  if (!queues.includes(taskQueue)) {
    const { workerDeploymentInfo } = await client.workflowService
      .describeWorkerDeployment({ namespace: client.options.namespace, deploymentName })
      .catch(() => ({ workerDeploymentInfo: undefined }));
    const known = (workerDeploymentInfo?.versionSummaries ?? []).flatMap((v) =>
      v.deploymentVersion?.buildId ? [v.deploymentVersion.buildId] : [],
    );
    throw new ConfigError(
      `upgrade: no worker of agent '${deploymentName}' version '${buildId}' polls task queue ` +
        `'${taskQueue}'; start workers of that version first (the versions Worker Deployment ` +
        `'${deploymentName}' has: ${listOf(known)})`,
    );
  }
}

/**
 * Without Worker Deployments: whether a worker of `version` polls `taskQueue`, from the
 * pollers' identities (each worker's names its agent and version). When a poller's identity
 * names no version (a worker of an older release), nothing is refused: `finish` then finds
 * out, within its budget.
 * @throws {ConfigError} when every poller names its version and none is `version`, naming the
 *   versions that poll.
 */
async function checkPolled(
  client: Client,
  agentName: string,
  version: string,
  taskQueue: string,
): Promise<void> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: ACTIVITY_TASK_QUEUE,
  });
  const versions = (pollers ?? []).map((p) => versionOfWorkerIdentity(p.identity ?? '', agentName));
  if (versions.includes(version) || versions.includes(undefined)) return;
  throw new ConfigError(
    `upgrade: no worker of agent '${agentName}' version '${version}' polls task queue ` +
      `'${taskQueue}'; the versions that poll it: ${listOf(versions as string[])}. Start ` +
      `workers of '${version}' first, or name one of those`,
  );
}

/**
 * Move a session to `toVersion` (default: its Worker Deployment's current version), at its
 * next turn boundary. `update` runs the workflow's `upgrade` Update.
 * @returns the version it runs now and the recorded move (none when it ran `toVersion` already).
 */
export async function upgradeSession(
  handle: WorkflowHandle,
  sessionId: string,
  toVersion: string | undefined,
  by: string,
  update: (request: UpgradeRequest) => Promise<UpgradeAnswer>,
  holdMs?: number,
): Promise<UpgradeAnswer> {
  checkUpgradeRequest(toVersion, holdMs);
  const client = handle.client;
  const placement = await placementOf(handle, sessionId);
  const pinned = placement.pinned;
  const target = toVersion ?? (await currentTargetOf(client, pinned));
  // Re-pinned already (a move cut short after its re-pin, retried now): only finish is left.
  const repinned = pinned?.buildId === target;
  if (pinned && !repinned) {
    await checkServed(client, pinned.deploymentName, target, placement.taskQueue);
  } else if (!pinned && placement.agentName !== undefined) {
    await checkPolled(client, placement.agentName, target, placement.taskQueue);
  }
  const begun = await update({
    phase: 'begin',
    toVersion: target,
    by,
    ...(holdMs !== undefined ? { holdMs } : {}),
  });
  if (begun.version === target) {
    await update({ phase: 'cancel', toVersion: target, by });
    return { version: target };
  }
  if (pinned && !repinned) {
    try {
      await pinSession(handle, pinned.deploymentName, target, by);
    } catch (error) {
      await update({ phase: 'cancel', toVersion: target, by }).catch(() => undefined);
      throw error;
    }
  }
  try {
    return await update({ phase: 'finish', toVersion: target, by });
  } catch (error) {
    // Too late: the session gave the turn back (holdMs) before the re-pin reached it, and
    // stayed on its version. Pin it back there, or no worker would run its tasks.
    if (pinned && !repinned && isAbandoned(error)) {
      await pinSession(handle, pinned.deploymentName, pinned.buildId, by).catch(() => undefined);
    }
    throw error;
  }
}

/** @throws {ConfigError} for a `toVersion` or `holdMs` out of their rules. */
function checkUpgradeRequest(toVersion: string | undefined, holdMs: number | undefined): void {
  if (toVersion !== undefined && (typeof toVersion !== 'string' || !VERSION_RULE.test(toVersion))) {
    throw new ConfigError(
      `upgrade: toVersion must be ${VERSION_RULE_TEXT}, got '${String(toVersion)}'`,
    );
  }
  if (holdMs !== undefined && (!Number.isInteger(holdMs) || holdMs <= 0)) {
    throw new ConfigError(
      `upgrade: holdMs must be a positive integer of ms, got ${String(holdMs)}`,
    );
  }
}

/**
 * The version a move that names none goes to: the current version of the session's Worker
 * Deployment.
 * @throws {ConfigError} when the session is unversioned, or its deployment has no current
 *   version.
 */
async function currentTargetOf(client: Client, pinned: Placement['pinned']): Promise<string> {
  if (!pinned) {
    throw new ConfigError(
      'upgrade: without Worker Deployments (advanced.temporal.versioning: off) name the version to move to',
    );
  }
  const target = await currentVersionOf(client, pinned.deploymentName);
  if (target === undefined) {
    throw new ConfigError(
      `upgrade: Worker Deployment '${pinned.deploymentName}' has no current version; name the ` +
        `version to move to, or set one (temporal worker deployment set-current-version ` +
        `--deployment-name ${pinned.deploymentName} --build-id <version>)`,
    );
  }
  return target;
}

/** Pin the session's workflow to version `buildId` of Worker Deployment `deploymentName`. */
async function pinSession(
  handle: WorkflowHandle,
  deploymentName: string,
  buildId: string,
  by: string,
): Promise<void> {
  const client = handle.client;
  await client.workflowService.updateWorkflowExecutionOptions({
    namespace: client.options.namespace,
    workflowExecution: { workflowId: handle.workflowId },
    workflowExecutionOptions: {
      versioningOverride: {
        pinned: {
          behavior: PINNED.PINNED_OVERRIDE_BEHAVIOR_PINNED,
          version: { deploymentName, buildId },
        },
      },
    },
    updateMask: { paths: ['versioning_override'] },
    identity: by,
  });
}

/** Whether `error` is the workflow's refusal of a finish whose move it abandoned. */
function isAbandoned(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (/upgrade: the move to '.*' was abandoned/.test(e.message)) return true;
  }
  return false;
}
