/**
 * The worker-side registry: callbacks and models cannot cross into a workflow, so the
 * activities find them here, by agent name, session and event.
 *
 * @module
 */
import type { ApprovalNotifyEvent } from '../common/approval-stages.js';
import { ConfigError } from '../common/errors.js';
import {
  manifestDifferences,
  type DefinitionManifest,
  type SessionIdentity,
  type VersionRefusal,
} from '../common/identity.js';
import type { HookEvent } from '../common/hook-events.js';
import type { HookCallback, HookMap } from '../common/types.js';
import type { AgentModel } from '../models/model.js';
import type { PermissionHandler } from '../common/permission.js';
import type { ToolDefinition } from '../tools/tool.js';
import { publishInProcess } from '../stream/memory.js';
import type { StreamTransport } from '../stream/transport.js';
import type { SessionLineage } from '../common/workflow-io.js';
import type { McpConnections } from '../mcp/connections.js';

/** What a worker knows of one sub-agent of a definition; what is absent is the agent's. */
export interface RegisteredSubagent {
  /** Its own agent-level hooks; absent: the agent's. */
  hooks?: HookMap;
  /** Its own permission function; absent: the session's (a preset is in the session's input). */
  permission?: PermissionHandler;
  /** The tools it may call (never `Task`). */
  tools: readonly ToolDefinition[];
  /** Its own model; absent: the agent's. */
  model?: AgentModel;
  /** Its instructions: the system message of each of its model steps. */
  prompt: string;
  /**
   * The `Task` tool it gets, listing the sub-agents it may start, while its depth is under
   * `maxDepth`; absent when it may start none.
   */
  spawn?: { tool: ToolDefinition; maxDepth: number };
}

/** What one session's model steps and tool calls use: the agent's, or a sub-agent's own. */
interface SessionDefinition {
  agent: RegisteredAgent;
  model: AgentModel;
  /** The tools its model may call. */
  tools: readonly ToolDefinition[];
  /** A sub-agent's instructions (its `prompt`); absent in a top session. */
  instructions?: string;
  /** The permission function of `{ handler: 'function' }`: the sub-agent's own, else the agent's. */
  permission?: PermissionHandler;
}

/** What a worker knows of one agent definition. */
interface RegisteredAgent {
  name: string;
  /** The version this worker runs (a Temporal build id). */
  version: string;
  /** The definition's fingerprint. */
  fingerprint: string;
  /** What the fingerprint is the hash of. */
  manifest: DefinitionManifest;
  hooks: HookMap;
  model: AgentModel;
  /** The tools the model may call. */
  tools: readonly ToolDefinition[];
  /** Absolute, symlink-resolved workspace roots of the file tools. */
  workspaceRoots: readonly string[];
  /** The permission function, when `advanced.permission` is one. */
  permission?: PermissionHandler;
  /** Largest tool output given to the model, bytes. */
  maxToolOutputBytes: number;
  /** The environment of tool processes (`context.env`). @default absent: Bash's own default */
  toolEnv?: Readonly<Record<string, string>>;
  /** Where the activities publish sends' live streams (`advanced.stream`); absent: off. */
  stream?: StreamTransport;
  /** The sub-agents by name (`advanced.subagents`); absent: none. */
  subagents?: ReadonlyMap<string, RegisteredSubagent>;
  /** The connections to the definition's MCP servers (`mcpServers`); absent: none. */
  mcp?: McpConnections;
  /** `advanced.approvals.notify`; absent: none. */
  approvalNotify?: (event: ApprovalNotifyEvent) => Promise<void> | void;
}

/** Callbacks, models, session-level hooks and callbacks still cleaning up, in this process. */
export class AgentRegistry {
  /** By name, then by version. */
  readonly #agents = new Map<string, Map<string, RegisteredAgent>>();
  readonly #sessionHooks = new Map<string, HookMap>();
  readonly #sessionPermissions = new Map<string, PermissionHandler>();
  /** Callbacks that outlived their dispatch, by dispatch id; removed when they settle. */
  readonly pendingCleanups = new Map<string, Promise<void>>();

