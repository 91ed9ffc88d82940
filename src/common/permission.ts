/**
 * Permission (contract §7): presets, the shapes a permission function returns, and the
 * pure rules that turn them into a decision. Workflow-safe.
 *
 * @module
 */
import type { ApprovalStage } from './approval-stages.js';
import type { JsonObject } from './json.js';
import type { ToolKind } from './types.js';

/** A permission preset. */
export type PermissionPreset = 'default' | 'accept-edits' | 'bypass-permissions' | 'plan';

/** All presets. */
export const PERMISSION_PRESETS: readonly PermissionPreset[] = [
  'default',
  'accept-edits',
  'bypass-permissions',
  'plan',
];

/** The full form of a permission decision. */
export type PermissionResult =
  | { behavior: 'allow'; updatedInput?: JsonObject }
  | { behavior: 'deny'; message: string; interrupt?: boolean }
  | { behavior: 'ask'; message?: string };

/** What a permission function may return. */
export type PermissionDecision = 'allow' | 'deny' | 'ask' | PermissionResult;

/** What a permission function is asked. */
export interface PermissionRequest {
  /** The tool's name. */
  toolName: string;
  /** The input the call would run with (as the PreToolUse and PermissionRequest hooks left it). */
  input: JsonObject;
  /** The tool's kind (`readonly`, `write`, `execute`). */
  kind: ToolKind;
  /** The paths the call would read or write, from the tool's `affectedPaths` (or none). */
  affectedPaths: string[];
  /**
   * Aborts when the prompt is aborted, as a hook callback's `abortSignal` does: its reason is
   * the object passed to `abort()` (an Error with its message when another process called it).
   * In a sub-agent it also aborts when its parent's prompt is aborted (that reason) or its Task
   * times out (an Error with code `SUBAGENT_TIMEOUT`).
   */
  signal: AbortSignal;
  /** In a sub-agent's call only: its path of sub-agent names, e.g. `main/researcher`. */
  agentPath?: string;
  /** In a sub-agent's call only: how deep it is, 1 under the top session. */
  depth?: number;
}

/** `advanced.permission`: a preset or a function. */
export type PermissionHandler = (
  request: PermissionRequest,
) => PermissionDecision | Promise<PermissionDecision>;

/**
 * What a preset decides for a tool kind:
 * - `default`: read-only tools run; others ask a person;
 * - `accept-edits`: read-only and write tools run; execute tools ask;
 * - `bypass-permissions`: everything runs;
 * - `plan`: read-only tools run; everything else is denied (planning, no changes).
 */
export function presetDecision(preset: PermissionPreset, kind: ToolKind): PermissionResult {
  switch (preset) {
    case 'bypass-permissions':
      return { behavior: 'allow' };
    case 'accept-edits':
      return kind === 'execute' ? { behavior: 'ask' } : { behavior: 'allow' };
    case 'plan':
      return kind === 'readonly'
        ? { behavior: 'allow' }
        : { behavior: 'deny', message: `Plan mode: ${kind} tools do not run` };
    case 'default':
      return kind === 'readonly' ? { behavior: 'allow' } : { behavior: 'ask' };
  }
}

/**
 * Normalise what a permission function returned.
 * @returns `undefined` when the value is not a valid decision (the caller reports it).
 */
export function normalizePermission(
  value: unknown,
  toolName: string,
): PermissionResult | undefined {
  if (value === 'allow') return { behavior: 'allow' };
  if (value === 'ask') return { behavior: 'ask' };
  if (value === 'deny')
    return { behavior: 'deny', message: `Permission to run ${toolName} was denied` };
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.behavior === 'allow') {
    if (
      v.updatedInput !== undefined &&
      (typeof v.updatedInput !== 'object' ||
        v.updatedInput === null ||
        Array.isArray(v.updatedInput))
    ) {
      return undefined;
    }
    return v.updatedInput
      ? { behavior: 'allow', updatedInput: v.updatedInput as JsonObject }
      : { behavior: 'allow' };
  }
  if (v.behavior === 'deny') {
    return {
      behavior: 'deny',
      message:
        typeof v.message === 'string' ? v.message : `Permission to run ${toolName} was denied`,
      ...(v.interrupt === true ? { interrupt: true } : {}),
    };
  }
  if (v.behavior === 'ask')
    return typeof v.message === 'string'
      ? { behavior: 'ask', message: v.message }
      : { behavior: 'ask' };
  return undefined;
}

/** A request waiting for a person (`ask`), as listed on the session. */
export interface PendingPermission {
  /** Id to decide it by (`session.approve(requestId)` / `session.deny(requestId)`). */
  requestId: string;
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The tool's kind (`readonly`, `write`, `execute`). */
  toolKind: ToolKind;
  /** The input the call would run with; an approval may replace it. */
  input: JsonObject;
  /** The paths the call would read or write, from the tool's `affectedPaths` (or none). */
  affectedPaths: string[];
  /**
   * The ask's message, when it has one: the permission function's, or the rule's
   * (`Asked by permissionRules.ask 'mcp__github__*'`); a preset's ask has none.
   */
  message?: string;
  /** Workflow time it was asked, ms since epoch. */
  askedAt: number;
  /** When silence turns into a deny, ms since epoch. */
  deadline: number;
  /**
   * The approval digest of the call: sha256 (64 hex digits) of the session, `toolUseId`,
   * `toolName`, the exact `input` and the agent version and fingerprint. Pass it with the
   * answer (`session.approve(requestId, { digest })`) to bind the answer to this call: the
   * session refuses it (`PERMISSION_DIGEST_MISMATCH`) when the call it would run is another.
   * People are shown its first 12 digits, which an answer may name it by. Absent from
   * sessions whose worker predates approval digests.
   */
  digest?: string;
  /**
   * Where the request is in `advanced.approvals`' stages: `asked`, `reminded` (the reminder
   * came), `escalated` (escalated, to {@link PendingPermission.escalateTo}). Absent when the
   * agent has no stages.
   */
  stage?: ApprovalStage;
  /** When the next stage is due (the reminder, the escalation or the deadline), ms since epoch. */
  nextStageAt?: number;
  /** The group the request was escalated to (`advanced.approvals.escalateTo`), once escalated. */
  escalateTo?: string;
  /**
   * The session that asks, the listed one or a sub-agent it runs (whose request ids are
   * `<its session id>#<uuid>`). Set by `session.pendingPermissions()`, not by the query.
   */
  sessionId?: string;
  /**
   * The asking session's path of sub-agent names: `main` for the top session,
   * `main/writer` for its sub-agent `writer`. Set with `sessionId`.
   */
  agentPath?: string;
}

/** A person's answer to a pending request (the tool runs with `updatedInput` when given). */
export type PermissionAnswer =
  | { behavior: 'allow'; updatedInput?: JsonObject }
  | { behavior: 'deny'; message?: string; interrupt?: boolean };
