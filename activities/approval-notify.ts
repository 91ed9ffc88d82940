/**
 * The `notifyApproval` activity: a stage of a waiting `ask` (reminder, escalation, deadline)
 * calls the agent's `advanced.approvals.notify` on the worker. A callback that throws fails
 * the attempt, and Temporal retries it (`workflows/activity-options.ts`); the workflow logs a
 * failure after the last attempt and goes on (a notification never decides an approval).
 *
 * @module
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { NotifyApprovalInput } from '../src/common/activity-io.js';
import type { AgentRegistry } from '../src/definition/registry.js';

/** Build `notifyApproval` on `registry`. */
export function createApprovalActivities(deps: { registry: AgentRegistry }) {
  return {
    /**
     * Call the `notify` callback of the session's agent with the stage's event.
     * @throws what the callback throws (retried); a non-retryable `ApprovalNotifyMissing` when
     *   this worker's agent has no `notify` callback.
     */
    async notifyApproval(input: NotifyApprovalInput): Promise<void> {
      const agent = deps.registry.agent(input.agentName, input.version);
      const notify = agent.approvalNotify;
      if (!notify) {
        throw ApplicationFailure.create({
          type: 'ApprovalNotifyMissing',
          message: `This worker's agent '${input.agentName}' has no advanced.approvals.notify callback`,
          nonRetryable: true,
        });
      }
      const { version: _version, fingerprint: _fingerprint, ...event } = input;
      await notify({ ...event, attempt: Context.current().info.attempt });
    },
  };
}
