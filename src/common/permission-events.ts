/**
 * The permission events of a send's live stream (`permission-asked`, `permission-decided`)
 * and the pure rules that build them. Workflow-safe: the workflow builds the decided events
 * itself (it is where every decision is made), and the next activity of the send carries
 * them to the stream (see `workflows/session/stream-outbox.ts`).
 *
 * @module
 */
import type { PermissionAnswer, PermissionPreset, PermissionResult } from './permission.js';
import type { PermissionRuleMatch } from './permission-rules.js';
import type { ToolEndEvent, ToolStartEvent } from './tool-events.js';
import type { ToolKind } from './types.js';

/**
 * A decision on a tool call is asked of someone who takes time: the permission function
 * (`advanced.permission`, or the session's `permissionHandler`), or a person (an `ask`).
 * A preset is not asked: it decides at once (`permission-decided` with `decidedBy: 'preset'`).
 */
export interface PermissionAskedEvent {
  /** Discriminant: `'permission-asked'`. */
  type: 'permission-asked';
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The tool's kind (`readonly`, `write`, `execute`). */
  kind: ToolKind;
  /** The paths the call would read or write, from the tool's `affectedPaths` (or none). */
  affectedPaths: string[];
  /** Who is asked: the permission function, or a person (then the call waits durably). */
  askedOf: 'function' | 'person';
  /**
   * For a person: the id of the pending request, to answer with `session.approve(id)` or
   * `session.deny(id)` (the `requestId` of `session.pendingPermissions()`).
   */
  permissionRequestId?: string;
  /** For a person: the ask's message (the preset's or the function's), when it has one. */
  message?: string;
  /** For a person: when silence turns into a deny, ms since the epoch (workflow time). */
  deadline?: number;
  /** For a person: the call's approval digest (`PendingPermission.digest`). */
  digest?: string;
  /**
   * The sub-agent whose call this is (`main/researcher`): set on a sub-agent's events only,
   * which its top session's send stream carries besides its own. Absent on the session's
   * own events.
   */
  agentPath?: string;
}

/**
 * A person's `ask` reached a stage of `advanced.approvals`: the reminder or the escalation
 * (the deadline's is the `permission-decided` of `decidedBy: 'deadline'`). Published as it
 * happens; the call still waits.
 */
export interface PermissionStageEvent {
  /** Discriminant: `'permission-stage'`. */
  type: 'permission-stage';
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The pending request (`PendingPermission.requestId`). */
  permissionRequestId: string;
  /** The stage reached: `reminded`, or `escalated` (to `escalateTo`). */
  stage: 'reminded' | 'escalated';
  /** `advanced.approvals.escalateTo`, for an escalation. */
  escalateTo?: string;
  /** When the next stage (or the deadline) comes, ms since the epoch (workflow time). */
  nextStageAt: number;
  /** The call's approval digest (`PendingPermission.digest`). */
  digest?: string;
  /** The sub-agent whose call this is (`main/researcher`), as on the other permission events. */
  agentPath?: string;
}

/** Who made a permission decision. */
export type PermissionDecider =
  /** The agent's preset (`advanced.permission: 'default'`, ...), named in `preset`. */
  | 'preset'
  /** The permission function (`advanced.permission` as a function, or the session's). */
  | 'function'
  /** A pattern of `advanced.permissionRules`, named in `rule` (before the preset or function). */
  | 'rules'
  /** A person, through `session.approve()` / `session.deny()` (or the CLI's approve/deny). */
  | 'person'
  /** Nobody answered the `ask` by its deadline (`permissionTimeoutMs`): denied. */
  | 'deadline';

/**
 * A permission decision on a tool call: one event per decision, whoever made it. An `ask`
 * (a preset's or the function's) is followed by a `permission-asked` of the person and,
 * once they answer (or the deadline passes), a second `permission-decided`.
 */
