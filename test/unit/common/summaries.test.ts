/** The one-line texts of Temporal's own tools: activity and timer summaries, current details. */
import { describe, expect, it } from 'vitest';
import {
  approvalDetails,
  dispatchSummary,
  roughDuration,
  toolLabel,
} from '../../../src/common/summaries.js';

describe('summaries', () => {
  it('a tool call is named by its tool and the first field that says what it acts on', () => {
    expect(toolLabel('Write', { file_path: 'NOTES.md', content: 'x' })).toBe('Write NOTES.md');
    expect(toolLabel('Bash', { command: 'npm  test\n--watch' })).toBe('Bash npm test --watch');
    expect(toolLabel('Grep', { pattern: 'TODO', path: 'src' })).toBe('Grep src');
    expect(toolLabel('Custom', { n: 1 })).toBe('Custom');
    expect(toolLabel('Custom', undefined)).toBe('Custom');
  });

  it('a long target is cut to 60 characters with an ellipsis', () => {
    const label = toolLabel('Read', { file_path: 'a'.repeat(100) });
    expect(label).toBe(`Read ${'a'.repeat(60)}…`);
  });

  it('a dispatch: its event, tool and callback count', () => {
    expect(dispatchSummary('PreToolUse', 'Read', 2)).toBe('PreToolUse Read, 2 callbacks');
    expect(dispatchSummary('SessionStart', undefined, 1)).toBe('SessionStart, 1 callback');
  });

  it('an approval wait: the call, when it was asked (UTC), how long until the deadline', () => {
    const askedAt = Date.UTC(2026, 11, 1, 12, 1, 30);
    expect(approvalDetails('Write NOTES.md', askedAt, askedAt + 86_400_000)).toBe(
      'waiting for approval: Write NOTES.md, asked 12:01 UTC, deadline in 24 h',
    );
  });

  it('rough durations: seconds, minutes, hours, days', () => {
    expect(roughDuration(45_000)).toBe('45 s');
    expect(roughDuration(90 * 60_000)).toBe('90 min');
    expect(roughDuration(86_400_000)).toBe('24 h');
    expect(roughDuration(7 * 86_400_000)).toBe('7 d');
  });
});
