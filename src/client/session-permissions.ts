/**
 * A session's permission requests from the client side: listing those waiting for a person
 * in the session and the sub-agents it runs, and answering one in the session that asked,
 * for {@link Session.pendingPermissions}, {@link Session.approve} and {@link Session.deny}.
 *
 * @module
 */
import { Updates, type PermissionDecisionRequest } from '../common/messages.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import { whyNotDigest } from '../common/approval-digest.js';
import type { PendingPermission } from '../common/permission.js';
import { ROOT_AGENT_PATH } from '../common/subagents.js';
import { queryWithDeadline } from '../temporal/query.js';
import { PENDING_TREE_DEPTH, pendingTree, routeOfRequest } from './pending-tree.js';
import { describeExecution } from './session-reads.js';
import { sessionUpdate, type UpdateTarget } from './update-calls.js';

/** The requests waiting in the session and its sub-agents; see {@link Session.pendingPermissions}. */
export async function pendingPermissionsOf(target: UpdateTarget): Promise<PendingPermission[]> {
  const description = await describeExecution(target);
  if (description.status.name !== 'RUNNING') return [];
  const path = description.memo?.agentPath;
  return pendingTree(target.handle.client, target.handle.workflowId, PENDING_TREE_DEPTH, {
    root: {
      sessionId: target.sessionId,
      agentPath: typeof path === 'string' ? path : ROOT_AGENT_PATH,
    },
    query: (handle, query) => queryWithDeadline(handle, query),
  });
}

/**
 * Allow request `requestId`; see {@link Session.approve}.
 * @throws {TypeError} when `updatedInput` is not a plain object, before anything is sent.
 */
export async function approveRequest(
  target: UpdateTarget,
  requestId: string,
  options: { updatedInput?: JsonObject; digest?: string },
): Promise<void> {
  const edited: unknown = options.updatedInput;
  if (edited !== undefined && !isPlainObject(edited)) {
    throw new TypeError(
      `approve: updatedInput must be a plain object (the tool's input), got ${
        Array.isArray(edited) ? 'an array' : edited === null ? 'null' : typeof edited
      }`,
    );
  }
  const request: PermissionDecisionRequest = {
    requestId,
    answer: {
      behavior: 'allow',
      ...(options.updatedInput ? { updatedInput: options.updatedInput } : {}),
    },
    ...digestOf(options),
    ...answerIdentity(target),
  };
  await decide(target, request);
}

/** Deny request `requestId`; see {@link Session.deny}. */
export async function denyRequest(
  target: UpdateTarget,
  requestId: string,
  options: { message?: string; interrupt?: boolean; digest?: string },
): Promise<void> {
  const request: PermissionDecisionRequest = {
    requestId,
    answer: {
      behavior: 'deny',
      ...(options.message !== undefined ? { message: options.message } : {}),
      ...(options.interrupt ? { interrupt: true } : {}),
    },
    ...digestOf(options),
    ...answerIdentity(target),
  };
  await decide(target, request);
}

/**
 * Send a person's answer to the session that asked: this one, or the sub-agent whose
 * request id it is ({@link routeOfRequest}). The same answer retried runs once; a
 * different answer to the same request is refused.
 */
async function decide(target: UpdateTarget, request: PermissionDecisionRequest): Promise<void> {
  const route = routeOfRequest(target.sessionId, request.requestId);
  const to = route
    ? {
        sessionId: route.sessionId,
        handle: target.handle.client.getHandle(route.workflowId),
        calls: target.calls,
      }
    : target;
  await sessionUpdate(to, Updates.decidePermission, [request], {
    updateId: `decide-${request.requestId}-${answerKey(request.answer, request.digest)}`,
  });
}

/**
 * The digest an answer names, checked before anything is sent.
 * @throws {TypeError} when it is not 12 to 64 lowercase hex digits.
 */
function digestOf(options: { digest?: string }): { digest?: string } {
  if (options.digest === undefined) return {};
  const why = whyNotDigest(options.digest);
  if (why) throw new TypeError(`approve/deny: ${why}`);
  return { digest: options.digest };
}

/**
 * Who answers a permission request: this client's identity (the one Temporal records with
 * the Update), for the `permission-decided` event of the send's stream.
 */
function answerIdentity(target: UpdateTarget): { identity?: string } {
  const identity = target.handle.client.options.identity;
  return typeof identity === 'string' && identity !== '' ? { identity } : {};
}

/**
 * A short stable key of an answer and the digest it names, so update ids differ when they
 * do (a refused stale digest, then the right one, are two Updates).
 */
function answerKey(answer: PermissionDecisionRequest['answer'], digest?: string): string {
  const text = JSON.stringify(answer) + (digest ?? '');
  let hash = 5381;
  for (let i = 0; i < text.length; i++) hash = ((hash * 33) ^ text.charCodeAt(i)) >>> 0;
  return `${answer.behavior}-${hash.toString(36)}`;
}