export interface PermissionDecidedEvent {
  /** Discriminant: `'permission-decided'`. */
  type: 'permission-decided';
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** `ask`: a person is asked next (only a rule, a preset or the function decides `ask`). */
  behavior: 'allow' | 'deny' | 'ask';
  /** Who decided: a permission rule, the preset, the permission function, a person, or the deadline. */
  decidedBy: PermissionDecider;
  /** For `decidedBy: 'preset'`: which. */
  preset?: PermissionPreset;
  /**
   * For `decidedBy: 'rules'`: the rule that matched, its list and its pattern as given
   * (`{ list: 'deny', pattern: 'mcp__github__*' }`).
   */
  rule?: PermissionRuleMatch;
  /**
   * For `decidedBy: 'person'`: the identity of the Temporal client that answered (its
   * `identity` option; Temporal's default is `<pid>@<host>`; the CLI's `--identity`).
   */
  identity?: string;
  /** For a person's (or the deadline's) decision: the pending request it answered. */
  permissionRequestId?: string;
  /** The deny or ask message, or why the check failed (which denies). */
  message?: string;
  /** Whether an `allow` came with an edited input (`updatedInput`): the tool runs with it. */
  editedInput: boolean;
  /**
   * For a person's (or the deadline's) decision: the approval digest of the call asked about
   * (`PendingPermission.digest`).
   */
  digest?: string;
  /**
   * For a person's decision: whether the answer named that digest (bound to the call), or
   * came without one (`false`: an older client, or one that does not show the digest).
   */
  bound?: boolean;
  /**
   * For an `allow` with an edited input: the approval digest of the call as it runs (the
   * edited input's), beside `digest` (the call asked about) and `identity` (who edited).
   */
  updatedInputDigest?: string;
  /** A deny that also stops the running prompt (`interrupt: true`). */
  interrupt?: true;
  /**
   * The sub-agent whose call this is (`main/researcher`): set on a sub-agent's events only,
   * which its top session's send stream carries besides its own. Absent on the session's
   * own events.
   */
  agentPath?: string;
}

/** The stream events the workflow itself makes: the permission events, and a `Task` call's tool events. */
export type WorkflowStreamEvent =
  | PermissionAskedEvent
  | PermissionStageEvent
  | PermissionDecidedEvent
  | ToolStartEvent
  | ToolEndEvent;

/** The call a permission event is about. */
interface PermissionEventCall {
  toolUseId: string;
  toolName: string;
}

/** How a permission rule, a preset or the permission function decided. */
type PolicyDecider =
  | { decidedBy: 'rules'; rule: PermissionRuleMatch }
  | { decidedBy: 'preset'; preset: PermissionPreset }
  | { decidedBy: 'function' };

/** How a person's answer came (or did not). */
type PersonDecider =
  | {
      decidedBy: 'person';
      permissionRequestId: string;
      identity?: string | undefined;
      binding?: PersonBinding;
    }
  | { decidedBy: 'deadline'; permissionRequestId: string; binding?: PersonBinding };

/** The approval digests of a person's decision (`PermissionDecidedEvent`'s fields). */
interface PersonBinding {
  digest?: string | undefined;
  bound?: boolean;
  updatedInputDigest?: string | undefined;
}

/** The `permission-decided` event of a decision. Pure. */
export function permissionDecidedEvent(
  call: PermissionEventCall,
  decision: PermissionResult | PermissionAnswer,
  by: PolicyDecider | PersonDecider,
): PermissionDecidedEvent {
  const message = 'message' in decision ? decision.message : undefined;
  const interrupt = decision.behavior === 'deny' && decision.interrupt === true;
  const edited = decision.behavior === 'allow' && decision.updatedInput !== undefined;
  return {
    type: 'permission-decided',
    toolUseId: call.toolUseId,
    toolName: call.toolName,
    behavior: decision.behavior,
    decidedBy: by.decidedBy,
    ...(by.decidedBy === 'preset' ? { preset: by.preset } : {}),
    ...(by.decidedBy === 'rules' ? { rule: { list: by.rule.list, pattern: by.rule.pattern } } : {}),
    ...(by.decidedBy === 'person' && by.identity ? { identity: by.identity } : {}),
    ...('permissionRequestId' in by ? { permissionRequestId: by.permissionRequestId } : {}),
    ...(message !== undefined ? { message } : {}),
    editedInput: edited,
    ...(interrupt ? { interrupt: true as const } : {}),
    ...bindingFields('binding' in by ? by.binding : undefined),
  };
}

function bindingFields(binding: PersonBinding | undefined): PersonBinding {
  if (!binding) return {};
  return {
    ...(binding.digest !== undefined ? { digest: binding.digest } : {}),
    ...(binding.bound !== undefined ? { bound: binding.bound } : {}),
    ...(binding.updatedInputDigest !== undefined
      ? { updatedInputDigest: binding.updatedInputDigest }
      : {}),
  };
}
