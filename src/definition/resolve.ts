/**
 * Resolving the agent's options: `resolveAgentOptions` checks them against the field rules
 * and fills in every default; also the session options' check and the hook counts.
 *
 * @module
 */
import { resolve as resolvePath } from 'node:path';
import { DEFAULTS } from '../common/defaults.js';
import { ConfigError } from '../common/errors.js';
import type { HookEvent } from '../common/hook-events.js';
import { defaultTaskQueueOf } from '../common/identity.js';
import type { PermissionRules } from '../common/permission-rules.js';
import type { HookCallback, HookMap } from '../common/types.js';
import {
  ENCRYPTION_KEYS_VARIABLE,
  keyRingFromEnv,
  type EncryptionKeyRing,
  type EncryptionOption,
} from '../payloads/encryption.js';
import { fileStore } from '../payloads/store.js';
import { processMemoryStreams } from '../stream/memory.js';
import {
  resolveTemporalConnection,
  type ResolvedTemporalConnection,
} from '../temporal/connection-config.js';
import { parseLogLevel, resolveLogLevel, resolveRuntimeInstall } from '../temporal/logging.js';
import { builtinTools } from '../tools/builtin/index.js';
import { resolveTracing } from '../tracing/options.js';
import { identityOf } from './fingerprint.js';
import { agentSchema, check, sessionSchema } from './option-rules.js';
import { resolveSubagents } from './subagents.js';
import { resolveAgentBudgets } from './budget-rules.js';
import { resolveApprovals } from './approval-options.js';
import type {
  AdvancedOptions,
  AgentOptions,
  ResolvedAgentOptions,
  ResolvedSubagents,
  SessionOptions,
  TemporalOptions,
} from './options.js';

/**
 * Validate `createAgent` options and fill in every default.
 * @throws {ConfigError} naming each bad option and the value given.
 */
export function resolveAgentOptions(options: AgentOptions): ResolvedAgentOptions {
  if (typeof options !== 'object' || options === null)
    throw new ConfigError('createAgent needs an options object');
  check(agentSchema, options, 'agent options');
  const advanced = options.advanced ?? {};
  const temporal = advanced.temporal ?? {};
  const connection = connectionOf(temporal);
  const name = options.name ?? DEFAULTS.agentName;
  const hooks = copyHooks(advanced.hooks);
  const maxTurns = advanced.maxTurns ?? DEFAULTS.maxTurns;
  const { subagents, tools } = resolveSubagents(
    advanced.subagents,
    options.tools ? [...options.tools] : builtinTools(),
    maxTurns,
    Object.keys(options.mcpServers ?? {}),
  );
  const permission = advanced.permission ?? 'default';
  const permissionRules = resolvePermissionRules(advanced.permissionRules);
  const deciding = {
    hookTimeoutMs: advanced.hookTimeoutMs ?? DEFAULTS.hookTimeoutMs,
    sessionEndHookTimeoutMs: advanced.sessionEndHookTimeoutMs ?? DEFAULTS.sessionEndHookTimeoutMs,
    toolHookErrors: advanced.toolHookErrors ?? DEFAULTS.toolHookErrors,
    permissionTimeoutMs: advanced.permissionTimeoutMs ?? DEFAULTS.permissionTimeoutMs,
    maxTurns,
  };
  const parts = optionalParts(options, subagents, deciding.permissionTimeoutMs);
  const identity = identityOf(
    {
      ...deciding,
      hooks,
      tools,
      permission,
      ...(permissionRules ? { permissionRules } : {}),
      ...parts,
    },
    options.version,
  );
  return {
    name,
    ...identity,
    model: options.model,
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    hooks,
    hookTimeoutMs: deciding.hookTimeoutMs,
    sessionEndHookTimeoutMs: deciding.sessionEndHookTimeoutMs,
    maxTurns: deciding.maxTurns,
    hookDispatch: advanced.hookDispatch ?? 'activity',
    idleTimeoutMs: advanced.idleTimeoutMs,
    tools,
    ...parts,
    workspaceRoots: (options.workspaceRoots ?? [process.cwd()]).map((root) => resolvePath(root)),
    permission,
    ...(permissionRules ? { permissionRules } : {}),
    permissionTimeoutMs: deciding.permissionTimeoutMs,
    ...(advanced.requireBoundApprovals === true ? { requireBoundApprovals: true as const } : {}),
    toolTimeoutMs: advanced.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs,
    maxToolOutputBytes: advanced.maxToolOutputBytes ?? DEFAULTS.maxToolOutputBytes,
    toolHookErrors: deciding.toolHookErrors,
    toolEnv: {
      allow: [...(advanced.toolEnv?.allow ?? [])],
      set: { ...advanced.toolEnv?.set },
    },
    modelTimeoutMs: advanced.modelTimeoutMs ?? DEFAULTS.modelTimeoutMs,
    maxContextTokens: advanced.maxContextTokens ?? DEFAULTS.maxContextTokens,
    continueAsNewAfterPrompts: advanced.continueAsNewAfterPrompts,
    payloadStore: advanced.payloadStore ?? fileStore(resolvePath(DEFAULTS.payloadDir)),
    offloadPayloadBytes: advanced.offloadPayloadBytes ?? DEFAULTS.offloadPayloadBytes,
    encryption: resolveEncryption(options.encryption),
    stream:
      advanced.stream === false
        ? undefined
        : (advanced.stream?.transport ?? processMemoryStreams()),
    tracing: resolveTracing(options.tracing, name),
    logger: advanced.logger,
    logLevel: resolveLogLevel(parseLogLevel(advanced.logLevel)),
    temporal: resolveTemporal(temporal, advanced, name, connection),
  };
}

