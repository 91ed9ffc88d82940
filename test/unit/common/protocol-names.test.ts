/**
 * The session protocol's names: recorded histories and running sessions know the workflow,
 * its Updates and Queries and its activities by these strings, so the typed definitions must
 * keep them exactly.
 */
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities/index.js';
import { ActivityNames } from '../../../src/common/activity-io.js';
import { Queries, Updates } from '../../../src/common/messages.js';
import { SESSION_WORKFLOW } from '../../../src/common/workflow-io.js';
import { BudgetMessages, SHARED_BUDGET_WORKFLOW } from '../../../src/common/budget-messages.js';
import * as workflows from '../../../workflows/index.js';

const namesOf = (definitions: Record<string, { type: string; name: string }>) =>
  Object.fromEntries(Object.entries(definitions).map(([key, d]) => [key, `${d.type} ${d.name}`]));

describe('session protocol names', () => {
  it('each Update definition is an update under the name histories record', () => {
    expect(namesOf(Updates)).toEqual({
      ready: 'update ready',
      send: 'update send',
      abort: 'update abort',
      close: 'update close',
      handoff: 'update handoff',
      decidePermission: 'update decidePermission',
      upgrade: 'update upgrade',
      raiseBudget: 'update raiseBudget',
    });
  });

  it('each Query definition is a query under the name clients and activities ask by', () => {
    expect(namesOf(Queries)).toEqual({
      timeline: 'query timeline',
      describe: 'query describe',
      abortReason: 'query abortReason',
      subagentAbortReason: 'query subagentAbortReason',
      conversation: 'query conversation',
      conversationPage: 'query conversationPage',
      pendingPermissions: 'query pendingPermissions',
      children: 'query children',
      transcriptPage: 'query transcriptPage',
      archives: 'query archives',
      mcpTools: 'query mcpTools',
    });
  });

  it('the workflow bundle exports the session and shared budget workflows under their names', () => {
    expect(SESSION_WORKFLOW).toBe('sessionWorkflow');
    expect(SHARED_BUDGET_WORKFLOW).toBe('sharedBudgetWorkflow');
    expect(Object.keys(workflows).sort()).toEqual([SESSION_WORKFLOW, SHARED_BUDGET_WORKFLOW]);
  });

  it('the shared budget workflow keeps its message names', () => {
    expect(namesOf(BudgetMessages)).toEqual({
      leases: 'update leases',
      raise: 'update raiseShared',
      status: 'query sharedBudgetStatus',
    });
  });

  it('createActivities gives exactly the activities ActivityNames names', () => {
    const activities = createActivities({
      registry: {} as never,
      cleanupQueue: 'cleanup',
      heartbeatIntervalMs: 1000,
      payloadStore: {} as never,
    });
    expect(Object.keys(activities).sort()).toEqual(Object.values(ActivityNames).sort());
    expect(Object.values(ActivityNames).sort()).toEqual([
      'archiveRun',
      'awaitHookSettled',
      'checkPermission',
      'describeDefinition',
      'describeToolCall',
      'dispatchHook',
      'executeTool',
      'leaseSharedBudget',
      'listMcpTools',
      'modelStep',
      'notifyApproval',
      'publishStreamEvents',
    ]);
  });
});
