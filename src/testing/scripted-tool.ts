/**
 * A tool for tests: it answers with given results, in order, and records every input that
 * reached it, so a test can check what the hooks and the permission step let through.
 *
 * @module
 */
import { z } from 'zod';
import { ConfigError } from '../common/errors.js';
import type { JsonObject } from '../common/json.js';
import type { ToolKind, ToolResult } from '../common/types.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tools/tool.js';

/** One scripted answer: a result, or a function of the input and the 0-based call number. */
export type ScriptedToolResult =
  | string
  | ToolResult
  | ((input: JsonObject, call: number) => string | ToolResult | Promise<string | ToolResult>);

/** One call that reached the tool. */
export interface RecordedToolCall {
  /** The input the tool ran with. */
  input: JsonObject;
  /** The tool call's id. */
  toolUseId: string;
  /** The id of the session that made the call. */
  sessionId: string;
}

/** A scripted tool: a `ToolDefinition` with the calls it received. */
export interface ScriptedTool extends ToolDefinition<JsonObject> {
  /** Every call that reached `execute`, in order (in the worker's process). */
  readonly calls: ReadonlyArray<RecordedToolCall>;
}

/** Options of {@link scriptedTool}. */
export interface ScriptedToolOptions {
  /** The name the model calls it by. */
  name: string;
  /** @default `'readonly'` */
  kind?: ToolKind;
  /** @default `Scripted tool <name>` */
  description?: string;
  /**
   * Answers, one per call in order; past the end every call gets an error result saying
   * so. A single function answers every call.
   */
  results: readonly ScriptedToolResult[] | ScriptedToolResult;
}

/**
 * A tool that answers from a script and records its inputs. Any JSON object is accepted as
 * input.
 *
 * @example
 * const deploy = scriptedTool({ name: 'Deploy', kind: 'execute', results: ['deployed'] });
 * // ... after the session:
 * expect(deploy.calls.map((c) => c.input)).toEqual([{ env: 'staging' }]);
 * @throws {ConfigError} when `name` is empty or `results` is missing.
 */
export function scriptedTool(options: ScriptedToolOptions): ScriptedTool {
  if (typeof options?.name !== 'string' || options.name === '') {
    throw new ConfigError('scriptedTool: name must be a non-empty string');
  }
  if (options.results === undefined) {
    throw new ConfigError(`scriptedTool '${options.name}': results are required`);
  }
  const calls: RecordedToolCall[] = [];
  const answers = options.results;
  const tool = defineTool<JsonObject>({
    name: options.name,
    description: options.description ?? `Scripted tool ${options.name}`,
    kind: options.kind ?? 'readonly',
    inputSchema: z.record(z.string(), z.unknown()) as unknown as z.ZodType<JsonObject>,
    async execute(input: JsonObject, context: ToolContext) {
      const call = calls.length;
      calls.push({ input, toolUseId: context.toolUseId, sessionId: context.sessionId });
      const answer =
        typeof answers === 'function' ? answers : (answers as ScriptedToolResult[])[call];
      if (answer === undefined) {
        const message = `Scripted tool ${options.name} has no result for call ${call + 1}`;
        return { status: 'error', model: message, error: { message, type: 'ScriptExhausted' } };
      }
      return typeof answer === 'function' ? answer(input, call) : answer;
    },
  });
  return Object.assign(tool, { calls });
}
