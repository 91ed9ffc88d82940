/** `durable-agent pending`'s table: the digest's 12 hex digits, a PATH column only when a sub-agent asks. Pure. */
import { describe, expect, it } from 'vitest';
import { pendingTable } from '../../../src/cli/commands/pending.js';
import type { PendingPermission } from '../../../src/common/permission.js';

const asked = Date.parse('2026-12-04T19:02:11Z');

function request(fields: Partial<PendingPermission>): PendingPermission {
  return {
    requestId: 'r',
    toolUseId: 'call_1',
    toolName: 'Write',
    toolKind: 'write',
    input: { file_path: 'notes.md' },
    affectedPaths: ['notes.md'],
    askedAt: asked,
    deadline: asked + 86_400_000,
    digest: 'ab12cd34ef56'.padEnd(64, '0'),
    ...fields,
  };
}

describe('pendingTable', () => {
  it("has no PATH column when every request is the session's own", () => {
    const table = pendingTable([request({ sessionId: 'demo', agentPath: 'main' })], 'demo');
    expect(table.split('\n')[0]).toMatch(/^REQUEST +DIGEST +TOOL +KIND +INPUT +ASKED +DEADLINE$/);
    // A request listed without the tags (as the query gives it) is the session's own.
    expect(pendingTable([request({})], 'demo')).not.toMatch(/PATH/);
  });

  it("names the sub-agent that asks in a PATH column, `main` for the session's own", () => {
    const table = pendingTable(
      [
        request({
          requestId: 'demo/1-call_1#u1',
          sessionId: 'demo/1-call_1',
          agentPath: 'main/writer',
        }),
        request({ requestId: 'u2', sessionId: 'demo', agentPath: 'main' }),
      ],
      'demo',
    );
    const [header, first, second] = table.split('\n');
    expect(header).toMatch(/^REQUEST +DIGEST +PATH +TOOL +KIND +INPUT +ASKED +DEADLINE$/);
    expect(first).toMatch(
      /^demo\/1-call_1#u1 +ab12cd34ef56 +main\/writer +Write +write +\{"file_path":"notes\.md"\} +2026-12-04T19:02:11Z +2026-12-05T19:02:11Z$/,
    );
    expect(second).toMatch(/^u2 +ab12cd34ef56 +main +Write /);
  });

  it('shows `-` for a request from a worker older than approval digests', () => {
    const { digest: _digest, ...old } = request({});
    expect(pendingTable([old], 'demo').split('\n')[1]).toMatch(/^r +- +Write /);
  });

  it('shows STAGE and NEXT STAGE only for an agent with approval stages', () => {
    expect(pendingTable([request({})], 'demo')).not.toMatch(/STAGE/);
    const table = pendingTable(
      [
        request({ requestId: 'r1', stage: 'reminded', nextStageAt: asked + 3_600_000 }),
        request({
          requestId: 'r2',
          stage: 'escalated',
          escalateTo: 'ops',
          nextStageAt: asked + 86_400_000,
        }),
      ],
      'demo',
    );
    const [header, first, second] = table.split('\n');
    expect(header).toMatch(/ +ASKED +STAGE +NEXT STAGE +DEADLINE$/);
    expect(first).toMatch(
      / 2026-12-04T19:02:11Z +reminded +2026-12-04T20:02:11Z +2026-12-05T19:02:11Z$/,
    );
    // The next stage is the deadline: its own column says when.
    expect(second).toMatch(/ 2026-12-04T19:02:11Z +escalated to ops +- +2026-12-05T19:02:11Z$/);
  });
});
