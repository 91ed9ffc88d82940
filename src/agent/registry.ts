/**
 * The worker-side registry: callbacks and models cannot cross into a workflow, so the
 * activities find them here, by agent name, session and event.
 *
 * @module
 */
import { ConfigError } from '../common/errors.js';
import type { HookEvent } from '../common/hook-events.js';
import type { HookCallback, HookMap } from '../common/types.js';
import type { AgentModel } from '../models/model.js';
import type { PermissionHandler } from '../common/permission.js';
import type { ToolDefinition } from '../tools/tool.js';
import type { StreamTransport } from '../stream/transport.js';

/** What a worker knows of one agent definition. */
interface RegisteredAgent {
  name: string;
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
}

/** Callbacks, models, session-level hooks and callbacks still cleaning up, in this process. */
export class AgentRegistry {
  readonly #agents = new Map<string, RegisteredAgent>();
  readonly #sessionHooks = new Map<string, HookMap>();
  readonly #sessionPermissions = new Map<string, PermissionHandler>();
  /** Callbacks that outlived their dispatch, by dispatch id; removed when they settle. */
  readonly pendingCleanups = new Map<string, Promise<void>>();

  /** Register (or replace) an agent definition. */
  register(agent: RegisteredAgent): void {
    this.#agents.set(agent.name, agent);
  }

  /**
   * The agent registered as `name`.
   * @throws {ConfigError} when this worker has no such agent.
   */
  agent(name: string): RegisteredAgent {
    const agent = this.#agents.get(name);
    if (!agent) {
      throw new ConfigError(
        `This worker has no agent named '${name}' (it has: ${[...this.#agents.keys()].join(', ') || 'none'})`,
      );
    }
    return agent;
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

  /** Forget a session's hooks and permission function (its creation failed, or it closed). */
  removeSessionHooks(sessionId: string): void {
    this.#sessionHooks.delete(sessionId);
    this.#sessionPermissions.delete(sessionId);
  }

  /** Every callback of `event` for this session: the agent's first, then the session's. */
  callbacksFor(agentName: string, sessionId: string, event: HookEvent): HookCallback[] {
    return [
      ...(this.agent(agentName).hooks[event] ?? []),
      ...(this.#sessionHooks.get(sessionId)?.[event] ?? []),
    ];
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
