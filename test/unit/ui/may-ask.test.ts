/** Which sessions the inbox reads for waiting requests (`mayAsk`): pure, on made-up timelines. */
import { describe, expect, it } from 'vitest';
import type { HistoryTimeline, HistoryToolCall } from '../../../src/history/timeline-types.js';
import { mayAsk } from '../../../src/ui/reads.js';

function timeline(toolCalls: Partial<HistoryToolCall>[]): HistoryTimeline {
  return {
    status: 'RUNNING',
    dispatches: [],
    prompts: [],
    eventCount: 0,
    toolCalls: toolCalls.map((call, i) => ({
      toolUseId: `t${i}`,
      toolName: 'Task',
      dispatches: [],
      ...call,
    })),
  };
}

const running = { status: 'running' as const, truncated: false, offloaded: false };
const done = { status: 'success' as const, truncated: false, offloaded: false };

describe('mayAsk', () => {
  it('reads a session awaiting approval', () => {
    expect(mayAsk('awaiting_approval', timeline([]))).toBe(true);
  });

  it('reads a running session while a Task call has not ended (its sub-agent may ask)', () => {
    expect(mayAsk('running', timeline([{ result: running }]))).toBe(true);
    expect(mayAsk('running', timeline([{}]))).toBe(true);
  });

  it('skips a running session whose Task calls ended, or that has none', () => {
    expect(mayAsk('running', timeline([{ result: done }]))).toBe(false);
    expect(mayAsk('running', timeline([{ toolName: 'Write', result: running }]))).toBe(false);
  });

  it('skips a closed session', () => {
    expect(mayAsk('closed', timeline([{ result: running }]))).toBe(false);
  });
});
