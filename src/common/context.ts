/**
 * The model's context: the part of the conversation each model step gets, kept within
 * `maxContextTokens`. Workflow-safe (the session workflow compacts its context with it).
 *
 * The rule, in order:
 * 1. A message costs `ceil(JSON characters / 4)` tokens (a rough, provider-neutral
 *    estimate: about four characters a token for English text and code).
 * 2. A turn is a user message and every message after it up to the next user message.
 * 3. While the context costs more than the budget and holds more than one turn, the oldest
 *    whole turn leaves it. Tool calls and their results leave together, so what remains
 *    is always a well-formed conversation.
 * 4. When turns left, the first remaining user message is shown to the model with a note in
 *    front: `[Context compacted: N earlier messages are not shown; ...]`.
 * 5. When the newest turn alone is over the budget, each text of it longer than its share
 *    (budget × 4 characters / messages in the turn) is cut to that share (UTF-16 units, never
 *    inside a character: see `cutPrefix`) with a marker; a marker line the text already
 *    ended with (a tool output's `full output: sha256:...`) is kept after it. Tool-call inputs longer than the share are shown as the head of their
 *    JSON (`{ "_cut": ... }`), and images as a short text. A turn of very many steps can
 *    still exceed the budget: steps are never dropped from the newest turn.
 *
 * The full transcript is never compacted: `session.conversation()` and the timeline read it.
 *
 * @module
 */
import type { ConversationMessage } from './conversation.js';
import { cutPrefix } from './text.js';
import type { Prompt } from './types.js';

/** Estimated tokens of one message: JSON characters / 4, rounded up. */
export function estimateTokens(message: ConversationMessage): number {
  return tokensOfChars(JSON.stringify(message).length);
}

/** The estimate for a message of `chars` JSON characters. */
export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / 4);
}

/** A context being kept within budget: the messages and their estimated costs. */
export interface ContextWindow {
  /** The messages still in the context, oldest first. */
  messages: ConversationMessage[];
  /** The estimated tokens of each message, by the same index. */
  tokens: number[];
  /** Messages that left the context so far (rule 3). */
  compacted: number;
}

/** A context holding `messages`, none compacted yet. */
export function contextOf(messages: ConversationMessage[], compacted = 0): ContextWindow {
  return { messages: [...messages], tokens: messages.map(estimateTokens), compacted };
}

/**
 * Add a message, then drop the oldest whole turns while over `maxTokens` (rule 3).
 * @param tokens the message's estimate, when the caller measured it already.
 */
export function appendToContext(
  window: ContextWindow,
  message: ConversationMessage,
  maxTokens: number,
  tokens: number = estimateTokens(message),
): void {
  window.messages.push(message);
  window.tokens.push(tokens);
  compact(window, maxTokens);
}

/** Drop the oldest whole turns while over `maxTokens`, keeping at least the newest turn. */
function compact(window: ContextWindow, maxTokens: number): void {
  let total = window.tokens.reduce((a, b) => a + b, 0);
  while (total > maxTokens) {
    // The second user message starts the turn after the oldest one.
    const next = window.messages.findIndex((m, i) => i > 0 && m.role === 'user');
    if (next <= 0) break;
    for (let i = 0; i < next; i++) total -= window.tokens[i]!;
    window.messages.splice(0, next);
    window.tokens.splice(0, next);
    window.compacted += next;
  }
}

/** The note put in front of the first remaining user message (rule 4). */
function compactionNote(compacted: number): string {
  return (
    `[Context compacted: ${compacted} earlier messages of this session are not shown, ` +
    `to keep within the context budget; the full transcript is kept in the session history.]\n\n`
  );
}

/**
 * What the model is sent: the context with rule 4's note and rule 5's cuts applied. The
 * window itself is not changed.
 */
export function contextForModel(window: ContextWindow, maxTokens: number): ConversationMessage[] {
  let messages = window.messages;
  const total = window.tokens.reduce((a, b) => a + b, 0);
  if (total > maxTokens && messages.length > 0) {
    const share = Math.max(64, Math.floor((maxTokens * 4) / messages.length));
    messages = messages.map((m) => clipMessage(m, share));
  }
  if (window.compacted > 0) {
    const first = messages.findIndex((m) => m.role === 'user');
    if (first >= 0) {
      const note = compactionNote(window.compacted);
      const message = messages[first] as Extract<ConversationMessage, { role: 'user' }>;
      messages = [...messages];
      messages[first] = { role: 'user', content: prefixPrompt(message.content, note) };
    }
  }
  return messages;
}

function prefixPrompt(prompt: Prompt, note: string): Prompt {
  if (typeof prompt === 'string') return note + prompt;
  return [{ type: 'text', text: note }, ...prompt];
}

/** A marker line the SDK put at the end of a text (`\n[... output truncated: ...]`). */
const TRAILING_MARKER = /\n\[\.\.\. [^\n]* \.\.\.\]$/;

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  // A marker naming where the whole value is kept survives the cut.
  const marker = TRAILING_MARKER.exec(text)?.[0] ?? '';
  return `${cutPrefix(text, max)}\n[... cut to fit the context budget: ${text.length} characters in all ...]${marker}`;
}

function clipMessage(message: ConversationMessage, max: number): ConversationMessage {
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        content:
          typeof message.content === 'string'
            ? clip(message.content, max)
            : message.content.map((p) =>
                p.type === 'text'
                  ? { ...p, text: clip(p.text, max) }
                  : {
                      type: 'text' as const,
                      text: '[an image, left out to fit the context budget]',
                    },
              ),
      };
    case 'assistant':
      return {
        ...message,
        text: clip(message.text, max),
        // A huge tool-call input (a Write of a big file) is shown as the head of its JSON.
        toolCalls: message.toolCalls.map((call) => {
          const json = JSON.stringify(call.input);
          return json.length <= max ? call : { ...call, input: { _cut: clip(json, max) } };
        }),
      };
    case 'tool':
      return {
        role: 'tool',
        results: message.results.map((r) => ({ ...r, model: clip(r.model, max) })),
      };
  }
}

/**
 * Apply the whole rule to a conversation at once: what a model with a `maxTokens` budget
 * is sent after `messages`. The session workflow applies the same rule incrementally.
 *
 * @param messages The conversation, oldest first.
 * @param maxTokens The budget (`maxContextTokens`), estimated tokens.
 * @returns the messages sent, and how many left the context.
 */
export function compactContext(
  messages: ConversationMessage[],
  maxTokens: number,
): { messages: ConversationMessage[]; compacted: number } {
  const window = contextOf(messages);
  compact(window, maxTokens);
  return { messages: contextForModel(window, maxTokens), compacted: window.compacted };
}
