/**
 * The pure rules of the hooks contract: how a callback's output is checked (§3), how the
 * outputs of one event are merged (§4.8), and what the merged result does per event (§5).
 * Workflow-safe and deterministic: the workflow applies these rules to what the dispatch
 * activity reports, so a decision is recorded in history and replays the same.
 *
 * @module
 */
import { HookError } from './errors.js';
import type { HookEvent } from './hook-events.js';
import { isPlainObject, whyNotJson, type JsonObject, type JsonValue } from './json.js';
import { cutPrefix } from './text.js';
import type { HookDispatchOutcome } from './activity-io.js';
import type { HookOutput, ImagePart, Prompt, TextPart, ToolResult } from './types.js';

const ACTIONS = ['continue', 'skip', 'abort'] as const;

/**
 * Check one callback's output against the contract's shape (§3).
 *
 * @param event the event dispatched, named in the error.
 * @param index 0-based position of the callback, named in the error (as `#index+1`).
 * @returns the output, with only the contract's fields.
 * @throws {HookError} `HOOK_OUTPUT_INVALID`, naming the event, the position and what was wrong.
 */
export function validateHookOutput(event: HookEvent, index: number, value: unknown): HookOutput {
  const fail = (what: string): never => {
    throw new HookError(
      'HOOK_OUTPUT_INVALID',
      `Hook ${event} callback #${index + 1} returned a malformed output: ${what}`,
      { event, callbackIndex: index },
    );
  };
  if (!isPlainObject(value)) {
    fail(`expected an object like { action: 'continue' }, got ${describe(value)}`);
  }
  const output = value as Record<string, unknown>;
  if (!(ACTIONS as readonly unknown[]).includes(output.action)) {
    fail(`action must be 'continue', 'skip' or 'abort', got ${describe(output.action)}`);
  }
  const result: HookOutput = { action: output.action as HookOutput['action'] };
  if (output.modifiedInput !== undefined) {
    if (!isPlainObject(output.modifiedInput)) {
      fail(`modifiedInput must be a plain object, got ${describe(output.modifiedInput)}`);
    }
    const why = whyNotJson(output.modifiedInput, 'modifiedInput');
    if (why) fail(why);
    // The one field of an event input a callback replaces with a known type (§5): a prompt
    // rewrite of another type would otherwise be dropped and the original prompt go through.
    const userPrompt = (output.modifiedInput as Record<string, unknown>).userPrompt;
    if (
      event === 'UserPromptSubmit' &&
      userPrompt !== undefined &&
      typeof userPrompt !== 'string'
    ) {
      fail(
        `modifiedInput.userPrompt must be a string (the new prompt text), got ${describe(userPrompt)}`,
      );
    }
    result.modifiedInput = output.modifiedInput as JsonObject;
  }
  if ('modifiedOutput' in output && output.modifiedOutput !== undefined) {
    const why = whyNotJson(output.modifiedOutput, 'modifiedOutput');
    if (why) fail(why);
    result.modifiedOutput = output.modifiedOutput as JsonValue;
  }
  if (output.reason !== undefined) {
    if (typeof output.reason !== 'string')
      fail(`reason must be a string, got ${describe(output.reason)}`);
    result.reason = output.reason as string;
  }
  return result;
}

/** The outputs of one event's callbacks, read in order (§4.8). */
export interface MergedHookResult {
  /** The first `skip` or `abort`, else `continue`. */
  action: HookOutput['action'];
  /** 0-based position of the callback whose skip/abort decided, if any. */
  decidedBy?: number;
  /** The deciding callback's reason. */
  reason?: string;
  /** Every `modifiedInput`, shallow-merged in order. */
  modifiedInput?: JsonObject;
  /** The same merge without the deciding skip/abort output's own edits (PreToolUse). */
  modifiedInputBeforeDecision?: JsonObject;
  /** Whether any callback gave `modifiedOutput` (which may be `null`). */
  hasModifiedOutput: boolean;
  /** The last `modifiedOutput` given, `null` included. */
  modifiedOutput?: JsonValue;
}

/** Merge the validated outputs of one event's callbacks (§4.8). */
export function mergeHookOutputs(outputs: readonly HookOutput[]): MergedHookResult {
  const merged: MergedHookResult = { action: 'continue', hasModifiedOutput: false };
  outputs.forEach((output, index) => {
    if (output.modifiedInput) {
      merged.modifiedInput = { ...merged.modifiedInput, ...output.modifiedInput };
      const isDecidingOutput = merged.decidedBy === undefined && output.action !== 'continue';
      if (!isDecidingOutput) {
        merged.modifiedInputBeforeDecision = {
          ...merged.modifiedInputBeforeDecision,
          ...output.modifiedInput,
        };
      }
    }
    if (output.modifiedOutput !== undefined) {
      merged.hasModifiedOutput = true;
      merged.modifiedOutput = output.modifiedOutput;
    }
    if (merged.decidedBy === undefined && output.action !== 'continue') {
      merged.action = output.action;
      merged.decidedBy = index;
      if (output.reason !== undefined) merged.reason = output.reason;
    }
  });
  return merged;
}

