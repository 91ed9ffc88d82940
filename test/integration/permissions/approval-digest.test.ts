/**
 * Approvals bound to the call (issue 37, item 1), on the test run's Temporal server: an
 * approval names the approval digest of the call the person was shown; one for a call that
 * changed since is refused, naming what changed, and the tool never runs with the changed
 * input on it; an answer is consumed once, a retried Update included; the CLI's stale digest
 * exits 1.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { shortDigest } from '../../../src/common/approval-digest.js';
import { Updates } from '../../../src/common/messages.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import {
  createAgent,
  defineTool,
  HookEvent,
  type Agent,
  type PermissionDecidedEvent,
  type PendingPermission,
  type Session,
} from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { runCli } from '../../helpers/cli-process.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const executed: string[] = [];
/** What the PermissionRequest hook makes the call's input, when set. */
let hookWord: string | undefined;
beforeEach(() => {
  executed.length = 0;
  hookWord = undefined;
});

const Echo = defineTool({
  name: 'Echo',
  description: 'echo',
  kind: 'write',
  inputSchema: z.object({ word: z.string() }),
  execute: async ({ word }) => (executed.push(word), `echo ${word}`),
});

let agent: Agent | undefined;
let strict: Agent | undefined;
afterAll(async () => {
  await agent?.shutdown();
  await strict?.shutdown();
});

/** An agent whose model calls `Echo {word: 'A'}` as `call-1` on each prompt, asked of a person. */
async function askingAgent(): Promise<Agent> {
  agent ??= await createAgent({
    model: scriptedModel((request) =>
      request.step === 0 ? toolCall('Echo', { word: 'A' }, 'call-1') : 'done',
    ),
    tools: [Echo],
    advanced: {
      hooks: {
        [HookEvent.PermissionRequest]: [
          async () =>
            hookWord !== undefined
              ? { action: 'continue' as const, modifiedInput: { word: hookWord } }
              : { action: 'continue' as const },
        ],
      },
      permission: 'default',
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('approval-digest') },
    },
  });
  return agent;
}

/** The session's timeline, from its history. */
async function timelineOf(session: Session) {
  const raw = await rawClient();
  try {
    return timelineFromHistory(await raw.workflow.getHandle(session.workflowId).fetchHistory());
  } finally {
    await raw.connection.close();
  }
}

/** Send `prompt` and wait for its ask; the send's permission-decided events, as they come. */
async function sendAndAsk(session: Session, prompt = 'go') {
  const response = session.send(prompt);
  const decided: PermissionDecidedEvent[] = [];
  const drained = (async () => {
    for await (const event of response.stream()) {
      if (event.type === 'permission-decided' && event.decidedBy !== 'preset') decided.push(event);
    }
  })().catch(() => undefined);
  let ask: PendingPermission | undefined;
  await waitFor(
    async () => {
      ask = (await session.pendingPermissions())[0];
      return ask !== undefined;
    },
    20_000,
    'the ask',
  );
  return { response, ask: ask!, decided, drained };
}

