/**
 * Approvals bound to the call: the approval digest of each ask (`src/common/approval-digest.ts`),
 * computed in workflow code (state only: no command, no activity, no history event), and
 * the refusal of an answer naming another digest, saying what changed. Workflow code.
 *
 * @module
 */
import {
  approvalDigest,
  digestChanges,
  digestMatches,
  shortDigest,
  type ApprovalDigestParts,
} from '../../src/common/approval-digest.js';
import type { JsonObject } from '../../src/common/json.js';
import type { PendingPermission } from '../../src/common/permission.js';
import { toolLabel } from '../../src/common/summaries.js';
import type { SessionWorkflowInput } from '../../src/common/workflow-io.js';

/** The session state the binding reads and writes. */
export interface BindingState {
  input: SessionWorkflowInput;
  /**
   * The latest asks of this run by digest, oldest first, at most {@link ASKS_KEPT}: an answer
   * naming one of them is told what changed since (this run only).
   */
  askedCalls?: Map<string, ApprovalDigestParts>;
}

/** How many asks a run keeps to name what changed since one of them. */
const ASKS_KEPT = 16;

/** The call a person is asked about, as its digest is the hash of, at the session's version now. */
export function askedCall(
  state: BindingState,
  call: { toolUseId: string; toolName: string; input: JsonObject },
): ApprovalDigestParts {
  return {
    sessionId: state.input.sessionId,
    toolUseId: call.toolUseId,
    toolName: call.toolName,
    input: call.input,
    ...(state.input.version !== undefined ? { version: state.input.version } : {}),
    ...(state.input.fingerprint !== undefined ? { fingerprint: state.input.fingerprint } : {}),
  };
}

/** The digest of `parts`, kept (the newest {@link ASKS_KEPT}) to explain a stale answer. */
export function rememberAsk(state: BindingState, parts: ApprovalDigestParts): string {
  const digest = approvalDigest(parts);
  state.askedCalls ??= new Map();
  state.askedCalls.delete(digest);
  state.askedCalls.set(digest, parts);
  if (state.askedCalls.size > ASKS_KEPT) {
    state.askedCalls.delete(state.askedCalls.keys().next().value!);
  }
  return digest;
}

/**
 * Why an answer naming digest `given` does not answer `request` (whose digest is another),
 * one sentence naming what changed since the ask `given` names, or that it names none this
 * run remembers; `undefined` when `given` is the request's digest.
 */
export function digestRefusal(
  state: BindingState,
  request: PendingPermission,
  given: string,
): string | undefined {
  if (request.digest === undefined || digestMatches(given, request.digest)) return undefined;
  const head =
    `Permission request '${request.requestId}' (${toolLabel(request.toolName, request.input)}) ` +
    `in session '${state.input.sessionId}' has approval digest ${shortDigest(request.digest)}, ` +
    `not ${shortDigest(given)}: `;
  const asked = askedCallOf(state, given);
  if (!asked) {
    return `${head}the answer names no call this session asked about; nothing was decided`;
  }
  const changes = digestChanges(asked, askedCall(state, request));
  return `${head}since the call the answer names was asked, ${changes.join(' and ')} changed; nothing was decided`;
}

/**
 * For an answer to a request that no longer waits: when the call its digest names waits
 * again under another request, what changed, as a clause to add to the refusal.
 */
export function reaskedNote(
  state: BindingState,
  pending: Iterable<PendingPermission>,
  given: unknown,
): string {
  if (typeof given !== 'string') return '';
  const asked = askedCallOf(state, given);
  if (!asked) return '';
  for (const request of pending) {
    if (request.toolUseId !== asked.toolUseId || request.digest === undefined) continue;
    const changes = digestChanges(asked, askedCall(state, request));
    const what = changes.length ? `; ${changes.join(' and ')} changed` : '';
    return `; the call now waits as request '${request.requestId}' with approval digest ${shortDigest(request.digest)}${what}`;
  }
  return '';
}

/** The kept ask whose digest `given` names (whole or by its first 12 or more digits). */
function askedCallOf(state: BindingState, given: string): ApprovalDigestParts | undefined {
  for (const [digest, parts] of state.askedCalls ?? []) {
    if (digestMatches(given, digest)) return parts;
  }
  return undefined;
}
