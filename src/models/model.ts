/**
 * The one interface every model sits behind. A model step gets only what is new (the
 * prompt on a send's first step) and the ids to find the rest, never the whole
 * conversation by habit.
 *
 * @module
 */
import type { ModelStepOutput } from '../common/activity-io.js';
import type { ConversationMessage } from '../common/conversation.js';
import type { Prompt } from '../common/types.js';
import type { ToolDefinition } from '../tools/tool.js';

/** What one model step is asked. */
export interface ModelStepRequest {
  /** The session's id. */
  sessionId: string;
  /** The `send()` this step belongs to. */
  requestId: string;
  /** 0-based step within this `send()`. */
  step: number;
  /** 0-based index of the prompt in the session. */
  promptIndex: number;
  /** 0-based index of the step in the session, stable across worker restarts. */
  modelStepIndex: number;
  /** The prompt as it reaches the model (after UserPromptSubmit), on a send's first step. */
  prompt?: Prompt;
  /** Aborts when the step is cancelled (abort, close) or times out. */
  signal: AbortSignal;
  /**
   * The conversation so far, the prompt of this send included, read from the session
   * workflow (not carried in the activity's input).
   */
  messages: readonly ConversationMessage[];
  /** The tools the model may call. */
  tools: readonly ToolDefinition[];
  /**
   * Instructions for the model, sent as the system message before `messages`: a sub-agent's
   * `prompt` (`advanced.subagents`). Absent in a top session's steps, which send none.
   */
  instructions?: string;
  /** In a sub-agent's steps only: its path of sub-agent names, e.g. `main/researcher`. */
  agentPath?: string;
  /**
   * Called with each piece of assistant text as the model produces it, in order (pieces
   * are never empty, and concatenate to the step's `text`). Present when the agent
   * streams (`advanced.stream`); a model that cannot stream may ignore it. It returns at
   * once (it only queues the piece for the send's stream): never await anything for it.
   */
  onTextDelta?: (text: string) => void;
  /**
   * The most output tokens this step may produce, in sessions with a budget
   * (`advanced.budgets.maxOutputTokens`): send it to the provider as its limit. A model that
   * reports usage returns it as `ModelStepOutput.usage`.
   */
  maxOutputTokens?: number;
}

/** A model the agent loop can call. Implementations run inside the `modelStep` activity. */
export interface AgentModel {
  /** For logs and the timeline, e.g. `scripted` or `openai:gpt-4o`. */
  readonly name: string;
  /** Take one step. Throw to fail it; a `ModelError` with `retryable: false` is not retried. */
  step(request: ModelStepRequest): Promise<ModelStepOutput>;
}

/** Whether `value` implements {@link AgentModel}. */
export function isAgentModel(value: unknown): value is AgentModel {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AgentModel).step === 'function' &&
    typeof (value as AgentModel).name === 'string'
  );
}
