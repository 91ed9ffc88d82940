/**
 * Two ways a prompt stops early, on a real server: `abort()` resolves only once the prompt
 * has stopped (a tool that takes its time to honour the cancel holds it), and a person's
 * `deny(requestId, { interrupt: true })` stops the prompt: the denied tool never runs, the
 * calls after it are cancelled, the model is not called again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, type Agent } from '../../../src/index.js';
import { scriptedModel, toolCall, toolCalls } from '../../../src/testing/index.js';
import {
  gate,
  pendingAsk,
  temporalAddress,
  uniqueTaskQueue,
  waitFor,
} from '../../helpers/common.js';

/** What the tools did, in order. */
const ran: string[] = [];
/** While set, Slow waits for its signal, then for `release` before it ends. */
let slow: { entered: () => void; release: Promise<void> } | undefined;
const slowTool = defineTool({
  name: 'Slow',
  description: 'Work until cancelled',
  kind: 'readonly',
  inputSchema: z.object({}),
  execute: async (_input, context) => {
    const held = slow;
    if (!held) return 'quick';
    held.entered();
    await new Promise((resolve) =>
      context.signal.addEventListener('abort', resolve, { once: true }),
    );
    ran.push('Slow saw the abort');
    await held.release;
    ran.push('Slow ended');
    throw new Error('cancelled');
  },
});
const recordTool = defineTool({
  name: 'Record',
  description: 'Record a value',
  kind: 'write',
  inputSchema: z.object({ value: z.string() }),
  execute: async ({ value }) => (ran.push(`Record ${value}`), `recorded ${value}`),
});
/** Prompts the model was called for (one entry per model step). */
const steps: string[] = [];

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model: scriptedModel((request) => {
      const prompt = String(request.prompt ?? '(tool results)');
      steps.push(prompt);
      if (request.messages.at(-1)?.role === 'tool') return 'after the tools';
      if (prompt === 'slow') return toolCall('Slow', {});
      if (prompt === 'record two')
        return toolCalls(['Record', { value: 'a' }], ['Record', { value: 'b' }]);
      return `echo:${prompt}`;
    }),
    tools: [slowTool, recordTool],
    advanced: {
      // Record asks a person; Slow runs.
      permission: (request) => (request.toolName === 'Record' ? 'ask' : 'allow'),
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('abort-interrupt') },
    },
  });
});
afterAll(() => agent?.shutdown());

describe('abort()', () => {
  it('resolves only once the prompt has stopped: a tool slow to honour its cancel holds it', async () => {
    const entered = gate();
    const release = gate();
    slow = { entered: entered.open, release: release.opened };
    ran.length = 0;
    try {
      const session = await agent.createSession();
      const sending = session.send('slow');
      await entered.opened;
      let abortDone = false;
      const aborting = session.abort(new Error('stop now')).then((ended) => {
        abortDone = true;
        return ended;
      });
      await waitFor(() => ran.includes('Slow saw the abort'), 15_000, 'the tool to see the abort');
      // The tool still runs: the prompt has not stopped, the session says so, abort() waits.
      for (let i = 0; i < 3; i++) expect((await session.describe()).busy).toBe(true);
      expect(abortDone).toBe(false);
      release.open();
      expect(await aborting).toBe(true);
      // Once abort() resolved, the tool had ended and the session is idle.
      expect(ran).toEqual(['Slow saw the abort', 'Slow ended']);
      expect((await session.describe()).busy).toBe(false);
      const response = await sending;
      expect(response.status).toBe('aborted');
      expect(response.abortReason).toMatchObject({ message: 'stop now' });
      expect((await session.send('next')).text()).toBe('echo:next');
      await session.close();
    } finally {
      release.open();
      slow = undefined;
    }
  }, 60_000);
});

describe('deny with interrupt', () => {
  it('the denied tool never runs, the next call is cancelled, the model is not called again; the session goes on', async () => {
    ran.length = 0;
    steps.length = 0;
    const session = await agent.createSession();
    const sending = session.send('record two');
    const requestId = await pendingAsk(session, 15_000, 'the first Record to ask');
    await session.deny(requestId, { message: 'not today', interrupt: true });
    const response = await sending;
    expect(response.status).toBe('interrupted');
    expect(response.toolCalls.map((c) => [c.toolName, c.status, c.reason])).toEqual([
      ['Record', 'denied', 'not today'],
      ['Record', 'cancelled', undefined],
    ]);
    expect(ran).toEqual([]);
    expect(steps).toEqual(['record two']);
    // Every call got a result in the conversation (the denial's message for the first).
    const results = (await session.conversation()).flatMap((m) =>
      m.role === 'tool' ? m.results : [],
    );
    expect(results).toHaveLength(2);
    expect(results[0]!.model).toContain('not today');
    expect(await session.pendingPermissions()).toEqual([]);
    expect((await session.send('next')).text()).toBe('echo:next');
    await session.close();
  }, 60_000);

  it('without interrupt the prompt goes on: the next call asks, and the model answers after', async () => {
    ran.length = 0;
    steps.length = 0;
    const session = await agent.createSession();
    const sending = session.send('record two');
    const first = await pendingAsk(session, 15_000, 'the first Record to ask');
    await session.deny(first, { message: 'not a' });
    await waitFor(
      async () => (await session.pendingPermissions())[0]?.requestId !== first,
      15_000,
      'the second Record to ask',
    );
    await session.approve((await session.pendingPermissions())[0]!.requestId);
    const response = await sending;
    expect(response.status).toBe('completed');
    expect(response.toolCalls.map((c) => c.status)).toEqual(['denied', 'success']);
    expect(ran).toEqual(['Record b']);
    expect(response.text()).toBe('after the tools');
    await session.close();
  }, 60_000);
});
