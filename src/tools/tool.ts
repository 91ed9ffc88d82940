/**
 * Tools: what a tool is, and `defineTool` for custom ones.
 *
 * @module
 */
import type { z } from 'zod';
import type { JsonObject } from '../common/json.js';
import type { ToolKind, ToolResult } from '../common/types.js';

/** What a tool's `execute` gets besides its input. */
export interface ToolContext {
  /** The id of the session that made the call. */
  sessionId: string;
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** Aborts when the call is cancelled (abort, close) or times out. */
  signal: AbortSignal;
  /** Absolute, symlink-resolved workspace roots; file tools stay inside them. */
  workspaceRoots: readonly string[];
  /**
   * Report liveness; the tool activity also heartbeats on its own timer. `details` show as
   * `progress` in the activity's heartbeat details, beside the record that the call began.
   */
  heartbeat(details?: unknown): void;
  /** Time budget of this execution, ms. */
  timeoutMs: number;
  /** Largest output a tool should return to the model, bytes; more is cut with a marker. */
  maxOutputBytes: number;
  /**
   * Keep a full output that is cut for the model, and get its reference (`sha256:...`), to
   * name in the marker and set as the result's `outputRef`. The SDK does this itself for
   * text a tool returns whole; a tool that cuts its own output (like Bash) calls it.
   * Absent when the worker keeps no full outputs.
   */
  saveFullOutput?(text: string | Uint8Array): Promise<string>;
  /** Most bytes of full output worth keeping for `saveFullOutput`. @default 67108864 (64 MiB) */
  maxFullOutputBytes?: number;
  /**
   * The environment for processes the tool starts (`advanced.toolEnv`): pass it as `env`
   * to `spawn` rather than `process.env`, which holds the worker's secrets.
   * @default absent; `Bash` then uses PATH, HOME, LANG, LC_ALL, TERM and TMPDIR of the worker
   */
  env?: Readonly<Record<string, string>>;
}

/** A tool the model can call. Built-ins and `defineTool` both produce this. */
export interface ToolDefinition<Input extends JsonObject = JsonObject> {
  /** Unique name the model calls it by, e.g. `Read`. */
  readonly name: string;
  /** What it does, for the model. */
  readonly description: string;
  /** Schema of its input; arguments that fail it give the model an error result. */
  readonly inputSchema: z.ZodType<Input>;
  /**
   * The JSON Schema the model is shown for the input, when it is given as such (an MCP
   * server's tools): then it is shown as is, and `inputSchema` only checks the arguments.
   * @default the JSON Schema of `inputSchema`'s input side
   */
  readonly inputJsonSchema?: JsonObject;
  /** `readonly`, `write` or `execute`; permission policies decide by it. */
  readonly kind: ToolKind;
  /**
   * Whether running a call twice does what running it once does. Such a call, lost with its
   * worker while it ran, is run again on another worker (the model reads its result); any
   * other is never run twice and ends as a tool that failed to run. Say `false` for a tool
   * declared `readonly` that still has effects worth not repeating (a paid lookup, a counter).
   * @default `true` for kind `readonly`, else `false`
   */
  readonly idempotent?: boolean;
  /** Paths the call would read or write, for permission requests. @default none */
  affectedPaths?(input: Input, context: Pick<ToolContext, 'workspaceRoots'>): string[];
  /**
   * Run the call. Return a `ToolResult`, or a string (a success whose `model` is it). A
   * thrown error becomes an error result.
   */
  execute(input: Input, context: ToolContext): Promise<ToolResult | string>;
}

/**
 * Define a custom tool.
 *
 * @example
 * const weather = defineTool({
 *   name: 'Weather', description: 'Current weather of a city', kind: 'readonly',
 *   inputSchema: z.object({ city: z.string() }),
 *   execute: async ({ city }) => `Sunny in ${city}`,
 * });
 */
export function defineTool<Input extends JsonObject>(
  definition: ToolDefinition<Input>,
): ToolDefinition<Input> {
  return definition;
}