describe('approvals bound to the call', () => {
  it('an approval of input A is refused once a PermissionRequest hook makes the re-asked call B; the tool never runs with B on it', async () => {
    const session = await (await askingAgent()).createSession();
    const first = await sendAndAsk(session);
    expect(first.ask.input).toEqual({ word: 'A' });
    const digestA = first.ask.digest!;
    expect(digestA).toMatch(/^[0-9a-f]{64}$/);
    // The person was shown A; the prompt ends before they answer, and the call comes back
    // (same toolUseId) with the hook's edit: B.
    await session.abort();
    await first.response.catch(() => undefined);
    hookWord = 'B';
    const second = await sendAndAsk(session);
    expect(second.ask).toMatchObject({ toolUseId: 'call-1', input: { word: 'B' } });
    const digestB = second.ask.digest!;
    expect(digestB).not.toBe(digestA);

    // A's approval, to A's request: not pending; the call waits again, and what changed is named.
    await expect(session.approve(first.ask.requestId, { digest: digestA })).rejects.toMatchObject({
      code: 'PERMISSION_REQUEST_NOT_FOUND',
      message: expect.stringContaining(
        `the call now waits as request '${second.ask.requestId}' with approval digest ${shortDigest(digestB)}; the input (keys: word) changed`,
      ),
    });
    // A's approval, to the request of B (whole digest, or its 12 digits as people see it).
    for (const digest of [digestA, shortDigest(digestA)]) {
      await expect(session.approve(second.ask.requestId, { digest })).rejects.toMatchObject({
        code: 'PERMISSION_DIGEST_MISMATCH',
        message: expect.stringMatching(
          new RegExp(
            `has approval digest ${shortDigest(digestB)}, not ${shortDigest(digestA)}: since the ` +
              'call the answer names was asked, the input \\(keys: word\\) changed; nothing was decided',
          ),
        ),
      });
    }
    // A digest no ask of the session has.
    await expect(session.deny(second.ask.requestId, { digest: 'f'.repeat(64) })).rejects.toThrow(
      /the answer names no call this session asked about/,
    );
    expect(executed).toEqual([]);
    expect((await session.pendingPermissions()).map((r) => r.requestId)).toEqual([
      second.ask.requestId,
    ]);

    // B's own digest runs B, once, and the answer is recorded bound.
    await session.approve(second.ask.requestId, { digest: digestB });
    const done = await second.response;
    await second.drained;
    expect(done.toolCalls.map((c) => [c.status, c.toolInput])).toEqual([
      ['success', { word: 'B' }],
    ]);
    expect(executed).toEqual(['B']);
    expect(second.decided.find((e) => e.decidedBy === 'person')).toMatchObject({
      behavior: 'allow',
      digest: digestB,
      bound: true,
      editedInput: false,
    });
    await session.close();
  });

  it('a retried approval Update (same update id) applies once: the tool runs once, and a later answer is refused', async () => {
    const session = await (await askingAgent()).createSession();
    const { response, ask } = await sendAndAsk(session);
    const raw = await rawClient();
    try {
      const handle = raw.workflow.getHandle(session.workflowId);
      const update = {
        args: [
          { requestId: ask.requestId, answer: { behavior: 'allow' as const }, digest: ask.digest },
        ] as const,
        updateId: `retried-${ask.requestId}`,
      };
      const firstTry = await handle.executeUpdate(Updates.decidePermission, {
        ...update,
        args: [...update.args],
      });
      const retried = await handle.executeUpdate(Updates.decidePermission, {
        ...update,
        args: [...update.args],
      });
      expect([firstTry, retried]).toEqual([{ decided: true }, { decided: true }]);
      await response;
      // The same Update once more after the tool ran: still the first's result, nothing new.
      await expect(
        handle.executeUpdate(Updates.decidePermission, { ...update, args: [...update.args] }),
      ).resolves.toEqual({ decided: true });
      // Another Update with the same answer and digest: the ask was consumed.
      await expect(session.approve(ask.requestId, { digest: ask.digest! })).rejects.toMatchObject({
        code: 'PERMISSION_REQUEST_NOT_FOUND',
      });
      expect(executed).toEqual(['A']);
      const history = await handle.fetchHistory();
      const answers = (history.events ?? []).filter(
        (e) =>
          e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ===
          'decidePermission',
      );
      expect(answers).toHaveLength(1);
      const timeline = timelineFromHistory(history);
      expect(timeline.toolCalls[0]?.permission?.ask).toMatchObject({
        outcome: 'approved',
        digest: ask.digest,
        bound: true,
      });
    } finally {
      await raw.connection.close();
    }
    await session.close();
  });

  it('an answer without a digest is accepted unbound; an edited approval records both digests and who, in the stream and the timeline', async () => {
    const first = await (await askingAgent()).createSession();
    const unbound = await sendAndAsk(first, 'one');
    await first.approve(unbound.ask.requestId);
    await unbound.response;
    await unbound.drained;
    expect(unbound.decided.find((e) => e.decidedBy === 'person')).toMatchObject({
      digest: unbound.ask.digest,
      bound: false,
    });
    expect((await timelineOf(first)).toolCalls[0]?.permission?.ask).toMatchObject({
      outcome: 'approved',
      digest: unbound.ask.digest,
      bound: false,
    });
    await first.close();

    // One session a call: the timeline files a call by its toolUseId, the same on each prompt.
    const second = await agent!.createSession();
    const edited = await sendAndAsk(second, 'two');
    await second.approve(edited.ask.requestId, {
      digest: edited.ask.digest!,
      updatedInput: { word: 'C' },
    });
    await edited.response;
    await edited.drained;
    const event = edited.decided.find((e) => e.decidedBy === 'person')!;
    expect(event).toMatchObject({
      behavior: 'allow',
      editedInput: true,
      digest: edited.ask.digest,
      bound: true,
      identity: expect.any(String),
      updatedInputDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(event.updatedInputDigest).not.toBe(edited.ask.digest);
    expect((await timelineOf(second)).toolCalls[0]?.permission?.ask).toMatchObject({
      outcome: 'approved',
      by: event.identity,
      digest: edited.ask.digest,
      bound: true,
      updatedInput: { word: 'C' },
      updatedInputDigest: event.updatedInputDigest,
    });
    expect(executed).toEqual(['A', 'C']);
    await second.close();
  });

  it('the CLI: pending shows the digest; approve with a stale --digest exits 1 naming the change, then approve sends the digest it read', async () => {
    const session = await (await askingAgent()).createSession();
    const first = await sendAndAsk(session);
    await session.abort();
    await first.response.catch(() => undefined);
    hookWord = 'B';
    const second = await sendAndAsk(session);

    const table = await runCli(['pending', session.id]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^REQUEST +DIGEST +TOOL /);
    expect(table.stdout).toContain(`${second.ask.requestId}  ${shortDigest(second.ask.digest!)} `);

    const stale = await runCli([
      'approve',
      session.id,
      second.ask.requestId,
      '--digest',
      shortDigest(first.ask.digest!),
    ]);
    expect(stale.code, stale.stderr).toBe(1);
    expect(stale.stdout).toBe('');
    expect(stale.stderr).toMatch(
      /^durable-agent: .*not [0-9a-f]{12}: since the call the answer names was asked, the input \(keys: word\) changed; nothing was decided\n$/,
    );
    const bad = await runCli(['approve', session.id, second.ask.requestId, '--digest', 'xyz']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--digest must be 12 to 64 lowercase hex digits/);
    expect(executed).toEqual([]);

    const approved = await runCli(['approve', session.id, second.ask.requestId]);
    expect(approved.code, approved.stderr).toBe(0);
    await second.response;
    await second.drained;
    expect(executed).toEqual(['B']);
    expect(second.decided.find((e) => e.decidedBy === 'person')).toMatchObject({
      digest: second.ask.digest,
      bound: true,
    });
    await session.close();

    // inspect names the digest an answer was bound to (a session of one ask: the timeline
    // files a call by its toolUseId, which the re-ask above reused).
    hookWord = undefined;
    const plain = await agent!.createSession();
    const once = await sendAndAsk(plain);
    const viaCli = await runCli(['approve', plain.id, once.ask.requestId]);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    await once.response;
    const inspect = await runCli(['inspect', plain.id]);
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(inspect.stdout).toContain(
      `(request ${once.ask.requestId}, digest ${shortDigest(once.ask.digest!)})`,
    );
    await plain.close();
  });

  it('requireBoundApprovals: an answer without a digest is refused, naming what to pass; a bound one runs the tool', async () => {
    strict ??= await createAgent({
      model: scriptedModel((request) =>
        request.step === 0 ? toolCall('Echo', { word: 'A' }, 'call-1') : 'done',
      ),
      tools: [Echo],
      advanced: {
        permission: 'default',
        requireBoundApprovals: true,
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('approval-strict') },
      },
    });
    const session = await strict.createSession();
    const { response, ask } = await sendAndAsk(session);
    for (const unbound of [
      () => session.approve(ask.requestId),
      () => session.deny(ask.requestId),
    ]) {
      await expect(unbound()).rejects.toMatchObject({
        code: 'PERMISSION_DIGEST_REQUIRED',
        message: expect.stringMatching(
          /takes only an answer bound to its call \(requireBoundApprovals\): pass the approval digest .*; nothing was decided$/,
        ),
      });
    }
    expect((await session.pendingPermissions()).map((r) => r.requestId)).toEqual([ask.requestId]);
    await session.approve(ask.requestId, { digest: ask.digest! });
    await response;
    expect(executed).toEqual(['A']);
    await session.close();
  });
});
