/**
 * The approval-stage fixture of scripts/record-histories.ts: a session whose agent has
 * `advanced.approvals` (a reminder, an escalation to a group, a `notify` callback). Its first
 * ask is reminded, escalated, then approved (bound to its digest); its second is reminded,
 * escalated and denied by its deadline. Saved as `approval-stages.json`: the stage timers, the
 * `notifyApproval` activities and the `permission-stage` stream markers of a staged wait.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { z } from 'zod';
import { createAgent, defineTool, type Session } from '../src/index.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';

/** What the recording needs from the script: the server, a client of it, where to write. */
export interface ApprovalRecording {
  address: string;
  client: Client;
  /** test/fixtures/histories/ */
  out: string;
  want: (name: string) => boolean;
}

/** Record the wanted approval-stage scenarios. */
export async function recordApprovalHistories(rec: ApprovalRecording): Promise<void> {
  if (!rec.want('approval-stages')) return;
  const note = defineTool({
    name: 'Note',
    description: 'Write a note',
    kind: 'write',
    inputSchema: z.object({ text: z.string() }),
    execute: async ({ text }) => `noted ${text}`,
  });
  const notified: string[] = [];
  const agent = await createAgent({
    name: 'record-approvals',
    model: scriptedModel((request) =>
      request.step === 0
        ? toolCall('Note', { text: `n${request.promptIndex}` }, `call-${request.promptIndex}`)
        : 'done',
    ),
    tools: [note],
    advanced: {
      permissionTimeoutMs: 3_000,
      approvals: {
        remindAfterMs: 500,
        escalateAfterMs: 1_000,
        escalateTo: 'ops',
        notify: (event) => void notified.push(`${event.stage} ${event.toolUseId}`),
      },
      temporal: { address: rec.address, taskQueue: 'record-histories-approvals' },
    },
  });
  try {
    const s = await agent.createSession({ sessionId: 'fixture-approval-stages' });
    const first = s.send('note one');
    const request = await escalated(s);
    await s.approve(request.requestId, { digest: request.digest! });
    if ((await first).text() !== 'done') throw new Error('first send: not done');
    const second = await s.send('note two');
    if (second.toolCalls[0]?.status !== 'denied') throw new Error('second send: not denied');
    while (notified.length < 5) await new Promise((r) => setTimeout(r, 50));
    await s.close();
    const history = await rec.client.workflow.getHandle(s.workflowId).fetchHistory();
    writeFileSync(join(rec.out, 'approval-stages.json'), historyToJSON(history) + '\n');
    console.log(`recorded approval-stages: ${history.events?.length ?? 0} events`);
  } finally {
    await agent.shutdown();
  }
}

/** The session's request once it is escalated. */
async function escalated(s: Session) {
  for (;;) {
    const [request] = await s.pendingPermissions();
    if (request?.stage === 'escalated') return request;
    await new Promise((r) => setTimeout(r, 20));
  }
}
