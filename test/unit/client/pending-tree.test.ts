/** Requests of a session and its sub-agents, and where an answer to one goes: pure and faked. */
import { QueryNotRegisteredError, type WorkflowClient } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { pendingTree, routeOfRequest } from '../../../src/client/pending-tree.js';
import type { ChildRunInfo } from '../../../src/common/messages.js';
import type { PendingPermission } from '../../../src/common/permission.js';

const UUID = '4f0c2d1e-7a8b-4c3d-9e0f-1a2b3c4d5e6f';

describe('routeOfRequest', () => {
  it("routes a sub-agent's request, at any depth, to its own session", () => {
    expect(routeOfRequest('demo', `demo/1-call_1#${UUID}`)).toEqual({
      sessionId: 'demo/1-call_1',
      workflowId: 'session-demo/1-call_1',
    });
    expect(routeOfRequest('demo', `demo/1-call_1/0-call_9#${UUID}`)).toEqual({
      sessionId: 'demo/1-call_1/0-call_9',
      workflowId: 'session-demo/1-call_1/0-call_9',
    });
    // Through a sub-agent, to its own sub-agent.
    expect(routeOfRequest('demo/1-call_1', `demo/1-call_1/0-call_9#${UUID}`)?.sessionId).toBe(
      'demo/1-call_1/0-call_9',
    );
  });

  it('leaves a plain id, and an id of the session itself, to the session', () => {
    expect(routeOfRequest('demo', UUID)).toBeUndefined();
    expect(routeOfRequest('demo/1-call_1', `demo/1-call_1#${UUID}`)).toBeUndefined();
    expect(routeOfRequest('demo', `#${UUID}`)).toBeUndefined();
  });

  it("never routes to a session that is not a descendant: another session's, a parent's", () => {
    expect(routeOfRequest('demo', `other/1-call_1#${UUID}`)).toBeUndefined();
    // A prefix of the id, not a parent.
    expect(routeOfRequest('demo', `demo-2/1-call_1#${UUID}`)).toBeUndefined();
    // A top session whose own id has a slash is not a sub-agent of `demo`.
    expect(routeOfRequest('demo', `demo/notes/1-call_1#${UUID}`)).toBeUndefined();
    // Up the tree: a sub-agent does not answer for its parent.
    expect(routeOfRequest('demo/1-call_1', `demo/2-call_2#${UUID}`)).toBeUndefined();
  });
});

/** A workflow client whose sessions answer the two queries from `sessions`. */
function fakeClient(
  sessions: Record<string, { pending: PendingPermission[]; children?: ChildRunInfo[] | 'old' }>,
  asked: string[] = [],
): WorkflowClient {
  return {
    getHandle: (workflowId: string) => ({
      workflowId,
      query: (query: { name: string }) => {
        asked.push(`${workflowId} ${query.name}`);
        const session = sessions[workflowId];
        if (!session) return Promise.reject(new Error(`no ${workflowId}`));
        if (query.name === 'pendingPermissions') return Promise.resolve(session.pending);
        if (session.children === 'old') {
          return Promise.reject(new QueryNotRegisteredError('no children query', 3));
        }
        return Promise.resolve(session.children ?? []);
      },
    }),
  } as unknown as WorkflowClient;
}

function request(requestId: string, askedAt: number): PendingPermission {
  return {
    requestId,
    toolUseId: `t-${askedAt}`,
    toolName: 'Write',
    toolKind: 'write',
    input: { file_path: 'notes.md' },
    affectedPaths: ['notes.md'],
    askedAt,
    deadline: askedAt + 1000,
  };
}

function child(sessionId: string, agentPath: string, status: ChildRunInfo['status']): ChildRunInfo {
  return {
    toolUseId: sessionId.split('-').pop()!,
    sessionId,
    workflowId: `session-${sessionId}`,
    agentPath,
    subagent: agentPath.split('/').pop()!,
    startedAt: 1,
    status,
  };
}

describe('pendingTree', () => {
  it("tags each request with the asking session and its path, sub-agents' included, oldest first", async () => {
    const client = fakeClient({
      'session-demo': {
        pending: [request('own', 30)],
        children: [
          child('demo/1-a', 'main/writer', 'running'),
          child('demo/1-b', 'main/done', 'completed'),
        ],
      },
      'session-demo/1-a': {
        pending: [request('demo/1-a#x', 10)],
        children: [child('demo/1-a/0-c', 'main/writer/checker', 'running')],
      },
      'session-demo/1-a/0-c': { pending: [request('demo/1-a/0-c#y', 20)] },
    });
    const found = await pendingTree(client, 'session-demo', 4);
    expect(found.map((r) => [r.requestId, r.sessionId, r.agentPath])).toEqual([
      ['demo/1-a#x', 'demo/1-a', 'main/writer'],
      ['demo/1-a/0-c#y', 'demo/1-a/0-c', 'main/writer/checker'],
      ['own', 'demo', 'main'],
    ]);
  });

  it('reads no deeper than depthLeft, and no finished sub-agent', async () => {
    const asked: string[] = [];
    const client = fakeClient(
      {
        'session-demo': {
          pending: [],
          children: [
            child('demo/1-a', 'main/writer', 'running'),
            child('demo/1-b', 'main/done', 'completed'),
          ],
        },
        'session-demo/1-a': {
          pending: [request('demo/1-a#x', 10)],
          children: [child('demo/1-a/0-c', 'main/writer/checker', 'running')],
        },
      },
      asked,
    );
    const found = await pendingTree(client, 'session-demo', 1, {
      root: { sessionId: 'demo', agentPath: 'main' },
    });
    expect(found.map((r) => r.requestId)).toEqual(['demo/1-a#x']);
    expect(asked.sort()).toEqual([
      'session-demo children',
      'session-demo pendingPermissions',
      'session-demo/1-a pendingPermissions',
    ]);
  });

  it('counts a session whose worker does not know the children query as having none', async () => {
    const client = fakeClient({
      'session-demo': { pending: [request('own', 1)], children: 'old' },
    });
    const found = await pendingTree(client, 'session-demo', 4);
    expect(found.map((r) => r.requestId)).toEqual(['own']);
  });
});
