/**
 * A session's status in listings (issue 31, item 5): the session's own search attribute while
 * its workflow runs, Temporal's execution status once it does not; the query `--status`
 * builds from it; the flag's values.
 */
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/args.js';
import { CliError } from '../../../src/cli/cli-error.js';
import { sessionListStatus, sessionStatusQuery } from '../../../src/client/session-status.js';
import { ConfigError } from '../../../src/common/errors.js';

describe('sessionListStatus', () => {
  it("is the session's own status while its workflow runs", () => {
    expect(sessionListStatus('RUNNING', 'awaiting_approval')).toBe('awaiting_approval');
    expect(sessionListStatus('RUNNING', undefined)).toBeUndefined();
  });

  it('is how Temporal ended it otherwise, whatever the attribute kept', () => {
    expect(sessionListStatus('TERMINATED', 'running')).toBe('terminated');
    expect(sessionListStatus('TIMED_OUT', 'awaiting_approval')).toBe('timed_out');
    expect(sessionListStatus('FAILED', 'running')).toBe('failed');
    expect(sessionListStatus('CANCELED', 'closed')).toBe('canceled');
    expect(sessionListStatus('CANCELLED', 'closed')).toBe('canceled');
    expect(sessionListStatus('CONTINUED_AS_NEW', 'running')).toBe('continued_as_new');
    expect(sessionListStatus('COMPLETED', 'closed')).toBe('closed');
  });
});

describe('sessionStatusQuery', () => {
  it('pairs a running status with ExecutionStatus Running, and an end status with ExecutionStatus alone', () => {
    expect(sessionStatusQuery('running')).toBe(
      "ExecutionStatus = 'Running' AND DurableAgentStatus = 'running'",
    );
    expect(sessionStatusQuery('awaiting_approval')).toBe(
      "ExecutionStatus = 'Running' AND DurableAgentStatus = 'awaiting_approval'",
    );
    expect(sessionStatusQuery('closed')).toBe(
      "(ExecutionStatus = 'Completed' OR (ExecutionStatus = 'Running' AND DurableAgentStatus = 'closed'))",
    );
    expect(sessionStatusQuery('terminated')).toBe("ExecutionStatus = 'Terminated'");
    expect(sessionStatusQuery('timed_out')).toBe("ExecutionStatus = 'TimedOut'");
  });

  it('refuses an unknown status, naming the known ones', () => {
    expect(() => sessionStatusQuery('dead' as never)).toThrow(ConfigError);
    expect(() => sessionStatusQuery("running' OR 'a'='a" as never)).toThrow(
      /status must be one of running, .*terminated.*, got 'running' OR 'a'='a'/,
    );
  });
});

describe('durable-agent sessions --status', () => {
  it('takes the end statuses, and names every value for another', () => {
    const parsed = parseCommandLine(['sessions', '--status', 'terminated'], {});
    expect(parsed.kind === 'command' && parsed.status).toBe('terminated');
    expect(() => parseCommandLine(['sessions', '--status', 'dead'], {})).toThrow(CliError);
    expect(() => parseCommandLine(['sessions', '--status', 'dead'], {})).toThrow(
      "--status must be one of running, awaiting_approval, cleaning_up, idle, closed, failed, canceled, terminated, timed_out, continued_as_new, got 'dead'",
    );
  });
});
