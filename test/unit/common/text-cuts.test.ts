/**
 * Every cut the SDK makes to a text, with astral characters (two UTF-16 units, four UTF-8
 * bytes) at every offset around the cut: the result never holds a lone surrogate, keeps its
 * bound, and is a prefix (or suffix) of the input as documented.
 */
import { describe, expect, it } from 'vitest';
import { boundOutput, MAX_MODEL_TEXT_CHARS } from '../../../activities/model-step.js';
import { truncate } from '../../../src/cli/render.js';
import { compactContext } from '../../../src/common/context.js';
import type { ConversationMessage } from '../../../src/common/conversation.js';
import {
  clipErrorText,
  HookError,
  MAX_ERROR_TEXT_CHARS,
  serializeError,
} from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import { clipText, validateHookOutput } from '../../../src/common/hook-rules.js';
import type { SendResult } from '../../../src/common/messages.js';
import { cutPrefix, cutSuffix, utf8PrefixLength } from '../../../src/common/text.js';
import { capOutput } from '../../../src/tools/output.js';
import { toFailure } from '../../../workflows/session/failures.js';
import { rememberSend } from '../../../workflows/session/rollover.js';
import type { SessionState } from '../../../workflows/session/state.js';

const ASTRAL = ['😀', '𝄞'] as const;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** No unpaired surrogate, by a regex and by the engine's own check (Node 20). */
function expectWellFormed(text: string): void {
  expect(LONE_SURROGATE.test(text), JSON.stringify(text.slice(-8))).toBe(false);
  expect((text as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
}

/**
 * Texts longer than `length` units with an astral character at every offset from
 * `cut - 6` to `cut + 6`, and texts made only of astral characters (shifted by 0 and 1
 * unit), so every cut position meets both halves of a pair.
 */
function* textsAround(cut: number, length = cut + 40): Generator<string> {
  for (const char of ASTRAL) {
    for (let at = Math.max(0, cut - 6); at <= cut + 6; at++) {
      yield 'a'.repeat(at) + char + 'b'.repeat(Math.max(1, length - at - 2));
    }
    for (const shift of [0, 1]) yield 'a'.repeat(shift) + char.repeat(Math.ceil(length / 2) + 1);
  }
}

/** `text` up to the marker line that starts with `marker`. */
function before(text: string, marker: string): string {
  const at = text.indexOf(marker);
  expect(at, `no marker ${marker}`).toBeGreaterThanOrEqual(0);
  return text.slice(0, at);
}

describe('cutPrefix and cutSuffix', () => {
  it('cutPrefix gives a well-formed prefix of at most the bound, one unit short at worst', () => {
    for (let max = 0; max <= 12; max++) {
      for (const text of textsAround(max, 16)) {
        const cut = cutPrefix(text, max);
        expectWellFormed(cut);
        expect(text.startsWith(cut)).toBe(true);
        expect(cut.length).toBeLessThanOrEqual(max);
        expect(cut.length).toBeGreaterThanOrEqual(max - 1);
      }
    }
  });

  it('cutSuffix gives a well-formed suffix of at most the bound, one unit short at worst', () => {
    for (let max = 0; max <= 12; max++) {
      for (const text of textsAround(16 - max, 16)) {
        const cut = cutSuffix(text, max);
        expectWellFormed(cut);
        expect(text.endsWith(cut)).toBe(true);
        expect(cut.length).toBeLessThanOrEqual(max);
        expect(cut.length).toBeGreaterThanOrEqual(max - 1);
      }
    }
  });

  it('text within the bound, an infinite bound and a negative one', () => {
    expect(cutPrefix('a😀', 3)).toBe('a😀');
    expect(cutPrefix('a😀', Infinity)).toBe('a😀');
    expect(cutPrefix('a😀', -1)).toBe('');
    expect(cutSuffix('😀a', 3)).toBe('😀a');
    expect(cutSuffix('😀a', -1)).toBe('');
  });
});

describe('utf8PrefixLength', () => {
  it('cuts UTF-8 bytes only between characters, at most the bound, at most 3 bytes short', () => {
    const text = 'a😀é€𝄞b中😀'.repeat(3);
    const bytes = Buffer.from(text, 'utf8');
    for (let limit = 0; limit <= bytes.length + 1; limit++) {
      const end = utf8PrefixLength(bytes, limit);
      const decoded = bytes.subarray(0, end).toString('utf8');
      expect(end).toBeLessThanOrEqual(limit);
      expect(end).toBeGreaterThan(limit - 4);
      expect(decoded).not.toContain('\uFFFD');
      expectWellFormed(decoded);
      expect(text.startsWith(decoded)).toBe(true);
    }
  });

  it('keeps its bound inside bytes that are not UTF-8', () => {
    const bytes = Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x41]);
    expect(utf8PrefixLength(bytes, 4)).toBe(4);
  });
});

