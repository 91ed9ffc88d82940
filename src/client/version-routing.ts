/**
 * How a client routes the sessions it starts among worker versions: with Worker
 * Deployments, the check that its version is one the deployment serves and the start pinned
 * to it; unversioned, the check that some worker of the task queue takes unpinned sessions.
 *
 * @module
 */
import proto from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { ConfigError } from '../common/errors.js';
import type { ResolvedAgentOptions } from '../definition/options.js';
import type { AgentRegistry } from '../definition/registry.js';

/** How long a session's start waits for a just-started worker of its version to register, ms. */
const PIN_WAIT_MS = 15_000;

/** Whether a listed worker polls as a Worker Deployment version (not unversioned). */
function versionedPoller(poller: proto.temporal.api.taskqueue.v1.IPollerInfo): boolean {
  return (
    poller.deploymentOptions?.workerVersioningMode ===
    proto.temporal.api.enums.v1.WorkerVersioningMode.WORKER_VERSIONING_MODE_VERSIONED
  );
}

/**
 * How long a client waits for its version to be listed by its Worker Deployment before it
 * refuses to start a session, ms: Temporal lists a worker's version about a second after the
 * worker starts polling, so a client created with its worker would otherwise be refused.
 */
const VERSION_LISTING_GRACE_MS = 5_000;

/** Whether `error` is Temporal's refusal to pin a workflow to a version its task queue lacks. */
function versionNotPresent(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (/Pinned version .* is not present in task queue/.test(e.message)) return true;
  }
  return false;
}

/** The version routing of one client, and what it has checked already. */
export interface VersionRouting {
  readonly client: Client;
  readonly options: ResolvedAgentOptions;
  readonly registry: AgentRegistry | undefined;
  /** Whether the client pins its sessions to Worker Deployment versions. */
  readonly deployments: boolean;
  /** The check of {@link versionServed}, once made (dropped when it failed). */
  served: Promise<void> | undefined;
  /** Whether {@link unpinnedServed} has seen an unversioned worker (it asks no more). */
  unpinnedChecked: boolean;
}

/**
 * With Worker Deployments, a client without a worker of its own version in this process
 * whose version is its fingerprint (no explicit `version`) checks once that the deployment
 * knows that version: a client built by another toolchain than its workers can print a
 * callback differently and compute another fingerprint, and a session pinned to a version
 * no worker runs would wait forever. A version the deployment does not list is asked for
 * again for {@link VERSION_LISTING_GRACE_MS} before the refusal (a worker started just now is
 * listed a little later). A deployment not created yet (no worker polled) passes:
 * Temporal then refuses to pin the session until a worker registers ({@link startPinned}).
 */
export function versionServed(routing: VersionRouting): Promise<void> {
  const { client, options, registry } = routing;
  const explicit = options.version !== options.fingerprint;
  if (explicit || registry?.versionsOf(options.name).has(options.version)) {
    return Promise.resolve();
  }
  /** The deployment's versions (build ids), or undefined when there is no such deployment. */
  const listed = async (): Promise<string[] | undefined> => {
    try {
      const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({
        namespace: options.temporal.namespace,
        deploymentName: options.name,
      });
      return (workerDeploymentInfo?.versionSummaries ?? []).map(
        (v) => v.deploymentVersion?.buildId ?? '',
      );
    } catch {
      return undefined;
    }
  };
  routing.served ??= (async () => {
    // A worker that has just started polling is listed about a second later: a version
    // still missing is asked again for VERSION_LISTING_GRACE_MS before it is refused.
    const deadline = Date.now() + VERSION_LISTING_GRACE_MS;
    let versions = await listed();
    while (versions && !versions.includes(options.version) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      versions = await listed();
    }
    if (!versions) return; // no such deployment yet
    if (!versions.includes(options.version)) {
      throw new ConfigError(
        `Agent '${options.name}' version '${options.version}' (this client's fingerprint of its ` +
          `definition) is not a version of Worker Deployment '${options.name}', which has ` +
          `${versions.map((v) => `'${v}'`).join(', ') || 'none'}: a session pinned to it would ` +
          `wait for a worker forever. A client built by another toolchain than its workers can ` +
          `compute another fingerprint; give the definition an explicit \`version\` on both sides.`,
      );
    }
  })();
  routing.served.catch(() => (routing.served = undefined));
  return routing.served;
}