/**
 * `advanced.subagents`, `mcpServers` and `advanced.budgets`, each only when set, so
 * definitions without them keep their fingerprints (and sessions their inputs).
 * @throws {ConfigError} for a price of a model the agent does not use (`resolveAgentBudgets`).
 */
function optionalParts(
  options: AgentOptions,
  subagents: ResolvedSubagents | undefined,
  permissionTimeoutMs: number,
) {
  const mcpServers = options.mcpServers ? structuredClone(options.mcpServers) : undefined;
  const budgets = resolveAgentBudgets(options.advanced?.budgets, options.model, subagents);
  const approvals = resolveApprovals(options.advanced?.approvals, permissionTimeoutMs);
  return {
    ...(subagents ? { subagents } : {}),
    ...(mcpServers ? { mcpServers } : {}),
    ...(budgets ? { budgets } : {}),
    ...(approvals ? { approvals } : {}),
  };
}

/**
 * The Temporal connection of `advanced.temporal` and its variables and profile; for the
 * embedded server, without TLS, key or metadata.
 * @throws {ConfigError} for a heartbeat interval over half the dispatch heartbeat timeout, or
 *   TLS, an API key or metadata without an address.
 */
function connectionOf(temporal: TemporalOptions): ResolvedTemporalConnection {
  const heartbeatIntervalMs = temporal.heartbeatIntervalMs ?? DEFAULTS.heartbeatIntervalMs;
  const dispatchHeartbeatTimeoutMs =
    temporal.dispatchHeartbeatTimeoutMs ?? DEFAULTS.dispatchHeartbeatTimeoutMs;
  if (heartbeatIntervalMs * 2 > dispatchHeartbeatTimeoutMs) {
    throw new ConfigError(
      `Invalid agent options: advanced.temporal.heartbeatIntervalMs (${heartbeatIntervalMs}) must be at most half ` +
        `of advanced.temporal.dispatchHeartbeatTimeoutMs (${dispatchHeartbeatTimeoutMs}), or live hooks count as lost workers`,
    );
  }
  const connection = resolveTemporalConnection(temporal);
  if (connection.address === undefined) {
    const given = (['tls', 'apiKey', 'metadata'] as const).filter((k) => temporal[k] !== undefined);
    if (given.length > 0 && temporal.tls !== false) {
      throw new ConfigError(
        `Invalid agent options: ${given.map((k) => `advanced.temporal.${k}`).join(', ')} ` +
          'set without an address: set advanced.temporal.address (or TEMPORAL_ADDRESS, or a ' +
          "profile's address) to the server they are for; the embedded dev server runs without TLS",
      );
    }
    // The embedded dev server: the variables' and profile's TLS and key are not for it.
    connection.tls = false;
    connection.apiKey = undefined;
    connection.metadata = {};
  }
  return connection;
}