describe('every cut of the SDK', () => {
  it('capOutput (tool outputs, hook modifiedOutput): within maxBytes, a well-formed head', () => {
    const text = 'x'.repeat(150) + '😀'.repeat(80) + 'y' + '𝄞'.repeat(80);
    for (let maxBytes = 120; maxBytes <= 400; maxBytes++) {
      const capped = capOutput(text, maxBytes, 'sha256:abc');
      expect(capped.truncated).toBe(true);
      expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(maxBytes);
      expectWellFormed(capped.text);
      const head = before(capped.text, '\n[... output truncated:');
      expect(text.startsWith(head)).toBe(true);
      expect(head).not.toContain('\uFFFD');
    }
  });

  it('clipText (TaskCompleted taskDescription and resultSummary): a well-formed head of at most maxChars', () => {
    const max = 50;
    for (const text of textsAround(max)) {
      const clipped = clipText(text, max);
      expectWellFormed(clipped);
      const head = before(clipped, '\n[... truncated:');
      expect(text.startsWith(head)).toBe(true);
      expect(head.length).toBeLessThanOrEqual(max);
      expect(clipped).toContain(`first ${head.length} shown`);
    }
  });

  it('clipErrorText, serializeError and toFailure (failure texts): well-formed, within 32 Ki characters', () => {
    for (const text of textsAround(MAX_ERROR_TEXT_CHARS)) {
      const clipped = clipErrorText(text);
      expectWellFormed(clipped);
      const head = before(clipped, '\n[... truncated:');
      expect(text.startsWith(head)).toBe(true);
      expect(head.length).toBeLessThanOrEqual(MAX_ERROR_TEXT_CHARS);

      const serialized = serializeError(new Error(text));
      expectWellFormed(serialized.message);
      expectWellFormed(serialized.stack ?? '');
      expect(serialized.message).toBe(clipped);

      const failure = toFailure({ name: text, message: text, stack: text });
      expectWellFormed(failure.message);
      expectWellFormed(failure.type ?? '');
      expect(failure.message).toBe(clipped);
    }
  });

  it('compactContext (the context budget): every cut text and tool-call input is a well-formed head within its share', () => {
    // Three messages and 150 tokens: each text's share is 150 * 4 / 3 = 200 characters.
    const share = 200;
    for (const text of textsAround(share, 400)) {
      const messages: ConversationMessage[] = [
        { role: 'user', content: [{ type: 'text', text }] },
        {
          role: 'assistant',
          text,
          toolCalls: [{ toolUseId: 't1', toolName: 'Write', input: { content: text } }],
        },
        {
          role: 'tool',
          results: [{ toolUseId: 't1', toolName: 'Write', status: 'success', model: text }],
        },
      ];
      const sent = compactContext(messages, 150).messages;
      const marker = '\n[... cut to fit the context budget:';
      const user = sent[0] as Extract<ConversationMessage, { role: 'user' }>;
      const assistant = sent[1] as Extract<ConversationMessage, { role: 'assistant' }>;
      const tool = sent[2] as Extract<ConversationMessage, { role: 'tool' }>;
      const part = (user.content as Array<{ type: 'text'; text: string }>)[0]!;
      const json = JSON.stringify({ content: text });
      const cutJson = (assistant.toolCalls[0]!.input as { _cut: string })._cut;
      for (const [cut, original] of [
        [part.text, text],
        [assistant.text, text],
        [tool.results[0]!.model, text],
        [cutJson, json],
      ] as const) {
        expectWellFormed(cut);
        const head = before(cut, marker);
        expect(original.startsWith(head)).toBe(true);
        expect(head.length).toBeLessThanOrEqual(share);
      }
      expectWellFormed(JSON.stringify(sent));
    }
  });

  it("boundOutput (the model step's text): a well-formed head of at most 512 Ki characters", () => {
    for (const text of textsAround(MAX_MODEL_TEXT_CHARS)) {
      const bounded = boundOutput({ text, finishReason: 'stop' });
      expectWellFormed(bounded.text);
      const head = before(bounded.text, '\n[... truncated:');
      expect(text.startsWith(head)).toBe(true);
      expect(head.length).toBeLessThanOrEqual(MAX_MODEL_TEXT_CHARS);
    }
  });

  it('rememberSend (a big send result kept across a rollover): its text is a well-formed head of 4096 characters', () => {
    for (const text of textsAround(4096, 70_000)) {
      const state = { recentSends: [] } as unknown as SessionState;
      const result: SendResult = { requestId: 'r', status: 'completed', text, toolCalls: [] };
      rememberSend(state, 'r', { result });
      const kept = state.recentSends[0]!.result!.text;
      expectWellFormed(kept);
      expect(text.startsWith(kept)).toBe(true);
      expect(kept.length).toBeLessThanOrEqual(4096);
    }
  });

  it("validateHookOutput's description of a string output: a well-formed head of 40 characters", () => {
    for (const text of textsAround(40, 60)) {
      let error: unknown;
      try {
        validateHookOutput(HookEvent.PreToolUse, 0, text);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(HookError);
      const message = (error as HookError).message;
      expectWellFormed(message);
      const quoted = /'([^']*)…'/.exec(message)?.[1];
      expect(quoted, message).toBeDefined();
      expect(text.startsWith(quoted!)).toBe(true);
      expect(quoted!.length).toBeLessThanOrEqual(40);
    }
  });

  it("the CLI's truncate: a well-formed head of at most max characters", () => {
    for (const text of textsAround(20)) {
      const cut = truncate(text, 20);
      expectWellFormed(cut);
      expect(Array.from(cut).length).toBeLessThanOrEqual(20);
      expect(text.startsWith(cut.replace(/…$/, ''))).toBe(true);
    }
  });
});
