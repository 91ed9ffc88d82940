/**
 * Sends of one client to one session run in the order `send()` was called, awaited or not
 * (issue 13, item 7), and still queue in the workflow where abort and close reach them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  HookEvent,
  SessionClosedError,
  type Agent,
  type HookInput,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { gate, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

let agent: Agent;
/** Prompts as UserPromptSubmit saw them, per session id. */
const submitted = new Map<string, string[]>();
/** While set, the prompt `hold` waits in UserPromptSubmit until it opens. */
let holdGate: { entered: () => void; opened: Promise<void> } | undefined;

beforeAll(async () => {
  agent = await createAgent({
    model: scriptedModel((request) => `echo:${String(request.prompt)}`, { keepRequests: 1 }),
    advanced: {
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input: HookInput) => {
            const prompt = String(input.userPrompt);
            const seen = submitted.get(input.sessionId) ?? [];
            seen.push(prompt);
            submitted.set(input.sessionId, seen);
            if (prompt === 'hold' && holdGate) {
              holdGate.entered();
              // Honours its signal, so an abort or close leaves no callback cleaning up.
              const aborted = new Promise((resolve) =>
                input.abortSignal!.addEventListener('abort', resolve, { once: true }),
              );
              await Promise.race([holdGate.opened, aborted]);
            }
            return { action: 'continue' };
          },
        ],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('send-order') },
    },
  });
});
afterAll(() => agent?.shutdown());

/** The prompts of the session's transcript, in order. */
async function transcriptPrompts(session: { conversation(): Promise<unknown[]> }) {
  const messages = (await session.conversation()) as Array<{ role: string; content?: unknown }>;
  return messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

const range = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('send() without awaiting', () => {
  it('60 sends issued at once run in call order (hook order, transcript, answers)', async () => {
    const session = await agent.createSession();
    const prompts = range(60, 'p');
    const responses = await Promise.all(prompts.map((p) => session.send(p)));
    expect(responses.map((r) => r.text())).toEqual(prompts.map((p) => `echo:${p}`));
    expect(submitted.get(session.id)).toEqual(prompts);
    expect(await transcriptPrompts(session)).toEqual(prompts);
    await session.close();
  }, 120_000);

  it('sends through two handles of one session in one client interleave in call order', async () => {
    const session = await agent.createSession();
    const attached = await agent.session(session.id);
    const prompts = range(40, 'q');
    const responses = await Promise.all(
      prompts.map((p, i) => (i % 2 === 0 ? session : attached).send(p)),
    );
    expect(responses.map((r) => r.text())).toEqual(prompts.map((p) => `echo:${p}`));
    expect(submitted.get(session.id)).toEqual(prompts);
    await session.close();
  }, 120_000);

  it('agent.send() calls made at once run in call order on the default session', async () => {
    // The order the prompts ran in, as the hook and the model saw them (each answer echoes its
    // own prompt whatever the order, so the answers alone cannot tell).
    const hooked: string[] = [];
    const modelled: string[] = [];
    const other = await createAgent({
      model: scriptedModel((request) => {
        modelled.push(String(request.prompt));
        return `echo:${String(request.prompt)}`;
      }),
      advanced: {
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async (input) => (hooked.push(String(input.userPrompt)), { action: 'continue' }),
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('order') },
      },
    });
    try {
      const prompts = range(60, 'd');
      const responses = await Promise.all(prompts.map((p) => other.send(p)));
      expect(responses.map((r) => r.text())).toEqual(prompts.map((p) => `echo:${p}`));
      expect(hooked).toEqual(prompts);
      expect(modelled).toEqual(prompts);
      expect(await other.close()).toMatchObject({ closedNow: true });
    } finally {
      await other.shutdown();
    }
  }, 120_000);
});

describe('abort() right after send()', () => {
  it('stops that send, though its Update may not have reached the workflow yet', async () => {
    // `hold` waits in UserPromptSubmit until its signal aborts: only the abort ends it.
    holdGate = { entered: () => undefined, opened: new Promise<void>(() => undefined) };
    try {
      const session = await agent.createSession();
      for (const reason of ['first', 'second']) {
        const call = session.send('hold');
        expect(await session.abort(new Error(reason))).toBe(true);
        const response = await call;
        expect(response.status).toBe('aborted');
        expect(response.abortReason).toMatchObject({ message: reason });
      }
      // A send issued after the abort is not aborted by it.
      const call = session.send('hold');
      const after = session.send('after');
      expect(await session.abort()).toBe(true);
      expect((await call).status).toBe('aborted');
      expect((await after).text()).toBe('echo:after');
      await session.close();
    } finally {
      holdGate = undefined;
    }
  }, 60_000);
});

describe('sends queued behind a running prompt', () => {
  it('a queued send whose signal aborts resolves aborted and never runs; the rest keep call order', async () => {
    const entered = gate();
    const release = gate();
    holdGate = { entered: entered.open, opened: release.opened };
    try {
      const session = await agent.createSession();
      const first = session.send('hold');
      await entered.opened;
      const controller = new AbortController();
      const queued = ['a', 'b', 'c', 'd', 'e'].map((p) =>
        session.send(p, p === 'c' ? { signal: controller.signal } : {}),
      );
      // Every queued send is in the workflow's queue (accepted), behind the held prompt.
      await waitFor(
        async () => (await queuedIn(session)) === 5,
        15_000,
        'five sends queued in the workflow',
      );
      controller.abort(new Error('caller of c gave up'));
      release.open();
      const results = await Promise.all([first, ...queued]);
      expect(results.map((r) => r.status)).toEqual([
        'completed',
        'completed',
        'completed',
        'aborted',
        'completed',
        'completed',
      ]);
      expect(results[3]!.abortReason).toMatchObject({ message: 'caller of c gave up' });
      expect(submitted.get(session.id)).toEqual(['hold', 'a', 'b', 'd', 'e']);
      await session.close();
    } finally {
      holdGate = undefined;
    }
  }, 60_000);

  it('close() reaches sends queued in call order: the running one aborts, the queued ones get SessionClosedError', async () => {
    const entered = gate();
    const release = gate();
    holdGate = { entered: entered.open, opened: release.opened };
    try {
      const session = await agent.createSession();
      const first = session.send('hold');
      await entered.opened;
      const queued = ['x', 'y', 'z'].map((p) => session.send(p).catch((e: unknown) => e));
      await waitFor(async () => (await queuedIn(session)) === 3, 15_000, 'three sends queued');
      expect(await session.close()).toMatchObject({ closedNow: true });
      expect((await first).status).toBe('aborted');
      for (const outcome of await Promise.all(queued)) {
        expect(outcome).toBeInstanceOf(SessionClosedError);
      }
      expect(submitted.get(session.id)).toEqual(['hold']);
    } finally {
      holdGate = undefined;
    }
  }, 60_000);
});

/** How many sends the session's workflow accepted and has not answered yet (from history). */
async function queuedIn(session: { workflowId: string }): Promise<number> {
  const handle = agent.client.temporal.workflow.getHandle(session.workflowId);
  const history = await handle.fetchHistory();
  const open = new Set<string>();
  for (const event of history.events ?? []) {
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted?.acceptedRequest?.input?.name === 'send') open.add(String(event.eventId));
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    if (completed) open.delete(String(completed.acceptedEventId));
  }
  // The held prompt is accepted and unanswered too.
  return open.size - 1;
}
