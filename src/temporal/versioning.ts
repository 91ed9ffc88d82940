/**
 * Which routing an agent's worker and client use (`advanced.temporal.versioning`): whether the
 * server has Temporal's Worker Deployments, asked once per worker and per client.
 *
 * The probe is `DescribeWorkerDeployment` of the agent's own deployment name (one RPC, a few
 * ms). Measured on Temporal 1.32.0 (the provisioned dev server) and the time-skipping test
 * server of `@temporalio/testing` 1.24:
 * - the deployment exists (OK) or does not yet (`NOT_FOUND`, "no Worker Deployment found"):
 *   the server has Worker Deployments;
 * - `PERMISSION_DENIED` "Worker Deployment Versions are disabled on this namespace.": the
 *   server has them off (dynamic config `system.enableDeploymentVersions=false`);
 * - `UNIMPLEMENTED` ("Worker Versioning not yet supported in test server"; a server without
 *   the API): none.
 * Neither `GetSystemInfo` nor the namespace's capabilities say anything about Worker
 * Deployments, and `frontend.workerVersioningWorkflowAPIs=false` changed nothing on 1.32.0
 * (pinned starts still worked), so this one call is what decides.
 *
 * @module
 */
import { ConfigError } from '../common/errors.js';
import { formatEntry, shows, stderrLine, type AgentLogger, type AgentLogLevel } from './logging.js';

/** gRPC status codes the probe tells apart. */
const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;
const UNIMPLEMENTED = 12;

/** `advanced.temporal.versioning` as given. */
type VersioningOption = 'auto' | 'deployments' | 'off';

/** The routing in force once resolved against the server. */
export type VersioningMode = 'deployments' | 'off';

/** The part of a workflow service the probe calls (a client's or a native connection's). */
interface DeploymentService {
  describeWorkerDeployment(request: {
    namespace: string;
    deploymentName: string;
  }): Promise<unknown>;
}

/** What the server said about Worker Deployments. */
type DeploymentsSupport =
  { supported: true } | { supported: false; why: 'disabled' | 'unimplemented'; detail: string };

/** The dynamic config a server needs for Worker Deployments, as the messages name it. */
const DEPLOYMENTS_SERVER_SETTINGS =
  'a Temporal server with Worker Deployments (1.32 has them on by default) and dynamic config ' +
  '`system.enableDeploymentVersions=true` for the namespace';

/**
 * Ask the server whether `namespace` has Worker Deployments.
 * @throws the RPC's error when it answers anything else (unreachable, not authorized, ...):
 *   guessing could make a worker and a client of one agent route differently.
 */
async function probeWorkerDeployments(
  service: DeploymentService,
  namespace: string,
  deploymentName: string,
): Promise<DeploymentsSupport> {
  try {
    await service.describeWorkerDeployment({ namespace, deploymentName });
    return { supported: true };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // A client's errors carry the server's text in `details`, a native connection's in `message`.
    const { details, message } = error as { details?: unknown; message?: unknown };
    const detail = String((typeof details === 'string' && details) || message || '');
    if (code === NOT_FOUND) return { supported: true };
    if (code === UNIMPLEMENTED) {
      return { supported: false, why: 'unimplemented', detail };
    }
    if (code === PERMISSION_DENIED && /disabled/i.test(detail)) {
      return { supported: false, why: 'disabled', detail };
    }
    throw error;
  }
}

/** Who resolves: the messages name it. */
interface ResolveContext {
  side: 'worker' | 'client';
  agentName: string;
  version: string;
  address: string;
  namespace: string;
  logger: AgentLogger | undefined;
  logLevel: AgentLogLevel;
}

/**
 * The routing `option` comes to on this server: `'off'` as given, without asking; otherwise
 * what {@link probeWorkerDeployments} answers. `'auto'` logs one line saying which and why
 * (INFO; WARN when the server has Worker Deployments but they are disabled).
 * @throws {ConfigError} for `'deployments'` on a server without Worker Deployments, naming
 *   the server settings.
 * @throws the probe's error when the server answers something else (see the probe).
 */
export async function resolveVersioning(
  option: VersioningOption,
  service: DeploymentService,
  context: ResolveContext,
): Promise<VersioningMode> {
  if (option === 'off') return 'off';
  let support: DeploymentsSupport;
  try {
    support = await probeWorkerDeployments(service, context.namespace, context.agentName);
  } catch (error) {
    throw new ConfigError(
      `advanced.temporal.versioning '${option}': could not ask ${context.address} (namespace ` +
        `'${context.namespace}') whether it has Worker Deployments (DescribeWorkerDeployment: ` +
        `${(error as Error).message}); set advanced.temporal.versioning to 'deployments' or ` +
        `'off' on the workers and clients of agent '${context.agentName}' alike`,
      { cause: error },
    );
  }
  const label = `agent '${context.agentName}' version '${context.version}'`;
  if (support.supported) {
    if (option === 'auto') {
      log(context, 'INFO', `${context.side} of ${label}: routing by Worker Deployments`, {
        versioning: 'auto',
        resolved: 'deployments',
        deploymentVersion: `${context.agentName}.${context.version}`,
        why: `namespace '${context.namespace}' at ${context.address} has Worker Deployments`,
      });
    }
    return 'deployments';
  }
  const why =
    support.why === 'disabled'
      ? `namespace '${context.namespace}' at ${context.address} has Worker Deployments disabled (${support.detail})`
      : `the server at ${context.address} has no Worker Deployments (${support.detail})`;
  if (option === 'deployments') {
    throw new ConfigError(
      `advanced.temporal.versioning 'deployments' (${context.side} of ${label}): ${why}. It needs ` +
        `${DEPLOYMENTS_SERVER_SETTINGS}; or use 'auto' (unversioned where the server has none) ` +
        `or 'off'. The time-skipping test server has no Worker Deployments: use ` +
        `createHookTestEnv({ server: 'dev' }) to test them.`,
    );
  }
  log(
    context,
    support.why === 'disabled' ? 'WARN' : 'INFO',
    `${context.side} of ${label}: unversioned (sessions are not pinned to their version; a ` +
      `worker of another version refuses their tasks)`,
    { versioning: 'auto', resolved: 'off', why },
  );
  return 'off';
}

function log(
  context: ResolveContext,
  level: 'INFO' | 'WARN',
  message: string,
  meta: Record<string, unknown>,
): void {
  if (!shows(level, context.logLevel)) return;
  if (context.logger) {
    if (level === 'WARN') context.logger.warn(message, meta);
    else context.logger.info(message, meta);
    return;
  }
  console.error(stderrLine(level, formatEntry(message, meta, context.logLevel)));
}
