/**
 * The two sides of a benchmark that compares a send of ours with the same work written by
 * hand on Temporal (bench/subagents.ts, bench/mcp.ts): each a {@link Sender} whose session
 * is rotated every `rotateEvery` sends, and the size of a history.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Agent, SendResponse, Session } from '../src/index.js';

/** One side: it sends, rotates its session every so often, and names the session's workflow. */
export interface Sender {
  /** One send (what the series time). */
  send(prompt: string): Promise<void>;
  /** After every `rotateEvery` sends, close the session and open another (not timed). */
  rotate(): Promise<void>;
  close(): Promise<void>;
  /** The workflow id of the session now open. */
  workflowId(): string;
}

/**
 * Our side: sends to a session of `agent`; `check` throws when a response is not the
 * expected one.
 */
export async function oursSender(
  agent: Agent,
  rotateEvery: number,
  check: (response: SendResponse) => void,
): Promise<Sender> {
  let session: Session = await agent.createSession();
  let sent = 0;
  return {
    async send(prompt) {
      check(await session.send(prompt));
      sent++;
    },
    async rotate() {
      if (sent % rotateEvery !== 0) return;
      await session.close();
      session = await agent.createSession();
    },
    close: () => session.close().then(() => undefined),
    workflowId: () => session.workflowId,
  };
}

/** The hand-written side: a workflow started per session, sent one Update per send. */
export interface HandSession {
  client: Client;
  taskQueue: string;
  /** The hand-written worker's deployment version, when it runs with one (pinned to it). */
  deployment: WorkerDeploymentVersion | undefined;
  workflowType: string;
  /** Its workflow ids are `<prefix>-<uuid>`. */
  workflowIdPrefix: string;
  args: unknown[];
  /** The Update of one send, and the text it must answer. */
  update: string;
  expect: string;
  rotateEvery: number;
}

/** The hand-written side of `hand`; its workflow ends on the Update `stop`. */
export async function handSender(hand: HandSession): Promise<Sender> {
  const { client, deployment } = hand;
  const open = async (): Promise<WorkflowHandle> => {
    // A worker version is known to the server about a second after its worker starts.
    for (let tries = 0; ; tries++) {
      try {
        return await client.workflow.start(hand.workflowType, {
          taskQueue: hand.taskQueue,
          workflowId: `${hand.workflowIdPrefix}-${randomUUID()}`,
          args: hand.args,
          ...(deployment ? { versioningOverride: { pinnedTo: deployment } } : {}),
        });
      } catch (error) {
        if (!deployment || tries >= 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  let handle = await open();
  let sent = 0;
  return {
    async send(prompt) {
      const text = await handle.executeUpdate(hand.update, { args: [prompt] });
      if (text !== hand.expect) throw new Error(`hand send: ${String(text)}`);
      sent++;
    },
    async rotate() {
      if (sent % hand.rotateEvery !== 0) return;
      await handle.executeUpdate('stop');
      handle = await open();
    },
    close: () => handle.executeUpdate('stop').then(() => undefined),
    workflowId: () => handle.workflowId,
  };
}

/** One timed series of a benchmark: its sender, and each timed send's duration, ms. */
export interface SenderSeries {
  name: string;
  sender: Sender;
  times: number[];
}

/**
 * `warmup + n` rounds of one send on each series, timing the last `n` into its `times`; each
 * round starts with another series, so none always runs on a machine another just warmed.
 * Each send is followed by the sender's `rotate()`.
 */
export async function sendInterleaved(
  series: readonly SenderSeries[],
  n: number,
  warmup: number,
): Promise<void> {
  for (let i = 0; i < n + warmup; i++) {
    const order = series.map((_, k) => series[(i + k) % series.length]!);
    for (const s of order) {
      const t0 = performance.now();
      await s.sender.send(`p${i}`);
      if (i >= warmup) s.times.push(performance.now() - t0);
      await s.sender.rotate();
    }
  }
}

/** Events and bytes of `workflowId`'s history, and the last child workflow it started. */
export async function historySize(
  client: Client,
  workflowId: string,
): Promise<{ events: number; bytes: number; lastChild?: string }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const bytes = proto.temporal.api.history.v1.History.encode({ events }).finish().length;
  const started = events
    .map((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
    .filter((id): id is string => typeof id === 'string');
  return {
    events: events.length,
    bytes,
    ...(started.length ? { lastChild: started.at(-1)! } : {}),
  };
}
