/**
 * The conversation as the session workflow keeps it: a provider-neutral list of messages.
 * Each message is in the workflow's history once (as the Update or activity result that
 * produced it); model steps read the list by query instead of carrying it as input.
 * Workflow-safe.
 *
 * @module
 */
import type { JsonObject } from './json.js';
import type { Prompt, ToolResult } from './types.js';

/** A tool call the model asked for. */
export interface ToolCall {
  /** The call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The call's input, as the model gave it. */
  input: JsonObject;
}

/** What the model sees of one tool call's result. */
export interface ToolResultMessagePart {
  toolUseId: string;
  toolName: string;
  status: ToolResult['status'];
  /** The result's `model` part: what the model sees. */
  model: string;
}

/** One message of the conversation. */
export type ConversationMessage =
  | { role: 'user'; content: Prompt }
  | { role: 'assistant'; text: string; toolCalls: ToolCall[] }
  | { role: 'tool'; results: ToolResultMessagePart[] };
