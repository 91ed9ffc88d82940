/**
 * A deterministic model for offline runs and tests: it answers from a script and records
 * what it was sent.
 *
 * @module
 */
import type { ToolCall } from '../common/conversation.js';
import { ModelError } from '../common/errors.js';
import type { JsonObject } from '../common/json.js';
import type { ModelStepOutput } from '../common/activity-io.js';
import type { AgentModel, ModelStepRequest } from '../models/model.js';

/** A tool call in a script; `toolUseId` defaults to `call_<step>_<index>`. */
export interface ScriptedToolCall {
  /** The tool to call, by name. */
  toolName: string;
  /** The call's input. */
  input: JsonObject;
  /** The call's id. @default `call_<step>_<index>` */
  toolUseId?: string;
}

/**
 * One scripted model turn: assistant text, tool calls, or both. `chunks` streams the text
 * in those pieces (they must join to `text`); without it the text streams in pieces of the
 * model's `chunkChars`.
 */
export type ScriptedTurn =
  string | { text?: string; chunks?: string[]; toolCalls?: ScriptedToolCall[] };

/** What the scripted model records of a request (the signal, stream and tool objects left out). */
export type RecordedModelRequest = Omit<ModelStepRequest, 'signal' | 'tools' | 'onTextDelta'> & {
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
  /**
   * Pieces a turn's text streams in when the turn gives no `chunks`, characters (code
   * points). @default 4
   */
  chunkChars?: number;
  /**
   * Wait this long before each piece after the first, ms (the step still honours its
   * signal), so tests can see pieces arrive while the step runs. @default 0
   */
  chunkDelayMs?: number;
}

/**
 * A deterministic model.
 *
 * @param turns assistant turns. Given a list, the session's n-th model step (counted across
 *   prompts, so a restarted worker answers the same) gets `turns[n]`; past the end it
 *   throws. Given a function, it is called with each request.
 * The text streams: each turn's text reaches `request.onTextDelta` in pieces (see
 * {@link ScriptedModelOptions.chunkChars}) before the step resolves.
 *
 * @throws {ModelError} (from `step`) when the script has no turn for a step, or a turn's
 *   `chunks` do not join to its `text`.
 */
export function scriptedModel(
  turns:
    | readonly ScriptedTurn[]
    | ((request: RecordedModelRequest) => ScriptedTurn | Promise<ScriptedTurn>),
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const keep = options.keepRequests ?? 1000;
  const chunkChars = options.chunkChars ?? 4;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const requests: RecordedModelRequest[] = [];
  const prompts: Array<NonNullable<ModelStepRequest['prompt']>> = [];
  async function streamText(
    request: ModelStepRequest,
    text: string,
    chunks: string[] | undefined,
  ): Promise<void> {
    if (chunks && chunks.join('') !== text) {
      throw new ModelError(`scriptedModel: a turn's chunks do not join to its text`);
    }
    const onTextDelta = request.onTextDelta;
    if (!onTextDelta || text === '') return;
    const pieces = chunks ?? piecesOf(text, chunkChars);
    for (const [index, piece] of pieces.entries()) {
      if (index > 0 && chunkDelayMs > 0) await delay(chunkDelayMs, request.signal);
      if (piece !== '') onTextDelta(piece);
    }
  }

  return {
    name: 'scripted',
    requests,
    prompts,
    async step(request: ModelStepRequest): Promise<ModelStepOutput> {
      const { signal: _signal, tools, onTextDelta: _onTextDelta, ...rest } = request;
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
      if (typeof turn === 'string') {
        await streamText(request, turn, undefined);
        return { text: turn, finishReason: 'stop' };
      }
      await streamText(request, turn.text ?? '', turn.chunks);
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

/** `text` in pieces of `size` code points. */
function piecesOf(text: string, size: number): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

/** Wait `ms`, or reject with the signal's reason when it aborts first. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