  /**
   * Register (or replace) an agent definition, as the version it claims. A definition of the
   * same name and version with another fingerprint is refused, here and in every other
   * registry of this process (two `createAgent` calls of one process claiming one version).
   * @returns a function that gives the process-wide claim back (the worker stopped).
   * @throws {ConfigError} naming what differs between the two definitions.
   */
  register(agent: RegisteredAgent): () => void {
    const release = claimVersion(agent);
    let versions = this.#agents.get(agent.name);
    if (!versions) this.#agents.set(agent.name, (versions = new Map()));
    versions.set(agent.version, agent);
    // Clients of this process reading an in-memory stream check that a worker publishes it.
    const unpublish = agent.stream ? publishInProcess(agent.stream, agent.name) : () => undefined;
    return () => {
      release();
      unpublish();
    };
  }

  /**
   * The agent registered as `name` (in `version`; without one, the one registered last).
   * @throws {ConfigError} when this worker has no such agent.
   */
  agent(name: string, version?: string): RegisteredAgent {
    const versions = this.#agents.get(name);
    const agent =
      version === undefined ? [...(versions?.values() ?? [])].at(-1) : versions?.get(version);
    if (!agent) {
      throw new ConfigError(
        `This worker has no agent named '${name}'${version === undefined ? '' : ` in version '${version}'`} ` +
          `(it has: ${this.#describe() || 'none'})`,
      );
    }
    return agent;
  }

  /** The versions of `name` this worker runs (empty when none), by version. */
  versionsOf(name: string): ReadonlyMap<string, RegisteredAgent> {
    return this.#agents.get(name) ?? new Map();
  }

  /**
   * Why this worker must not run a task of a session started as `identity` of agent
   * `agentName`, or undefined when it runs that very definition. Sessions recorded before
   * versions existed carry none and are not checked.
   */
  refusal(
    agentName: string,
    sessionId: string,
    identity: Partial<SessionIdentity>,
  ): VersionRefusal | undefined {
    const { version, fingerprint } = identity;
    if (version === undefined || fingerprint === undefined) return undefined;
    const versions = this.#agents.get(agentName);
    // No agent of that name at all: the activity's own lookup says so (a ConfigError).
    if (!versions) return undefined;
    const mine = versions.get(version);
    if (mine && mine.fingerprint === fingerprint) return undefined;
    const workerVersions = [...versions.keys()];
    const base = {
      agentName,
      sessionId,
      sessionVersion: version,
      sessionFingerprint: fingerprint,
      workerVersions,
    };
    if (!mine) {
      return {
        ...base,
        code: 'WORKER_VERSION_MISMATCH',
        message:
          `Refused: session '${sessionId}' runs agent '${agentName}' version '${version}'; this worker ` +
          `runs version ${workerVersions.map((v) => `'${v}'`).join(', ')}. It never runs another ` +
          `version's callbacks: a worker of version '${version}' must take the task.`,
      };
    }
    return {
      ...base,
      code: 'VERSION_FINGERPRINT_MISMATCH',
      message:
        `Refused: session '${sessionId}' runs agent '${agentName}' version '${version}' with fingerprint ` +
        `${fingerprint}; this worker claims version '${version}' too, with another definition ` +
        `(fingerprint ${mine.fingerprint}). Two definitions claim one version: give the changed one a new version.`,
      workerFingerprint: mine.fingerprint,
      workerManifest: mine.manifest,
    };
  }

  #describe(): string {
    return [...this.#agents.entries()]
      .map(([name, versions]) => `${name} (${[...versions.keys()].join(', ')})`)
      .join(', ');
  }