/** The workers Temporal lists on the session task queue (workflow tasks). */
async function workflowPollers({
  client,
  options,
}: VersionRouting): Promise<proto.temporal.api.taskqueue.v1.IPollerInfo[]> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: options.temporal.namespace,
    taskQueue: { name: options.temporal.taskQueue },
    taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return pollers ?? [];
}

/**
 * A client-only agent that does not pin, on a task queue every listed worker of which polls
 * as a Worker Deployment version: Temporal would give the session's tasks to unversioned
 * workers only, so it would wait forever. Refused at once instead. Asked until some worker
 * is listed (one DescribeTaskQueue a session until then), then never again.
 * @throws {ConfigError} naming the deployment versions and the setting.
 */
export async function unpinnedServed(routing: VersionRouting): Promise<void> {
  const { options, registry, deployments } = routing;
  if (deployments || registry || routing.unpinnedChecked) return;
  const pollers = await workflowPollers(routing).catch(() => undefined);
  if (!pollers || pollers.length === 0) return;
  if (pollers.some((p) => !versionedPoller(p))) {
    routing.unpinnedChecked = true;
    return;
  }
  const versions = [
    ...new Set(
      pollers.map((p) => `${p.deploymentOptions?.deploymentName}.${p.deploymentOptions?.buildId}`),
    ),
  ];
  throw new ConfigError(
    `Every worker of task queue '${options.temporal.taskQueue}' polls as a Worker Deployment ` +
      `version (${versions.map((v) => `'${v}'`).join(', ')}), but this client of agent ` +
      `'${options.name}' does not pin its sessions (advanced.temporal.versioning ` +
      `'${options.temporal.versioning}' came to 'off'): Temporal would give a session it ` +
      `starts to unversioned workers only, and it would wait forever. Give workers and ` +
      `clients the same advanced.temporal.versioning (the default 'auto' agrees on one server).`,
  );
}

/**
 * Temporal refuses to pin a new workflow to a version none of whose workers it has seen on
 * the task queue (FAILED_PRECONDITION). A worker that just started (this process's own, or a
 * fleet's in a deploy) registers within moments (about 1.1 s after it started, measured on
 * the shared 1.32 dev server): retry every 200 ms at most (a cheap refusal) for
 * {@link PIN_WAIT_MS}, then say what is missing.
 * @throws {ConfigError} when no worker of this version polls the task queue by then.
 */
export async function startPinned<T>(
  routing: VersionRouting,
  attempt: () => Promise<T>,
): Promise<T> {
  const { options, deployments } = routing;
  const deadline = Date.now() + PIN_WAIT_MS;
  for (let wait = 50; ; wait = Math.min(wait * 2, 200)) {
    try {
      return await attempt();
    } catch (error) {
      if (!deployments || !versionNotPresent(error)) throw error;
      if (Date.now() + wait > deadline) {
        const unversioned = (await workflowPollers(routing).catch(() => [])).filter(
          (p) => !versionedPoller(p),
        ).length;
        throw new ConfigError(
          `No worker of agent '${options.name}' version '${options.version}' polls task queue ` +
            `'${options.temporal.taskQueue}' as a Worker Deployment version (Temporal refuses ` +
            `to pin a session to a version it has seen no worker of; this client routes by ` +
            `Worker Deployments, advanced.temporal.versioning '${options.temporal.versioning}')` +
            (unversioned > 0
              ? `: ${unversioned} worker(s) of the task queue poll unversioned (their ` +
                `advanced.temporal.versioning came to 'off'); give workers and clients the ` +
                `same versioning`
              : `: start a worker of this version first`) +
            `; a client built by another toolchain than its workers can compute another ` +
            `fingerprint: give the definition an explicit \`version\`.`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