/** The text a tool result's `model` gets from a `modifiedOutput` (§5): strings as is. */
export function modelTextOf(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * What is wrong with `prompt` as a {@link Prompt} (a string, or an array of `{ type: 'text',
 * text }` and `{ type: 'image', image, mediaType? }` parts), or `undefined` when nothing is.
 * Checked by `send()` and by the workflow's `send` validator, so a malformed prompt is
 * refused before anything is recorded.
 */
export function promptProblem(prompt: unknown): string | undefined {
  if (typeof prompt === 'string') return undefined;
  if (!Array.isArray(prompt)) {
    return `prompt must be a string or an array of text and image parts, got ${inputValue(prompt)}`;
  }
  for (const [i, part] of prompt.entries()) {
    const p = part as Record<string, unknown> | null;
    const at = `prompt[${i}]`;
    if (!isPlainObject(p))
      return `${at} must be a { type: 'text' | 'image', ... } part, got ${inputValue(part)}`;
    if (p.type === 'text') {
      if (typeof p.text !== 'string')
        return `${at}.text must be a string, got ${inputValue(p.text)}`;
    } else if (p.type === 'image') {
      if (typeof p.image !== 'string')
        return `${at}.image must be a string (base64 data or a URL), got ${inputValue(p.image)}`;
      if (p.mediaType !== undefined && typeof p.mediaType !== 'string') {
        return `${at}.mediaType must be a string, got ${inputValue(p.mediaType)}`;
      }
    } else {
      return `${at}.type must be 'text' or 'image', got ${inputValue(p.type)}`;
    }
  }
  return undefined;
}

/** `value` as a message about a caller's input names it (`describe`, without the callback hint). */
function inputValue(value: unknown): string {
  return value === undefined ? 'undefined' : describe(value);
}

/** The prompt's text parts joined by `\n`, and its images (§2, UserPromptSubmit). */
export function describePrompt(prompt: Prompt): {
  userPrompt: string;
  hasImages: boolean;
  imageCount: number;
} {
  if (typeof prompt === 'string') return { userPrompt: prompt, hasImages: false, imageCount: 0 };
  const texts = prompt.filter((p): p is TextPart => p.type === 'text').map((p) => p.text);
  const imageCount = prompt.filter((p) => p.type === 'image').length;
  return { userPrompt: texts.join('\n'), hasImages: imageCount > 0, imageCount };
}

/**
 * Whether a UserPromptSubmit dispatch's outcome leaves the prompt exactly as sent: its
 * callbacks completed, none aborted and none replaced the text (what an inline dispatch needs
 * to call the model in the same step; see `ModelStepInput.hook`).
 */
export function leavesPromptAsIs(outcome: HookDispatchOutcome): boolean {
  if (outcome.status !== 'completed') return false;
  const merged = mergeHookOutputs(outcome.outputs);
  return merged.action !== 'abort' && typeof merged.modifiedInput?.userPrompt !== 'string';
}

/** What UserPromptSubmit's result does to the prompt (§5). */
type PromptDecision =
  { kind: 'accept'; prompt: Prompt } | { kind: 'reject'; reason: string; decidedBy: number };

/**
 * UserPromptSubmit: `abort` rejects the prompt; `skip` is ignored; `modifiedInput.userPrompt`
 * (a string) replaces the text and keeps every image, in their order, after the new text; `''` drops
 * the text.
 */
export function applyUserPromptSubmit(prompt: Prompt, merged: MergedHookResult): PromptDecision {
  if (merged.action === 'abort') {
    return {
      kind: 'reject',
      reason: merged.reason ?? 'The prompt was rejected by a UserPromptSubmit hook',
      decidedBy: merged.decidedBy ?? 0,
    };
  }
  const replacement = merged.modifiedInput?.userPrompt;
  if (typeof replacement !== 'string') return { kind: 'accept', prompt };
  if (typeof prompt === 'string') return { kind: 'accept', prompt: replacement };
  const images = prompt.filter((p): p is ImagePart => p.type === 'image');
  const parts: Array<TextPart | ImagePart> =
    replacement === '' ? [] : [{ type: 'text', text: replacement }];
  return { kind: 'accept', prompt: [...parts, ...images] };
}

/** What PreToolUse's result does to a tool call (§5). */
type PreToolUseDecision =
  | { kind: 'run'; toolInput: JsonObject }
  | { kind: 'skip' | 'abort'; result: ToolResult; reason: string };

/**
 * PreToolUse: `skip` gives a success result whose `model` is the reason (or a default naming
 * the tool); `abort` gives an error result with the reason; otherwise the `continue` edits
 * are merged into the input and the call goes on.
 */
export function applyPreToolUse(
  toolName: string,
  toolInput: JsonObject,
  merged: MergedHookResult,
): PreToolUseDecision {
  if (merged.action === 'skip') {
    const reason = merged.reason ?? `Tool ${toolName} was skipped by a PreToolUse hook`;
    return {
      kind: 'skip',
      reason,
      result: { status: 'success', model: reason, display: { summary: `Skipped ${toolName}` } },
    };
  }
  if (merged.action === 'abort') {
    const reason = merged.reason ?? `Tool ${toolName} was blocked by a PreToolUse hook`;
    return {
      kind: 'abort',
      reason,
      result: {
        status: 'error',
        model: reason,
        display: { summary: `Blocked ${toolName}` },
        error: { message: reason, type: 'HookAbort', code: 'HOOK_ABORTED' },
      },
    };
  }
  return { kind: 'run', toolInput: { ...toolInput, ...merged.modifiedInputBeforeDecision } };
}

/** What PermissionRequest's result does (§5): a deny, or the (edited) input going on. */
type PermissionHookDecision =
  | { kind: 'continue'; toolInput: JsonObject }
  | { kind: 'deny'; message: string; interrupt: boolean; toolInput: JsonObject };

/**
 * PermissionRequest: edits are merged first, then the action is read: `skip` denies without
 * interrupt, `abort` denies with interrupt; `continue` lets the permission policy decide on
 * the merged input.
 */
export function applyPermissionRequest(
  toolName: string,
  toolInput: JsonObject,
  merged: MergedHookResult,
): PermissionHookDecision {
  const input = { ...toolInput, ...merged.modifiedInput };
  if (merged.action === 'continue') return { kind: 'continue', toolInput: input };
  return {
    kind: 'deny',
    message: merged.reason ?? `Permission for ${toolName} was denied by a PermissionRequest hook`,
    interrupt: merged.action === 'abort',
    toolInput: input,
  };
}

/**
 * PostToolUse: `abort` turns the result into an error; `modifiedOutput` replaces `model`
 * (strings as is, anything else JSON-stringified); `display` is never touched.
 */
export function applyPostToolUse(result: ToolResult, merged: MergedHookResult): ToolResult {
  const model = merged.hasModifiedOutput
    ? modelTextOf(merged.modifiedOutput ?? null)
    : result.model;
  if (merged.action === 'abort') {
    const reason = merged.reason ?? 'The tool result was rejected by a PostToolUse hook';
    const error = { message: reason, type: 'HookAbort', code: 'HOOK_ABORTED' };
    const out: ToolResult = {
      status: 'error',
      model: merged.hasModifiedOutput ? model : reason,
      error,
    };
    if (result.display) out.display = result.display;
    if (result.metadata) out.metadata = result.metadata;
    return out;
  }
  return { ...result, model };
}

/** PostToolUseFailure: the result stays an error; `modifiedOutput` replaces `model`. */
export function applyPostToolUseFailure(result: ToolResult, merged: MergedHookResult): ToolResult {
  if (!merged.hasModifiedOutput) return result;
  return { ...result, model: modelTextOf(merged.modifiedOutput ?? null) };
}

/** TaskCompleted: `abort` fails the request with the reason; the rest is ignored. */
export function applyTaskCompleted(
  merged: MergedHookResult,
): { kind: 'ok' } | { kind: 'fail'; reason: string } {
  if (merged.action === 'abort') {
    return { kind: 'fail', reason: merged.reason ?? 'The task was failed by a TaskCompleted hook' };
  }
  return { kind: 'ok' };
}

/** SessionStart: `abort` fails session creation with the reason; the rest is ignored. */
export function applySessionStart(
  merged: MergedHookResult,
): { kind: 'ok' } | { kind: 'fail'; reason: string } {
  if (merged.action === 'abort') {
    return {
      kind: 'fail',
      reason: merged.reason ?? 'Session creation was aborted by a SessionStart hook',
    };
  }
  return { kind: 'ok' };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined (did the callback forget to return?)';
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `'${value.length > 40 ? cutPrefix(value, 40) + '…' : value}'`;
  if (isPlainObject(value)) return 'an object';
  if (typeof value === 'object') return `a ${value.constructor?.name ?? 'non-plain'} object`;
  return `${typeof value} ${String(value)}`;
}

/** Longest text field a hook payload carries, characters (payloads must stay under 2 MiB). */
const MAX_HOOK_TEXT_CHARS = 262_144;

/**
 * `text`, cut to at most `maxChars` UTF-16 code units (never inside a character) with a
 * marker saying how long it was and how much is shown.
 */
export function clipText(text: string, maxChars = MAX_HOOK_TEXT_CHARS): string {
  if (text.length <= maxChars) return text;
  const shown = cutPrefix(text, maxChars);
  return `${shown}\n[... truncated: ${text.length} characters in all, first ${shown.length} shown ...]`;
}
