/**
 * Whether a worker serves a session: the pollers Temporal lists on its task queue
 * (`DescribeTaskQueue`, workflow and activity), and how to say what is missing.
 *
 * Temporal lists a worker for 5 minutes after its last poll, and a live worker's poll lasts
 * up to a minute: a listed worker is not proof of a live one (the CLI asks the session
 * itself, bounded by `--timeout`), but an empty list is proof that none polls.
 *
 * @module
 */
import type { Client } from '@temporalio/client';

/** How long Temporal keeps listing a worker after its last poll, ms. */
const POLLER_LISTED_FOR_MS = 5 * 60_000;
/** A live worker's poll lasts up to this long; a last poll older than it means no worker polls. */
const POLL_LASTS_UP_TO_MS = 70_000;

const WORKFLOW_TASK_QUEUE = 1;
const ACTIVITY_TASK_QUEUE = 2;

/** The pollers of one task queue of one kind. */
export interface QueuePollers {
  taskQueue: string;
  kind: 'workflow' | 'activity';
  /** Workers listed (polled within the last 5 minutes). */
  count: number;
  /** How long ago the most recent poll began, ms (server clock against ours). */
  lastPollAgoMs?: number;
}

/** The pollers Temporal lists on `taskQueue` for `kind` tasks. */
export async function pollersOf(
  client: Client,
  taskQueue: string,
  kind: 'workflow' | 'activity',
): Promise<QueuePollers> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: kind === 'workflow' ? WORKFLOW_TASK_QUEUE : ACTIVITY_TASK_QUEUE,
  });
  const list = pollers ?? [];
  const last = Math.max(
    ...list.map((p) => {
      const t = p.lastAccessTime;
      return t ? Number(String(t.seconds ?? 0)) * 1000 + (t.nanos ?? 0) / 1e6 : 0;
    }),
  );
  return {
    taskQueue,
    kind,
    count: list.length,
    ...(list.length > 0 && last > 0 ? { lastPollAgoMs: Math.max(0, Date.now() - last) } : {}),
  };
}

/** What the pollers say, as a clause: `no worker has polled task queue 'q' ...`. */
export function describePollers(pollers: QueuePollers): string {
  const queue = `${pollers.kind} task queue '${pollers.taskQueue}'`;
  if (pollers.count === 0)
    return `no worker has polled ${queue} in the last ${POLLER_LISTED_FOR_MS / 60_000} minutes`;
  const ago = pollers.lastPollAgoMs;
  if (ago === undefined) return `a worker is listed on ${queue}`;
  if (ago > POLL_LASTS_UP_TO_MS) return `no worker has polled ${queue} for ${seconds(ago)}`;
  return `a worker polled ${queue} ${seconds(ago)} ago`;
}

/**
 * A duration for people: `0.4 ms`, `850 ms`, `2.5 s`, `12 s`, `2.5 min`; `-` when unknown
 * (undefined, NaN, infinite). Timeouts in messages and the timeline's durations alike.
 */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return seconds(ms);
  return `${Math.round(ms / 6000) / 10} min`;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms / 1000)} s`;
}
