/**
 * README, Sessions: a prompt over 1 MiB of JSON is refused with a ConfigError; TaskCompleted's
 * text fields are cut at 256 Ki characters with a marker; prompts of one session run one at a
 * time, in the order they arrive (from any client).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgent,
  createAgentClient,
  HookEvent,
  type Agent,
  type AgentClient,
  type AgentOptions,
  type HookCallback,
  type HookInput,
} from '../../../src/index.js';
import { MAX_PROMPT_BYTES } from '../../../src/client/send-response.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { gate, rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { recordedUpdates, waitForSendAccepted } from '../../helpers/history.js';

const MARKER_CHARS = 262_144;
const submitted: HookInput[] = [];
const completed: HookInput[] = [];
/** The model answers `answer:<n>` with n characters (TaskCompleted's resultSummary). */
const model = scriptedModel((request) => {
  const prompt = typeof request.prompt === 'string' ? request.prompt : '';
  const answer = /^answer:(\d+)$/.exec(prompt);
  return answer ? 'r'.repeat(Number(answer[1])) : `echo:${prompt.slice(0, 20)}`;
});
const record =
  (into: HookInput[]): HookCallback =>
  async (input) => {
    into.push(input);
    return { action: 'continue' };
  };

let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model,
    advanced: {
      hooks: {
        [HookEvent.UserPromptSubmit]: [record(submitted)],
        [HookEvent.TaskCompleted]: [record(completed)],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('prompts') },
    },
  });
});
afterAll(() => agent?.shutdown());

describe('the 1 MiB prompt limit', () => {
  it('a prompt of exactly MAX_PROMPT_BYTES of JSON runs; one byte more is a ConfigError and nothing is sent', async () => {
    expect(MAX_PROMPT_BYTES).toBe(1_048_576);
    const session = await agent.createSession();
    // A string's JSON is its UTF-8 bytes plus two quotes; 'é' is two bytes.
    const exact = 'é'.repeat((MAX_PROMPT_BYTES - 2) / 2);
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(MAX_PROMPT_BYTES);
    const before = submitted.length;
    const response = await session.send(exact);
    expect(response.status).toBe('completed');
    // It reached UserPromptSubmit whole.
    expect(submitted.slice(before).map((i) => i.userPrompt)).toEqual([exact]);

    const over = `${exact}a`;
    const error = await session.send(over, { requestId: `over-${randomUUID()}` }).catch((e) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((error as Error).message).toContain(
      `the prompt is ${MAX_PROMPT_BYTES + 1} bytes of JSON; the limit is ${MAX_PROMPT_BYTES}`,
    );
    // Refused before anything was sent: no hook ran, and the workflow recorded one send only.
    expect(submitted.length).toBe(before + 1);
    const client = await rawClient();
    try {
      const sends = (await recordedUpdates(client, session.workflowId)).filter(
        (u) => u.name === 'send',
      );
      expect(sends.map((u) => u.updateId)).toEqual([response.requestId]);
    } finally {
      await client.connection.close();
    }
    expect(await session.close()).toEqual({ closedNow: true, sessionEndRan: false });
  }, 60_000);
});

describe("TaskCompleted's text fields", () => {
  const cut = (text: string) =>
    `${text.slice(0, MARKER_CHARS)}\n[... truncated: ${text.length} characters in all, first ${MARKER_CHARS} shown ...]`;

  it('taskDescription and resultSummary of 256 Ki characters are whole; one character more is cut with a marker', async () => {
    const session = await agent.createSession();
    for (const prompt of ['d'.repeat(MARKER_CHARS), 'd'.repeat(MARKER_CHARS + 1)]) {
      const before = completed.length;
      const response = await session.send(prompt);
      expect(response.status).toBe('completed');
      const [input] = completed.slice(before);
      expect(input?.taskId).toBe(response.requestId);
      expect(input?.taskDescription).toBe(prompt.length > MARKER_CHARS ? cut(prompt) : prompt);
    }
    for (const answer of [MARKER_CHARS, MARKER_CHARS + 1]) {
      const before = completed.length;
      const response = await session.send(`answer:${answer}`);
      const text = 'r'.repeat(answer);
      expect(response.text()).toBe(text);
      const [input] = completed.slice(before);
      expect(input?.resultSummary).toBe(answer > MARKER_CHARS ? cut(text) : text);
    }
    await session.close();
  }, 60_000);
});

describe('prompt order', () => {
  let other: AgentClient | undefined;
  afterAll(() => other?.close());

  it('prompts sent from two clients run one at a time, in the order the session received them', async () => {
    const release = gate();
    const entered = gate();
    const events: string[] = [];
    const options: AgentOptions = {
      model,
      advanced: {
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async (input) => {
              events.push(`start ${String(input.userPrompt)}`);
              if (input.userPrompt === 'p1') {
                entered.open();
                await release.opened;
              }
              return { action: 'continue' };
            },
          ],
          [HookEvent.TaskCompleted]: [
            async (input) => {
              events.push(`end ${String(input.taskDescription)}`);
              return { action: 'continue' };
            },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('prompt-order') },
      },
    };
    const ordered = await createAgent(options);
    try {
      other = await createAgentClient(options);
      const mine = await ordered.createSession();
      const theirs = await other.session(mine.id);
      const first = mine.send('p1');
      await entered.opened;
      // Each send is queued in the workflow before the next one is made, alternating clients.
      const queued: Array<Promise<unknown>> = [];
      for (const [n, session] of [
        [2, theirs],
        [3, mine],
        [4, theirs],
      ] as const) {
        const requestId = `p${n}-${randomUUID()}`;
        queued.push(session.send(`p${n}`, { requestId }));
        await waitForSendAccepted(mine.workflowId, requestId);
      }
      // Only the first has started; the rest wait their turn.
      expect(events).toEqual(['start p1']);
      release.open();
      const responses = (await Promise.all([first, ...queued])) as Array<{ text(): string }>;
      expect(responses.map((r) => r.text())).toEqual(['echo:p1', 'echo:p2', 'echo:p3', 'echo:p4']);
      expect(events).toEqual([
        'start p1',
        'end p1',
        'start p2',
        'end p2',
        'start p3',
        'end p3',
        'start p4',
        'end p4',
      ]);
      await mine.close();
    } finally {
      await ordered.shutdown();
    }
  }, 60_000);
});
