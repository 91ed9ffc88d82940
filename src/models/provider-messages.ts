/**
 * Conversion between our protocol and the Vercel AI SDK's: the conversation as SDK
 * messages, our tools as SDK tool declarations, and the SDK's answer (tool calls, finish
 * reason) back as our {@link ModelStepOutput} fields.
 *
 * @module
 */
import {
  jsonSchema,
  tool,
  type FinishReason,
  type ModelMessage,
  type ToolSet,
  type UserContent,
} from 'ai';
import { z } from 'zod';
import type { ConversationMessage, ToolCall } from '../common/conversation.js';
import { ProviderError } from '../common/errors.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import type { ModelStepOutput } from '../common/activity-io.js';
import type { ToolDefinition } from '../tools/tool.js';
import { snippet, type ProviderSource } from './provider-errors.js';

type UserMessage = Extract<ConversationMessage, { role: 'user' }>;
type AssistantMessage = Extract<ConversationMessage, { role: 'assistant' }>;
type ToolMessage = Extract<ConversationMessage, { role: 'tool' }>;
type AssistantContent = Exclude<Extract<ModelMessage, { role: 'assistant' }>['content'], string>;

/**
 * Our conversation as AI SDK messages. Assistant messages with neither text nor tool
 * calls are left out (Anthropic rejects empty messages); empty text parts too.
 */
export function toModelMessages(messages: readonly ConversationMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    const converted =
      message.role === 'user'
        ? toUserMessage(message)
        : message.role === 'assistant'
          ? toAssistantMessage(message)
          : toToolMessage(message);
    if (converted !== undefined) out.push(converted);
  }
  return out;
}

function toUserMessage(message: UserMessage): ModelMessage {
  const content: UserContent =
    typeof message.content === 'string'
      ? message.content
      : message.content.map((part) =>
          part.type === 'text'
            ? { type: 'text' as const, text: part.text }
            : {
                type: 'image' as const,
                // Base64, or an https:/data: URL: the SDK tells them apart.
                image: part.image,
                ...(part.mediaType ? { mediaType: part.mediaType } : {}),
              },
        );
  return { role: 'user', content };
}

function toAssistantMessage(message: AssistantMessage): ModelMessage | undefined {
  const content: AssistantContent = [];
  if (message.text !== '') content.push({ type: 'text', text: message.text });
  for (const call of message.toolCalls) {
    content.push({
      type: 'tool-call',
      toolCallId: call.toolUseId,
      toolName: call.toolName,
      input: call.input,
    });
  }
  return content.length > 0 ? { role: 'assistant', content } : undefined;
}

function toToolMessage(message: ToolMessage): ModelMessage | undefined {
  if (message.results.length === 0) return undefined;
  return {
    role: 'tool',
    content: message.results.map((result) => ({
      type: 'tool-result' as const,
      toolCallId: result.toolUseId,
      toolName: result.toolName,
      output:
        result.status === 'error'
          ? { type: 'error-text' as const, value: result.model }
          : { type: 'text' as const, value: result.model },
    })),
  };
}

/**
 * Our tools as AI SDK tools: declarations only (no `execute`, so the SDK runs nothing),
 * with the JSON Schema of each zod input schema's input side and no validation (the
 * workflow validates the arguments and answers the model with an error result).
 */
export function toToolSet(tools: readonly ToolDefinition[]): ToolSet | undefined {
  if (tools.length === 0) return undefined;
  const set: ToolSet = {};
  for (const def of tools) {
    const schema =
      def.inputJsonSchema ??
      z.toJSONSchema(def.inputSchema, {
        target: 'draft-07',
        io: 'input',
        unrepresentable: 'any',
      });
    set[def.name] = tool({
      description: def.description,
      inputSchema: jsonSchema<JsonObject>(schema as Parameters<typeof jsonSchema>[0]),
    });
  }
  return set;
}

/**
 * The SDK's tool calls as ours. Arguments that are not a JSON object fail the step with
 * a retryable {@link ProviderError}.
 */
export function toToolCalls(
  calls: readonly { toolCallId: string; toolName: string; input: unknown }[],
  label: string,
  source: ProviderSource,
): ToolCall[] {
  return calls.map((call) => {
    if (!isPlainObject(call.input)) {
      // Unparsable arguments: another sample may well be fine.
      throw new ProviderError(
        `${label}: the model called tool '${call.toolName}' with arguments that are not a JSON object: ${snippet(
          typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
        )}`,
        { retryable: true, ...source },
      );
    }
    return {
      toolUseId: call.toolCallId,
      toolName: call.toolName,
      input: call.input as JsonObject,
    };
  });
}

/** The SDK's finish reason as ours: `tool-calls` whenever the model asked for a tool. */
export function toFinishReason(
  reason: FinishReason,
  toolCallCount: number,
): ModelStepOutput['finishReason'] {
  if (toolCallCount > 0) return 'tool-calls';
  switch (reason) {
    case 'stop':
    case 'length':
    case 'error':
      return reason;
    default:
      // `content-filter`, `other`, and `tool-calls` without any call.
      return 'other';
  }
}