/** `advanced.temporal` with every default filled in. */
function resolveTemporal(
  temporal: TemporalOptions,
  advanced: AdvancedOptions,
  name: string,
  connection: ResolvedTemporalConnection,
): ResolvedAgentOptions['temporal'] {
  return {
    address: connection.address,
    namespace: connection.namespace,
    taskQueue: temporal.taskQueue ?? defaultTaskQueueOf(name),
    heartbeatIntervalMs: temporal.heartbeatIntervalMs ?? DEFAULTS.heartbeatIntervalMs,
    dispatchHeartbeatTimeoutMs:
      temporal.dispatchHeartbeatTimeoutMs ?? DEFAULTS.dispatchHeartbeatTimeoutMs,
    // Only when set: sessions keep the inputs they had before it existed.
    ...(temporal.modelHeartbeatTimeoutMs !== undefined
      ? { modelHeartbeatTimeoutMs: temporal.modelHeartbeatTimeoutMs }
      : {}),
    ...(temporal.toolHeartbeatTimeoutMs !== undefined
      ? { toolHeartbeatTimeoutMs: temporal.toolHeartbeatTimeoutMs }
      : {}),
    // A deploy must not fail in-flight hooks: by default the grace time is the hook budget.
    shutdownGraceTimeMs:
      temporal.shutdownGraceTimeMs ?? advanced.hookTimeoutMs ?? DEFAULTS.hookTimeoutMs,
    stickyQueueScheduleToStartTimeoutMs:
      temporal.stickyQueueScheduleToStartTimeoutMs ?? DEFAULTS.stickyQueueScheduleToStartTimeoutMs,
    maxConcurrentWorkflowTaskExecutions:
      temporal.maxConcurrentWorkflowTaskExecutions ?? DEFAULTS.maxConcurrentWorkflowTaskExecutions,
    turnStatus: temporal.turnStatus ?? false,
    workflowTaskTimeoutMs: temporal.workflowTaskTimeoutMs ?? DEFAULTS.workflowTaskTimeoutMs,
    embedded: temporal.embedded,
    workflowBundle: temporal.workflowBundle,
    connection,
    plugins: [...(temporal.plugins ?? [])],
    interceptors: { ...temporal.interceptors },
    runtime: resolveRuntimeInstall(temporal.runtime),
    versioning: temporal.versioning ?? 'auto',
  };
}

/** The rules with all three lists (copies); undefined when no list has a pattern. */
function resolvePermissionRules(
  rules: PermissionRules | undefined,
): Required<PermissionRules> | undefined {
  const resolved = {
    allow: [...(rules?.allow ?? [])],
    ask: [...(rules?.ask ?? [])],
    deny: [...(rules?.deny ?? [])],
  };
  const some = resolved.allow.length + resolved.ask.length + resolved.deny.length > 0;
  return some ? resolved : undefined;
}

function resolveEncryption(
  option: EncryptionOption | undefined,
): ResolvedAgentOptions['encryption'] {
  if (option === undefined || option === false) return undefined;
  if (option !== 'env') return option;
  let ring: EncryptionKeyRing | undefined;
  try {
    ring = keyRingFromEnv();
  } catch (error) {
    throw new ConfigError(`Invalid agent options: encryption: 'env': ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!ring) {
    throw new ConfigError(
      `Invalid agent options: encryption: 'env' needs ${ENCRYPTION_KEYS_VARIABLE} ` +
        `(keyId:base64Key,..., the first current); it is unset or empty`,
    );
  }
  return ring;
}

/**
 * Validate session options.
 * @throws {ConfigError} naming each bad option and the value given.
 */
export function validateSessionOptions(options: SessionOptions): void {
  check(sessionSchema, options, 'session options');
}

/** Callback counts by event, for the workflow (events with none schedule nothing). */
export function hookCountsOf(
  ...maps: Array<HookMap | undefined>
): Partial<Record<HookEvent, number>> {
  const counts: Partial<Record<HookEvent, number>> = {};
  for (const map of maps) {
    for (const [event, callbacks] of Object.entries(map ?? {}) as Array<
      [HookEvent, HookCallback[]]
    >) {
      if (callbacks.length > 0) counts[event] = (counts[event] ?? 0) + callbacks.length;
    }
  }
  return counts;
}

function copyHooks(hooks: HookMap | undefined): HookMap {
  const copy: HookMap = {};
  for (const [event, callbacks] of Object.entries(hooks ?? {}) as Array<
    [HookEvent, HookCallback[]]
  >) {
    copy[event] = [...callbacks];
  }
  return copy;
}
