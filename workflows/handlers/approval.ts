/**
 * The session's `decidePermission` Update: a person's answer to a pending permission
 * request (`ask`), which the waiting tool call picks up. The validator refuses (nothing is
 * recorded) an answer to a request that no longer waits or was answered already (an answer
 * is consumed once), and one naming another call's approval digest. Workflow code.
 *
 * @module
 */
import { isPlainObject } from '../../src/common/json.js';
import { Updates } from '../../src/common/messages.js';
import { toFailure } from '../session/failures.js';
import { notPendingMessage } from '../prompt/tool-permission.js';
import { digestRefusal } from '../prompt/approval-binding.js';
import { whyNotDigest } from '../../src/common/approval-digest.js';
import type { SessionState } from '../session/state.js';
import { sessionSetHandler } from '../session/update-count.js';

/** Register the `decidePermission` Update (and its validator). */
export function setApprovalHandler(state: SessionState): void {
  const setHandler = sessionSetHandler(state);
  const { input } = state;
  setHandler(
    Updates.decidePermission,
    (request) => {
      state.activitySeq++;
      const entry = state.pendingPermissions.get(request.requestId)!;
      entry.answer = request.answer;
      // Who answered, for the send's stream (Temporal does not hand the workflow the
      // Update's identity, so the client says it with the request).
      if (typeof request.identity === 'string' && request.identity !== '') {
        entry.answeredBy = request.identity;
      }
      entry.bound = typeof request.digest === 'string';
      return { decided: true as const };
    },
    {
      validator: (request) => {
        const entry = state.pendingPermissions.get(request?.requestId);
        if (!entry || entry.answer) {
          throw toFailure({
            name: 'AgentSdkError',
            code: 'PERMISSION_REQUEST_NOT_FOUND',
            message: notPendingMessage(state, request?.requestId, input.sessionId, request?.digest),
          });
        }
        const behavior = request.answer?.behavior;
        if (behavior !== 'allow' && behavior !== 'deny') {
          throw new TypeError(`decidePermission: answer.behavior must be 'allow' or 'deny'`);
        }
        // Refused before it is accepted (nothing recorded): a tool's input is a plain object.
        const edited: unknown = (request.answer as { updatedInput?: unknown }).updatedInput;
        if (edited !== undefined && !isPlainObject(edited)) {
          throw new TypeError('decidePermission: answer.updatedInput must be a plain object');
        }
        // Bound to the call: an answer naming another call's digest is refused, saying what
        // changed. One without a digest is accepted, unbound (`bound: false` on its event),
        // unless the agent requires bound approvals.
        if (request.digest === undefined && state.input.requireBoundApprovals) {
          throw toFailure({
            name: 'AgentSdkError',
            code: 'PERMISSION_DIGEST_REQUIRED',
            message: `Permission request '${request.requestId}' in session '${input.sessionId}' takes only an answer bound to its call (requireBoundApprovals): pass the approval digest the person was shown (session.approve(requestId, { digest }), approve --digest); nothing was decided`,
          });
        }
        if (request.digest !== undefined) {
          const why = whyNotDigest(request.digest);
          if (why) throw new TypeError(`decidePermission: ${why}`);
          const refused = digestRefusal(state, entry.request, request.digest);
          if (refused) {
            throw toFailure({
              name: 'AgentSdkError',
              code: 'PERMISSION_DIGEST_MISMATCH',
              message: refused,
            });
          }
        }
      },
    },
  );
}
