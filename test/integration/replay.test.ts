/**
 * Every committed history replays against the current workflow code: a workflow change
 * that breaks determinism for recorded sessions fails here (Worker.runReplayHistories).
 * Record new fixtures with `npx tsx scripts/record-histories.ts`.
 *
 * Two fixtures were made by hand, for the `stream-permission-events` patch (a person asked
 * right after the `describeToolCall` local activity): `person-asked.json`, recorded by the
 * code before the patch was decided at the run's start (its marker where the person was
 * asked), and `person-asked-query-between.json`, recorded by the current code and then cut
 * where sdk-core cuts a task when it answers a query while that local activity's resolution
 * is not yet handed to the workflow (the marker's task ends, the person is asked in the
 * next one: the shape of the CI failure of cli.test.ts, 'a worker that stopped').
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

describe('a person asked right after a local activity', () => {
  const history = historyFromJSON(
    JSON.parse(readFileSync(join(dir, 'person-asked-query-between.json'), 'utf8')),
  );
  const events = history.events ?? [];
  const text = (e: temporal.api.history.v1.IHistoryEvent) =>
    Object.values(e.markerRecordedEventAttributes?.details ?? {})
      .flatMap((p) => p.payloads ?? [])
      .map((p) => Buffer.from(p.data ?? []).toString())
      .join();

  it('the fixture asks in the task after the one of the describeToolCall marker', () => {
    const at = events.findIndex((e) => text(e).includes('"activity_type":"describeToolCall"'));
    expect(at).toBeGreaterThan(0);
    expect(events[at + 1]?.workflowTaskScheduledEventAttributes).toBeTruthy();
    // The patch is decided in the first task of the run, not where the person is asked.
    const patch = events.findIndex((e) => text(e).includes('stream-permission-events'));
    const firstCompleted = events.findIndex((e) => e.workflowTaskCompletedEventAttributes);
    expect(patch).toBeGreaterThan(firstCompleted);
    expect(
      events
        .slice(firstCompleted + 1, patch)
        .every(
          (e) => e.markerRecordedEventAttributes || e.upsertWorkflowSearchAttributesEventAttributes,
        ),
    ).toBe(true);
    expect(patch).toBeLessThan(
      events.findIndex((e, i) => i > firstCompleted && e.workflowTaskScheduledEventAttributes),
    );
  });

  // Recorded (with a slow pendingPermissions query under CPU load) by the code that decided
  // the patch where the person was asked: sdk-core ended the task after the describeToolCall
  // marker and the patch marker went to the next task. No workflow code replays it: a replay
  // asks the person in the first task, before it is told of the marker. It fails with the
  // CI's error, which is why the patch is now decided at the run's start.
  it('the history that failed in CI still fails, with its error', async () => {
    const file = fileURLToPath(
      new URL('../fixtures/nondeterministic/person-asked-marker-after-query.json', import.meta.url),
    );
    const recorded = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [
      { workflowId: 'person-asked-marker-after-query', history: recorded },
    ]);
    for await (const result of results) {
      expect(String(result.error)).toContain(
        'Non-deprecated patch marker encountered for change stream-permission-events, but there is no corresponding change command',
      );
    }
  });
});
