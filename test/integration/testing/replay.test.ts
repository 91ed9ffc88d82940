/**
 * Every committed history replays against the current workflow code: a workflow change
 * that breaks determinism for recorded sessions fails here (Worker.runReplayHistories).
 * Sub-agents' histories are fixtures of their own (a child is a `sessionWorkflow` too).
 * Record new fixtures with `npx tsx scripts/record-histories.ts`; CONTRIBUTING.md says when
 * a change needs a patch instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../../../src/worker/workflow-code.js';
import { WORKFLOW_PATCHES } from '../../../workflows/patches.js';

const dir = fileURLToPath(new URL('../../fixtures/histories/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
/** The history in `file`, read for each check. */
const historyOf = (file: string) =>
  historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));

describe('recorded histories', () => {
  it('has fixtures to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
    // Sub-agents' histories among them (scripts/record-subagent-histories.ts).
    expect(files.filter((f) => /^subagent-.*-child\d+\.json$/.test(f)).length).toBeGreaterThan(0);
  });

  it.each(files)('%s replays deterministically against the current workflow code', async (file) => {
    const history = historyOf(file);
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [
      { workflowId: file, history },
    ]);
    for await (const result of results) {
      expect(result.error, `${file}: ${String(result.error)}`).toBeUndefined();
    }
  });

  // A sub-agent is a `sessionWorkflow` of its own: its history replays like its parent's,
  // and each child a parent fixture started is a fixture too (`<parent>-child<N>.json`).
  it.each(files)('%s has a fixture for each sub-agent it started', (file) => {
    const started = (historyOf(file).events ?? []).filter(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes,
    );
    const children = started.map((_, i) => file.replace(/\.json$/, `-child${i + 1}.json`));
    expect(children.filter((child) => !files.includes(child))).toEqual([]);
  });

  // A history from code before the baseline (or a patch not in the table) carries patch
  // markers the code does not decide: its replay would fail, or pass by the old path unseen.
  it.each(files)('%s holds no patch marker but those of workflows/patches.ts', (file) => {
    const events = historyOf(file).events;
    const patches = (events ?? [])
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
      .map((e) => {
        const id = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
        return id ? (JSON.parse(Buffer.from(id).toString()) as { id: string }).id : '?';
      });
    const listed = new Set(WORKFLOW_PATCHES.map((p) => p.id));
    expect(patches.filter((id) => !listed.has(id))).toEqual([]);
  });
});
