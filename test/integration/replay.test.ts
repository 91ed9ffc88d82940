/**
 * Every committed history replays against the current workflow code: a workflow change
 * that breaks determinism for recorded sessions fails here (Worker.runReplayHistories).
 * Record new fixtures with `npx tsx scripts/record-histories.ts`.
 *
 * test/fixtures/person-asked/ holds open sessions waiting on a person, for the
 * `stream-permission-events` patch (see `decideStreamOutboxPatch` in
 * workflows/stream-outbox.ts), recorded by a scratch script rather than record-histories.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import type { temporal } from '@temporalio/proto';
import { workflowBundle } from '../../src/worker/workflow-code.js';

const dir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('recorded histories', () => {
  it('has fixtures to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });

  it.each(files)('%s replays deterministically against the current workflow code', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [
      { workflowId: file, history },
    ]);
    for await (const result of results) {
      expect(result.error, `${file}: ${String(result.error)}`).toBeUndefined();
    }
  });
});

/** The error of replaying the history in `file` (under test/fixtures/), if any. */
async function replayError(file: string): Promise<unknown> {
  const path = fileURLToPath(new URL(`../fixtures/${file}`, import.meta.url));
  const history = historyFromJSON(JSON.parse(readFileSync(path, 'utf8')));
  let error: unknown;
  const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [
    { workflowId: file, history },
  ]);
  for await (const result of results) error = result.error;
  return error;
}

/** The text of a marker's payloads. */
function markerText(e: temporal.api.history.v1.IHistoryEvent): string {
  return Object.values(e.markerRecordedEventAttributes?.details ?? {})
    .flatMap((p) => p.payloads ?? [])
    .map((p) => Buffer.from(p.data ?? []).toString())
    .join();
}

describe('a person asked right after the describeToolCall local activity', () => {
  // Recorded by the code before the patch was decided at a run's start: its marker is where
  // the person was asked, in the task of the describeToolCall marker. The replay's `false` at
  // the start is not kept: the later call finds the marker.
  it('a history recorded before the patch was decided at the start replays', async () => {
    const error = await replayError('person-asked/recorded-before-start-patch.json');
    expect(error, String(error)).toBeUndefined();
  });

  // Recorded by the current code, then cut where sdk-core cuts a task when it answers a query
  // while the local activity's resolution is not yet handed to the workflow: the marker's
  // task ends, the person is asked in the next one (the shape of the history below).
  it('a task cut after the describeToolCall marker replays', async () => {
    const file = 'person-asked/query-between.json';
    const path = fileURLToPath(new URL(`../fixtures/${file}`, import.meta.url));
    const events = historyFromJSON(JSON.parse(readFileSync(path, 'utf8'))).events ?? [];
    const at = events.findIndex((e) =>
      markerText(e).includes('"activity_type":"describeToolCall"'),
    );
    expect(at).toBeGreaterThan(0);
    expect(events[at + 1]?.workflowTaskScheduledEventAttributes).toBeTruthy();
    // The patch marker is in the run's first task, not where the person is asked.
    const patch = events.findIndex((e) => markerText(e).includes('stream-permission-events'));
    const secondScheduled = events.findIndex(
      (e, i) => i > 1 && e.workflowTaskScheduledEventAttributes,
    );
    expect(patch).toBeGreaterThan(0);
    expect(patch).toBeLessThan(secondScheduled);
    const error = await replayError(file);
    expect(error, String(error)).toBeUndefined();
  });

  // Recorded (a slow pendingPermissions query, under CPU load) by the code that decided the
  // patch where the person was asked: sdk-core ended the task after the describeToolCall
  // marker and the patch marker went to the next task. No workflow code replays it: a replay
  // asks the person in the first task, before it is told of the marker. It fails with the
  // error of the CI run, which is why the patch is now decided at a run's start.
  it('the history of the CI failure still fails, with its error', async () => {
    const error = await replayError('person-asked/marker-after-query.nondeterministic.json');
    expect(String(error)).toContain(
      'Non-deprecated patch marker encountered for change stream-permission-events, but there is no corresponding change command',
    );
  });
});
