/**
 * What one `send()` of a session takes and comes to: its options, its response, and the
 * checks and answers it makes before the workflow has it (the prompt's size, an abort
 * before the start).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { ConfigError, deserializeError, serializeError } from '../common/errors.js';
import type { SendResult, SendStatus, ToolCallRecord } from '../common/messages.js';
import type { Prompt } from '../common/types.js';
import type { BudgetExceeded } from '../common/budgets.js';
import { localAbortReason, rememberAbortReason } from '../definition/registry.js';

/** Options of {@link Session.send}. */
export interface SendOptions {
  /** Aborting it aborts this prompt, as `session.abort(signal.reason)` would. */
  signal?: AbortSignal;
  /**
   * Id of this request; a retried call with the same id runs once (the workflow Update id).
   * @default a random UUID
   */
  requestId?: string;
}

/** What one `send()` came to. */
export class SendResponse {
  /** The request's id (also TaskCompleted's `taskId`). */
  readonly requestId: string;
  /**
   * `completed`, `aborted`, `interrupted` (a permission denial stopped it), `max_turns`, or
   * `budget_exceeded` (a cap of the session's budget stopped it: {@link SendResponse.budgetExceeded}).
   */
  readonly status: SendStatus;
  /** When `status` is `budget_exceeded`: the cap, its value, the spend, what was reserved. */
  readonly budgetExceeded: BudgetExceeded | undefined;
  /**
   * The tool calls the model made, in order, with how each ended. An aborted send lists the
   * calls made before the abort too (a tool that ran keeps its status; the calls it cut short
   * read `cancelled`); one aborted before it started has none.
   */
  readonly toolCalls: readonly ToolCallRecord[];
  /**
   * When `status` is `aborted`: the reason given to `abort()` (the very object when the
   * abort was made in this process, else an `Error` rebuilt from it).
   */
  readonly abortReason: unknown;
  readonly #text: string;

  constructor(result: SendResult) {
    this.requestId = result.requestId;
    this.status = result.status;
    this.toolCalls = result.toolCalls;
    this.#text = result.text;
    this.budgetExceeded = result.budgetExceeded;
    if (result.abort) {
      const local = localAbortReason(result.abort.abortId);
      this.abortReason = local.found ? local.reason : deserializeError(result.abort.reason);
    } else {
      this.abortReason = undefined;
    }
  }

  /** The final assistant text, or `''`. */
  text(): string {
    return this.#text;
  }
}

/** Largest prompt `send()` takes, bytes of JSON (Temporal rejects payloads over 2 MiB). */
export const MAX_PROMPT_BYTES = 1_048_576;

export function checkPromptSize(prompt: Prompt): void {
  const bytes = new TextEncoder().encode(JSON.stringify(prompt ?? null)).length;
  if (bytes > MAX_PROMPT_BYTES) {
    throw new ConfigError(
      `send(): the prompt is ${bytes} bytes of JSON; the limit is ${MAX_PROMPT_BYTES} ` +
        `(Temporal rejects payloads over 2 MiB). Put large content in a workspace file instead.`,
    );
  }
}

/**
 * The result of a send aborted before the workflow accepted it (while it waited for its
 * turn, or while the run was continuing as new): nothing ran. Undefined while `signal` has
 * not aborted.
 */
export function abortedBeforeStart(
  requestId: string,
  signal: AbortSignal | undefined,
): SendResult | undefined {
  if (!signal?.aborted) return undefined;
  const abortId = randomUUID();
  rememberAbortReason(abortId, signal.reason);
  return {
    requestId,
    status: 'aborted',
    text: '',
    toolCalls: [],
    abort: { abortId, reason: serializeError(signal.reason) },
  };
}
