import { describe, expect, it } from 'vitest';
import {
  appendToContext,
  compactContext,
  contextOf,
  estimateTokens,
} from '../../../src/common/context.js';
import type { ConversationMessage } from '../../../src/common/conversation.js';

const user = (text: string): ConversationMessage => ({ role: 'user', content: text });
const assistant = (text: string, tool = false): ConversationMessage => ({
  role: 'assistant',
  text,
  toolCalls: tool ? [{ toolUseId: 't', toolName: 'Read', input: { path: 'a' } }] : [],
});
const toolResult = (model: string): ConversationMessage => ({
  role: 'tool',
  results: [{ toolUseId: 't', toolName: 'Read', status: 'success', model }],
});

describe('estimateTokens', () => {
  it('is JSON characters / 4, rounded up', () => {
    const message = user('abcd');
    expect(estimateTokens(message)).toBe(Math.ceil(JSON.stringify(message).length / 4));
  });
});

describe('compactContext', () => {
  it('keeps a conversation under the budget as it is', () => {
    const messages = [user('hi'), assistant('hello')];
    expect(compactContext(messages, 1000)).toEqual({ messages, compacted: 0 });
  });

  it('drops the oldest whole turns, tool calls with their results, and notes it on the first prompt', () => {
    const turn = (i: number) => [
      user(`q${i} ${'x'.repeat(400)}`),
      assistant('', true),
      toolResult('r'.repeat(400)),
      assistant(`a${i}`),
    ];
    const messages = [...turn(1), ...turn(2), ...turn(3)];
    const perTurn = turn(1).reduce((sum, m) => sum + estimateTokens(m), 0);
    const { messages: sent, compacted } = compactContext(messages, perTurn * 2 + 10);
    expect(compacted).toBe(4);
    expect(sent).toHaveLength(8);
    expect(sent[0]).toMatchObject({ role: 'user' });
    const first = (sent[0] as { content: string }).content;
    expect(first).toMatch(/^\[Context compacted: 4 earlier messages of this session are not shown/);
    expect(first).toContain('q2 ');
    // Every tool call still has its result right after it.
    expect(sent[1]).toMatchObject({ role: 'assistant' });
    expect(sent[2]).toMatchObject({ role: 'tool' });
  });

  it('never drops the newest turn; its long texts are cut to their share with a marker', () => {
    const messages = [user('p'.repeat(40_000)), assistant('a'.repeat(40_000))];
    const { messages: sent, compacted } = compactContext(messages, 1000);
    expect(compacted).toBe(0);
    expect(sent).toHaveLength(2);
    const prompt = (sent[0] as { content: string }).content;
    expect(prompt.startsWith('p'.repeat(2000))).toBe(true);
    expect(prompt).toContain('[... cut to fit the context budget: 40000 characters in all ...]');
    expect(prompt.length).toBeLessThan(2200);
  });

  it('a prompt of text parts gets the note as a first text part', () => {
    const parts: ConversationMessage = {
      role: 'user',
      content: [{ type: 'text', text: 'look' }],
    };
    const { messages: sent } = compactContext([user('x'.repeat(4000)), assistant('ok'), parts], 50);
    expect((sent[0] as { content: Array<{ text: string }> }).content[0]!.text).toMatch(
      /^\[Context compacted: 2 earlier/,
    );
  });
});

describe('appendToContext', () => {
  it('compacts as messages arrive, counting what left across calls', () => {
    const window = contextOf([]);
    for (let i = 0; i < 20; i++) {
      appendToContext(window, user(`q${i} ${'x'.repeat(200)}`), 200);
      appendToContext(window, assistant(`a${i}`), 200);
    }
    const total = window.tokens.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(200);
    expect(window.compacted + window.messages.length).toBe(40);
    expect(window.messages[0]).toMatchObject({ role: 'user' });
  });
});

describe('rule 5 keeps a trailing marker', () => {
  it('a cut tool output still names where the whole output is kept', () => {
    const marker = `\n[... output truncated: 200000 bytes total, first 65384 shown; full output: sha256:${'a'.repeat(64)} ...]`;
    const messages = [user('go'), toolResult('x'.repeat(65_384) + marker)];
    const { messages: sent } = compactContext(messages, 500);
    const model = (sent[1] as { results: Array<{ model: string }> }).results[0]!.model;
    expect(model).toContain('[... cut to fit the context budget:');
    expect(model.endsWith(marker)).toBe(true);
    expect(model.length).toBeLessThan(2000);
  });
});

describe('rule 5 on tool-call inputs and images', () => {
  it('a huge tool-call input is shown as the head of its JSON; an image as a short text', () => {
    const big: ConversationMessage = {
      role: 'assistant',
      text: '',
      toolCalls: [{ toolUseId: 'w', toolName: 'Write', input: { content: 'c'.repeat(200_000) } }],
    };
    const image: ConversationMessage = {
      role: 'user',
      content: [{ type: 'image', image: 'i'.repeat(400_000), mediaType: 'image/png' }],
    };
    const { messages: sent } = compactContext([image, big], 2_000);
    expect(JSON.stringify(sent).length).toBeLessThan(2_000 * 4 + 1_000);
    const call = (sent[1] as { toolCalls: Array<{ input: { _cut?: string } }> }).toolCalls[0]!;
    expect(call.input._cut).toMatch(/^\{"content":"ccc/);
    expect((sent[0] as { content: Array<{ text: string }> }).content[0]!.text).toMatch(
      /an image, left out/,
    );
  });
});
