/**
 * The stages of `advanced.approvals` as `inspect` reads them from a recorded session
 * (test/fixtures/histories/approval-stages.json): an ask reminded, escalated, then approved; a
 * second reminded, escalated, then denied by its deadline.
 */
import { readFileSync } from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import { renderTimeline } from '../../../src/cli/render.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';

const history = historyFromJSON(
  JSON.parse(
    readFileSync(new URL('../../fixtures/histories/approval-stages.json', import.meta.url), 'utf8'),
  ),
);

describe('approval stages in the timeline', () => {
  const timeline = timelineFromHistory(history);
  const asks = timeline.toolCalls.map((call) => call.permission?.ask);

  it('gives each ask the stages it reached, in order, after its ask and before its end', () => {
    expect(asks.map((ask) => ask?.outcome)).toEqual(['approved', 'expired']);
    for (const ask of asks) {
      expect(ask!.stages?.map((s) => [s.stage, s.escalateTo])).toEqual([
        ['reminded', undefined],
        ['escalated', 'ops'],
      ]);
      const [reminded, escalated] = ask!.stages!;
      // Event times (the server's), so in order rather than to the millisecond.
      expect(reminded!.at).toBeGreaterThan(ask!.askedAt);
      expect(escalated!.at).toBeGreaterThan(reminded!.at);
      expect(escalated!.at).toBeLessThan(ask!.deadline);
    }
    // The approval's deadline is the wait's own, not a stage timer's.
    expect(asks[0]!.deadline - asks[0]!.askedAt).toBe(3_000);
  });

  it('inspect prints them between the ask and how it ended', () => {
    const text = renderTimeline(timeline);
    expect(text).toMatch(
      /asked \S+, reminded \S+, escalated to ops \S+, deadline \S+: approved by \S+ after /,
    );
    expect(text).toMatch(
      /asked \S+, reminded \S+, escalated to ops \S+, deadline \S+: no answer by the deadline: denied/,
    );
  });
});
