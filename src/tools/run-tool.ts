/**
 * Run one tool call: validate its input, execute it, and always come back with a
 * `ToolResult` whose `model` text fits the output cap.
 *
 * @module
 */
import type { z } from 'zod';
import type { JsonObject } from '../common/json.js';
import type { ToolResult } from '../common/types.js';
import { capOutput } from './output.js';
import type { ToolContext, ToolDefinition } from './tool.js';

/** `error.type` of the result given for input that fails the tool's schema. */
const INVALID_TOOL_INPUT = 'InvalidToolInput';

/** `error.type` of the result given when `execute` returns something that is not a result. */
const INVALID_TOOL_RESULT = 'InvalidToolResult';

function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(input)';
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}

function errorResult(type: string, model: string, message = model, code?: string): ToolResult {
  return {
    status: 'error',
    model,
    error: code === undefined ? { message, type } : { message, type, code },
  };
}

function fromThrown(toolName: string, thrown: unknown): ToolResult {
  if (thrown instanceof Error) {
    const code = (thrown as Error & { code?: unknown }).code;
    return errorResult(
      thrown.name || 'Error',
      `${toolName} failed: ${thrown.message}`,
      thrown.message,
      typeof code === 'string' ? code : undefined,
    );
  }
  return errorResult('Error', `${toolName} failed: ${String(thrown)}`, String(thrown));
}

function isToolResult(value: unknown): value is ToolResult {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { status?: unknown; model?: unknown; error?: unknown };
  if (typeof v.model !== 'string') return false;
  if (v.status === 'success') return true;
  return v.status === 'error' && typeof v.error === 'object' && v.error !== null;
}

/**
 * Run `tool` on `rawInput`. Never throws and never rejects:
 *
 * - input failing `tool.inputSchema` gives an error result whose `model` is
 *   `Invalid input for <Tool>: <issues>` and `error.type` is `'InvalidToolInput'`;
 * - a string from `execute` becomes `{ status: 'success', model: <string> }`;
 * - an error thrown by `execute` becomes an error result with `error.type` = the error's
 *   `name`, its `message`, and its `code` when it has a string one;
 * - `model` is capped at `context.maxOutputBytes` with {@link capOutput}; the full text goes
 *   to `context.saveFullOutput` first, and its reference is named in the marker and set as
 *   `outputRef`.
 *
 * @param tool The tool to run.
 * @param rawInput Arguments as the model gave them; validated here.
 * @param context Passed to `execute` as is.
 */
export async function runTool<Input extends JsonObject>(
  tool: ToolDefinition<Input>,
  rawInput: unknown,
  context: ToolContext,
): Promise<ToolResult> {
  let result: ToolResult;
  try {
    const parsed = await tool.inputSchema.safeParseAsync(rawInput);
    if (!parsed.success) {
      result = errorResult(
        INVALID_TOOL_INPUT,
        `Invalid input for ${tool.name}: ${formatIssues(parsed.error.issues)}`,
      );
    } else {
      const output: unknown = await tool.execute(parsed.data, context);
      if (typeof output === 'string') result = { status: 'success', model: output };
      else if (isToolResult(output)) result = output;
      else {
        result = errorResult(
          INVALID_TOOL_RESULT,
          `${tool.name} returned neither a string nor a tool result`,
        );
      }
    }
  } catch (thrown) {
    result = fromThrown(tool.name, thrown);
  }
  let ref: string | undefined;
  if (
    context.saveFullOutput &&
    Number.isFinite(context.maxOutputBytes) &&
    Buffer.byteLength(result.model) > context.maxOutputBytes
  ) {
    // The model gets the head; the whole output stays retrievable by reference.
    ref = await context.saveFullOutput(result.model).catch(() => undefined);
  }
  const capped = capOutput(result.model, context.maxOutputBytes, ref);
  return boundResult(
    capped.truncated
      ? { ...result, model: capped.text, ...(ref !== undefined ? { outputRef: ref } : {}) }
      : result,
    context.maxOutputBytes,
  );
}

/** Largest `data` or `metadata` a result keeps, bytes of JSON; bigger ones are replaced by a note. */
const MAX_RESULT_EXTRA_BYTES = 262_144;

/**
 * Keep a result small and serialisable whatever the tool put in it: `display` and error
 * texts are capped like `model`, and `data`/`metadata` that JSON cannot carry or that are
 * too big are replaced by a note. The tool ran; its result must reach the workflow (whose
 * payloads are limited to 2 MiB) rather than be lost to a serialisation failure.
 */
function boundResult(result: ToolResult, maxBytes: number): ToolResult {
  const text = (value: string) => capOutput(value, maxBytes).text;
  const out: ToolResult = { ...result };
  if (out.display) {
    out.display = {
      summary: text(String(out.display.summary)),
      ...(out.display.detail !== undefined ? { detail: text(String(out.display.detail)) } : {}),
    };
  }
  if (out.status === 'error') {
    out.error = { ...out.error, message: text(String(out.error.message)) };
    if (out.error.details !== undefined && !fitsJson(out.error.details)) {
      out.error.details = '[details dropped: not JSON or over 256 KiB]';
    }
  }
  if (out.status === 'success' && out.data !== undefined && !fitsJson(out.data)) {
    out.data = '[data dropped: not JSON or over 256 KiB]';
  }
  if (out.metadata !== undefined && !fitsJson(out.metadata)) {
    out.metadata = { dropped: 'metadata was not JSON or over 256 KiB' };
  }
  return out;
}

function fitsJson(value: unknown): boolean {
  try {
    const json = JSON.stringify(value);
    return json !== undefined && Buffer.byteLength(json) <= MAX_RESULT_EXTRA_BYTES;
  } catch {
    return false;
  }
}