  /**
   * Set the session-level hooks of a session (run after the agent's, in array order).
   * Setting them again replaces them, so a retried `createSession` does not double them.
   */
  setSessionHooks(sessionId: string, hooks: HookMap): void {
    const copy: HookMap = {};
    for (const [event, callbacks] of Object.entries(hooks) as Array<[HookEvent, HookCallback[]]>) {
      copy[event] = [...callbacks];
    }
    this.#sessionHooks.set(sessionId, copy);
  }

  /** Set the permission function of a session (`SessionOptions.permissionHandler`). */
  setSessionPermission(sessionId: string, handler: PermissionHandler): void {
    this.#sessionPermissions.set(sessionId, handler);
  }

  /** The permission function of a session, if this process holds one. */
  sessionPermission(sessionId: string): PermissionHandler | undefined {
    return this.#sessionPermissions.get(sessionId);
  }

  /**
   * Sessions whose hooks or permission function this registry holds now.
   * @internal for tests and `bench/memory.ts`.
   */
  get sessionsHeld(): number {
    return new Set([...this.#sessionHooks.keys(), ...this.#sessionPermissions.keys()]).size;
  }

  /** Forget a session's hooks and permission function (its creation failed, or it closed). */
  removeSessionHooks(sessionId: string): void {
    this.#sessionHooks.delete(sessionId);
    this.#sessionPermissions.delete(sessionId);
  }

  /**
   * Every callback of `event` for this session: the agent's first, then the session's. In a
   * sub-agent (`lineage`): its own agent-level hooks (the agent's when it inherits them), then
   * the session hooks of the top session of its tree.
   * @throws {ConfigError} when the agent has no such sub-agent.
   */
  callbacksFor(
    agentName: string,
    sessionId: string,
    event: HookEvent,
    version?: string,
    lineage?: Pick<SessionLineage, 'subagent' | 'rootSessionId'>,
  ): HookCallback[] {
    const agent = this.agent(agentName, version);
    const own = lineage ? this.subagent(agent, lineage.subagent).hooks : undefined;
    return [
      ...((own ?? agent.hooks)[event] ?? []),
      ...(this.#sessionHooks.get(lineage?.rootSessionId ?? sessionId)?.[event] ?? []),
    ];
  }

  /**
   * What the steps and calls of a session use: the agent's model, tools and permission
   * function; in a sub-agent (`lineage`) its own where it has them, its `prompt` as
   * instructions, and the `Task` tool while its depth is under `maxDepth`.
   * @throws {ConfigError} when this worker has no such agent or sub-agent.
   */
  definitionFor(
    agentName: string,
    version: string | undefined,
    lineage: Pick<SessionLineage, 'subagent' | 'depth'> | undefined,
  ): SessionDefinition {
    const agent = this.agent(agentName, version);
    const { model, tools, permission } = agent;
    if (!lineage) return { agent, model, tools, ...(permission ? { permission } : {}) };
    const sub = this.subagent(agent, lineage.subagent);
    const task = sub.spawn && lineage.depth < sub.spawn.maxDepth ? sub.spawn.tool : undefined;
    const own = sub.permission ?? permission;
    return {
      agent,
      model: sub.model ?? model,
      tools: task ? [...sub.tools, task] : sub.tools,
      instructions: sub.prompt,
      ...(own ? { permission: own } : {}),
    };
  }

  /**
   * Sub-agent `name` of `agent`.
   * @throws {ConfigError} when the agent has none of that name.
   */
  subagent(agent: RegisteredAgent, name: string): RegisteredSubagent {
    const subagent = agent.subagents?.get(name);
    if (!subagent) {
      throw new ConfigError(
        `Agent '${agent.name}' version '${agent.version}' has no sub-agent named '${name}' ` +
          `(it has: ${[...(agent.subagents?.keys() ?? [])].join(', ') || 'none'})`,
      );
    }
    return subagent;
  }

  /** Track a dispatch's callbacks until they settle. */
  trackCleanup(dispatchId: string, running: Promise<unknown>): void {
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    this.pendingCleanups.set(dispatchId, settled);
    void settled.then(() => this.pendingCleanups.delete(dispatchId));
  }
}

/**
 * The hooks of a definition, as the deploy gate and golden sessions read them: the agent's,
 * and each sub-agent's own (`AgentOptions.advanced.subagents.agents`, raw or resolved).
 */
export interface DefinitionHooks {
  /** The agent-level hooks. */
  hooks: HookMap;
  /** Sub-agents by name; `hooks` absent or `'inherit'`: the agent's. @default none */
  subagents?: Readonly<Record<string, { readonly hooks?: HookMap | 'inherit' | undefined }>>;
}

/**
 * The agent-level callbacks of `event` in a session of `definition`, chosen as
 * {@link AgentRegistry.callbacksFor} chooses them (session hooks apart): the agent's; in a
 * sub-agent's session (`lineage`), the sub-agent's own hooks when it names them.
 * @throws {ConfigError} when the definition has no sub-agent of the lineage's name.
 */
export function callbacksOfDefinition(
  definition: DefinitionHooks,
  event: HookEvent,
  lineage?: Pick<SessionLineage, 'subagent'>,
): HookCallback[] {
  if (!lineage) return [...(definition.hooks[event] ?? [])];
  const subagent = definition.subagents?.[lineage.subagent];
  if (!subagent) {
    const names = Object.keys(definition.subagents ?? {});
    throw new ConfigError(
      `the definition has no sub-agent named '${lineage.subagent}' (it has: ${names.join(', ') || 'none'})`,
    );
  }
  const own = subagent.hooks === 'inherit' ? undefined : subagent.hooks;
  return [...((own ?? definition.hooks)[event] ?? [])];
}

/** Versions claimed by the workers of this process: name and version → fingerprint, manifest, claims. */
const claims = new Map<
  string,
  { fingerprint: string; manifest: DefinitionManifest; count: number }
>();

/**
 * Claim `agent.version` of `agent.name` for this process.
 * @throws {ConfigError} when a definition of this process claims it with another fingerprint.
 */
function claimVersion(agent: RegisteredAgent): () => void {
  const key = `${agent.name}\u0000${agent.version}`;
  const claim = claims.get(key);
  if (claim && claim.fingerprint !== agent.fingerprint) {
    const differences = manifestDifferences(claim.manifest, agent.manifest);
    throw new ConfigError(
      `Agent '${agent.name}' version '${agent.version}' is already run by this process with another ` +
        `definition (fingerprint ${claim.fingerprint}, this one ${agent.fingerprint}); what differs: ` +
        `${differences.join('; ') || 'nothing named'}. Give the changed definition a version of its own.`,
    );
  }
  if (claim) claim.count++;
  else claims.set(key, { fingerprint: agent.fingerprint, manifest: agent.manifest, count: 1 });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const current = claims.get(key);
    if (current && --current.count === 0) claims.delete(key);
  };
}

/**
 * Abort reasons handed to `abort()` in this process, by abort id, so that a callback in the
 * same process receives the very object (another process gets a rebuilt `Error`).
 */
const localAbortReasons = new Map<string, unknown>();
const MAX_LOCAL_ABORTS = 1000;

/** Remember the reason object of an abort made in this process. */
export function rememberAbortReason(abortId: string, reason: unknown): void {
  localAbortReasons.set(abortId, reason);
  if (localAbortReasons.size > MAX_LOCAL_ABORTS) {
    const oldest = localAbortReasons.keys().next().value;
    if (oldest !== undefined) localAbortReasons.delete(oldest);
  }
}

/** The reason object of an abort made in this process, if it was. */
export function localAbortReason(abortId: string): { found: boolean; reason: unknown } {
  return { found: localAbortReasons.has(abortId), reason: localAbortReasons.get(abortId) };
}
