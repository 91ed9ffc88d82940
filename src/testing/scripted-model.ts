/**
 * A deterministic model for offline runs and tests: it answers from a script and records
 * what it was sent.
 *
 * @module
 */
import type { ToolCall } from '../common/conversation.js';
import { ModelError } from '../common/errors.js';
import type { JsonObject } from '../common/json.js';
import type { ModelStepOutput } from '../common/protocol.js';
import type { AgentModel, ModelStepRequest } from '../models/model.js';

/** A tool call in a script; `toolUseId` defaults to `call_<step>_<index>`. */
export interface ScriptedToolCall {
  toolName: string;
  input: JsonObject;
  toolUseId?: string;
}

/** One scripted model turn: assistant text, tool calls, or both. */
export type ScriptedTurn = string | { text?: string; toolCalls?: ScriptedToolCall[] };

/** What the scripted model records of a request (the signal and tool objects left out). */
export type RecordedModelRequest = Omit<ModelStepRequest, 'signal' | 'tools'> & {
  toolNames: string[];
};

/** A scripted model, with what it was sent. */
export interface ScriptedModel extends AgentModel {
  /**
   * The requests it answered, in the order answered: the last `keepRequests` of them (each
   * holds the whole context it was sent).
   */
  readonly requests: ReadonlyArray<RecordedModelRequest>;
  /** The prompts that reached it (first steps only), in order; the last `keepRequests`. */
  readonly prompts: ReadonlyArray<NonNullable<ModelStepRequest['prompt']>>;
}

/** A turn that calls one tool: `toolCall('Read', { file_path: 'a.txt' })`. */
export function toolCall(toolName: string, input: JsonObject, toolUseId?: string): ScriptedTurn {
  return { toolCalls: [{ toolName, input, ...(toolUseId ? { toolUseId } : {}) }] };
}

/** A turn that calls several tools at once, in order. */
export function toolCalls(...calls: Array<[toolName: string, input: JsonObject]>): ScriptedTurn {
  return { toolCalls: calls.map(([toolName, input]) => ({ toolName, input })) };
}

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /**
   * How many recent requests (and prompts) `requests` keeps: each holds its whole context,
   * so a long session would otherwise hold every context it ever sent. @default 1000
   */
  keepRequests?: number;
}

/**
 * A deterministic model.
 *
 * @param turns assistant turns. Given a list, the session's n-th model step (counted across
 *   prompts, so a restarted worker answers the same) gets `turns[n]`; past the end it
 *   throws. Given a function, it is called with each request.
 * @throws {ModelError} (from `step`) when the script has no turn for a step.
 */
export function scriptedModel(
  turns:
    | readonly ScriptedTurn[]
    | ((request: RecordedModelRequest) => ScriptedTurn | Promise<ScriptedTurn>),
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const keep = options.keepRequests ?? 1000;
  const requests: RecordedModelRequest[] = [];
  const prompts: Array<NonNullable<ModelStepRequest['prompt']>> = [];
  return {
    name: 'scripted',
    requests,
    prompts,
    async step(request: ModelStepRequest): Promise<ModelStepOutput> {
      const { signal: _signal, tools, ...rest } = request;
      const recorded: RecordedModelRequest = { ...rest, toolNames: tools.map((t) => t.name) };
      requests.push(recorded);
      if (requests.length > keep) requests.splice(0, requests.length - keep);
      if (request.prompt !== undefined) prompts.push(request.prompt);
      if (prompts.length > keep) prompts.splice(0, prompts.length - keep);
      let turn: ScriptedTurn | undefined;
      if (typeof turns === 'function') {
        turn = await turns(recorded);
      } else {
        turn = turns[request.modelStepIndex];
        if (turn === undefined) {
          throw new ModelError(
            `scriptedModel has ${turns.length} turn(s); the session asked for turn ${request.modelStepIndex + 1}`,
          );
        }
      }
      if (typeof turn === 'string') return { text: turn, finishReason: 'stop' };
      const calls: ToolCall[] = (turn.toolCalls ?? []).map((call, index) => ({
        toolUseId: call.toolUseId ?? `call_${request.modelStepIndex}_${index}`,
        toolName: call.toolName,
        input: call.input,
      }));
      return {
        text: turn.text ?? '',
        toolCalls: calls,
        finishReason: calls.length > 0 ? 'tool-calls' : 'stop',
      };
    },
  };
}
