/** The stages of an ask's wait (`advanced.approvals`): which are scheduled, in what order, when the next is due. */
import { describe, expect, it } from 'vitest';
import {
  nextStageAt,
  scheduledStages,
  stageOfTimerSummary,
  stageReached,
  stageTimerSummary,
} from '../../../src/common/approval-stages.js';

describe('approval stages', () => {
  it('schedules nothing without a policy (sessions without stages wait as before)', () => {
    expect(scheduledStages(undefined, 4000)).toEqual([]);
    expect(scheduledStages({}, 4000)).toEqual([]);
  });

  it('schedules the reminder, then the escalation, each from the ask', () => {
    expect(scheduledStages({ remindAfterMs: 1000, escalateAfterMs: 2000 }, 4000)).toEqual([
      { stage: 'remind', afterMs: 1000 },
      { stage: 'escalate', afterMs: 2000 },
    ]);
    expect(scheduledStages({ escalateAfterMs: 2000, escalateTo: 'ops' }, 4000)).toEqual([
      { stage: 'escalate', afterMs: 2000 },
    ]);
  });

  it("drops a stage at or past a shorter deadline (a sub-agent's)", () => {
    expect(scheduledStages({ remindAfterMs: 1000, escalateAfterMs: 2000 }, 2000)).toEqual([
      { stage: 'remind', afterMs: 1000 },
    ]);
    expect(scheduledStages({ remindAfterMs: 1000 }, 500)).toEqual([]);
  });

  it('says when the next stage is due: the next timed one, then the deadline', () => {
    const stages = scheduledStages({ remindAfterMs: 1000, escalateAfterMs: 2000 }, 4000);
    expect(nextStageAt(stages, 0, 10_000, 14_000)).toBe(11_000);
    expect(nextStageAt(stages, 1, 10_000, 14_000)).toBe(12_000);
    expect(nextStageAt(stages, 2, 10_000, 14_000)).toBe(14_000);
  });

  it('names the stage reached, and the timer of each stage so that inspect can tell them apart', () => {
    expect(stageReached('remind')).toBe('reminded');
    expect(stageReached('escalate')).toBe('escalated');
    expect(stageOfTimerSummary(stageTimerSummary('remind', 'Write a.txt'))).toBe('remind');
    expect(stageOfTimerSummary(stageTimerSummary('escalate', 'Write a.txt'))).toBe('escalate');
    expect(stageOfTimerSummary('approval deadline: Write a.txt')).toBeUndefined();
    expect(stageOfTimerSummary(undefined)).toBeUndefined();
  });
});
