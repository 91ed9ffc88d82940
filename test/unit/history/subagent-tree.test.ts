/**
 * The walk of a session's sub-agent tree through timelines, shared by `inspect` and the
 * session page: which `Task` calls it goes down, how deep, in what order.
 */
import { describe, expect, it } from 'vitest';
import { walkSubagentTree } from '../../../src/history/subagent-tree.js';
import type { HistoryTimeline } from '../../../src/history/timeline-types.js';
import type { HistoryChildSession, HistoryToolCall } from '../../../src/history/tool-calls.js';

function timeline(...toolCalls: HistoryToolCall[]): HistoryTimeline {
  return { status: 'RUNNING', dispatches: [], toolCalls, prompts: [], eventCount: 0 };
}

function task(
  sessionId: string,
  status: HistoryChildSession['status'] = 'running',
  workflowId = `session-${sessionId}`,
): HistoryToolCall {
  const toolUseId = `use-${sessionId}`;
  const child = { sessionId, workflowId, agentPath: `main/${sessionId}`, subagent: 'w', status };
  return { toolUseId, toolName: 'Task', dispatches: [], child };
}

/** A tree of timelines by session id; `read` of an unknown one fails. */
function tree(timelines: Record<string, HistoryTimeline>) {
  const reads: string[] = [];
  const read = (child: HistoryChildSession): Promise<HistoryTimeline> => {
    reads.push(child.sessionId);
    const found = timelines[child.sessionId];
    return found ? Promise.resolve(found) : Promise.reject(new Error(`no ${child.sessionId}`));
  };
  return { reads, read };
}

describe('walkSubagentTree', () => {
  it('visits each started sub-agent under the call that started it, down to depthLeft levels', async () => {
    const root = timeline(task('a'), task('b'));
    const a = timeline(task('a1'));
    const a1 = timeline(task('a11'));
    const { reads, read } = tree({ a, b: timeline(), a1, a11: timeline() });
    const visits: string[] = [];
    await walkSubagentTree(root, 2, {
      read,
      visit: (parent, call, child, childTimeline) => {
        visits.push(`${parent === root ? 'root' : '?'}|${call.toolUseId}|${child.sessionId}`);
        expect(childTimeline.toolCalls).toBeDefined();
      },
    });
    expect(reads).toEqual(['a', 'a1', 'b']);
    expect(visits).toEqual(['root|use-a|a', '?|use-a1|a1', 'root|use-b|b']);
  });

  it('reads nothing at depth 0', async () => {
    const { reads, read } = tree({});
    await walkSubagentTree(timeline(task('a')), 0, { read, visit: () => undefined });
    expect(reads).toEqual([]);
  });

  it('skips calls without a sub-agent, sub-agents not started, and starts that name no workflow', async () => {
    const plain: HistoryToolCall = { toolUseId: 'u', toolName: 'Read', dispatches: [] };
    const root = timeline(plain, task('refused', 'not_started'), task('nameless', 'running', ''));
    const { reads, read } = tree({});
    await walkSubagentTree(root, 4, { read, visit: () => undefined });
    expect(reads).toEqual([]);
  });

  it('concurrent: starts every read of a level before any finishes', async () => {
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const walking = walkSubagentTree(timeline(task('a'), task('b')), 1, {
      read: async (child) => {
        started.push(child.sessionId);
        await gate;
        return timeline();
      },
      visit: () => undefined,
      concurrent: true,
    });
    await Promise.resolve();
    expect(started).toEqual(['a', 'b']);
    release();
    await walking;
  });

  it('a failed read ends the walk with its error', async () => {
    const { read } = tree({});
    await expect(
      walkSubagentTree(timeline(task('gone')), 1, { read, visit: () => undefined }),
    ).rejects.toThrow('no gone');
  });
});
