/**
 * The eight hook events of a session, as the hooks contract names them.
 *
 * `HookEvent` and `SessionHookEvent` hold exactly the same members: the seed page uses
 * `HookEvent` for agent-level hooks and `SessionHookEvent` for the lower level
 * `SessionOptions.hooks`.
 */
export const HookEvent = {
  /** The session finished initialising. Runs once per session. */
  SessionStart: 'SessionStart',
  /** A user prompt, before the agent sees it. */
  UserPromptSubmit: 'UserPromptSubmit',
  /** Before the permission check and execution of a tool call. */
  PreToolUse: 'PreToolUse',
  /** A tool call needs a permission decision. */
  PermissionRequest: 'PermissionRequest',
  /** A tool call succeeded. */
  PostToolUse: 'PostToolUse',
  /** A tool call failed. */
  PostToolUseFailure: 'PostToolUseFailure',
  /** A `send()` request finished successfully. */
  TaskCompleted: 'TaskCompleted',
  /** The session is closing. Runs at most once per session. */
  SessionEnd: 'SessionEnd',
} as const;

/** One of the eight hook event names. */
export type HookEvent = (typeof HookEvent)[keyof typeof HookEvent];

/** Same members as {@link HookEvent}; the name the seed page uses for session-level hooks. */
export const SessionHookEvent = HookEvent;
/** Same as {@link HookEvent}. */
export type SessionHookEvent = HookEvent;

/** All eight events, in lifecycle order. */
export const ALL_HOOK_EVENTS: readonly HookEvent[] = Object.values(HookEvent);

/** Whether `value` names one of the eight events. */
export function isHookEvent(value: unknown): value is HookEvent {
  return typeof value === 'string' && (ALL_HOOK_EVENTS as readonly string[]).includes(value);
}
