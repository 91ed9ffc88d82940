/**
 * The options of one session (`createSession(options)`): its own hooks, timeouts, permission
 * handler, budget caps and tenant. `options.ts` re-exports them with the other options.
 *
 * @module
 */
import type { BudgetCaps } from '../common/budgets.js';
import type { HookDispatchMode } from '../common/hook-dispatch-mode.js';
import type { PermissionHandler } from '../common/permission.js';
import type { HookMap } from '../common/types.js';

/** Lower level options of one session, with the same hooks contract. */
export interface SessionOptions {
  /** The session's id. @default a random UUID */
  sessionId?: string;
  /** Extra callbacks for this session, run after the agent's. In-process only. */
  hooks?: HookMap;
  /** This session's `advanced.hookTimeoutMs`. @see AdvancedOptions.hookTimeoutMs */
  hookTimeoutMs?: number;
  /**
   * This session's `advanced.sessionEndHookTimeoutMs`.
   * @see AdvancedOptions.sessionEndHookTimeoutMs
   */
  sessionEndHookTimeoutMs?: number;
  /** This session's `advanced.idleTimeoutMs`. @see AdvancedOptions.idleTimeoutMs */
  idleTimeoutMs?: number;
  /** This session's `advanced.maxTurns`. @see AdvancedOptions.maxTurns */
  maxTurns?: number;
  /** The session this one resumes; SessionStart then gets `isResume: true`. */
  resumeSessionId?: string;
  /**
   * This session's hook dispatch mode by event: events it names override the agent's mode.
   * @see AdvancedOptions.hookDispatch
   * @throws {ConfigError} from `createSession` when it is not a {@link HookDispatchMode}.
   */
  hookDispatch?: HookDispatchMode;
  /**
   * The permission function of this session: it takes the place of `advanced.permission` for
   * this session's tool calls, with the same contract (`{toolName, input, kind,
   * affectedPaths, signal}` in; `'allow' | 'deny' | 'ask'` or a `PermissionResult` out). The
   * low-level runtime hook of the seed's page. In-process only, like session `hooks`: it runs
   * on the worker of the process that created the session; a worker of another process
   * refuses the check (the tool call is denied, naming why) rather than use its own policy.
   * @default the agent's `advanced.permission`
   * @throws {ConfigError} from `createSession` when it is not a function, or the agent has no
   *   worker in this process (`createAgentClient`).
   */
  permissionHandler?: PermissionHandler;
  /**
   * This session's spend caps: each holds together with the agent's `advanced.budgets` (the
   * lower of the two counts). Prices and `maxOutputTokens` are the agent's.
   * @default the agent's caps only
   * @throws {ConfigError} from `createSession` for a negative or non-integer cap, naming it
   *   (`budgets.totalTokens`), or `costUsd` when the agent prices no model.
   */
  budgets?: BudgetCaps;
  /**
   * The tenant the session belongs to: its key in the budgets the agent shares per tenant
   * (`advanced.budgets.shared` with `scope: 'tenant'`; docs/budgets.md). A string of 1 to 200
   * characters.
   * @default none
   * @throws {ConfigError} from `createSession` when it is not such a string, or is absent while
   *   the agent shares a budget per tenant.
   */
  tenant?: string;
}
