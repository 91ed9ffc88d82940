/**
 * The model step activity: one call to the agent's model.
 *
 * @module
 */
import { McpToolLists, offeredMcpTool } from './mcp.js';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure, ensureApplicationFailure } from '@temporalio/common';
import { AgentSdkError, ModelError, messageOf, serializeError } from '../src/common/errors.js';
import type { ConversationMessage } from '../src/common/conversation.js';
import {
  MODEL_STEP_PROVIDER_ATTEMPTS,
  type DispatchHookInput,
  type HookDispatchOutcome,
  type InlineHookDetail,
  type ModelStepInput,
  type ModelStepOutput,
} from '../src/common/activity-io.js';
import { leavesPromptAsIs } from '../src/common/hook-rules.js';
import { allowedByPatterns } from '../src/common/permission-rules.js';
import { readConversationPages } from '../src/temporal/conversation-reader.js';
import type { Prompt } from '../src/common/types.js';
import type { AgentRegistry } from '../src/definition/registry.js';
import { cutPrefix } from '../src/common/text.js';
import type { CachedContext, ConversationCache } from './conversation-cache.js';
import { modelStepStream } from '../src/stream/writer.js';
import { streamTargetOf } from './stream-events.js';

/** How often a model step heartbeats, ms: how long an abort takes to stop a provider call. */
const MODEL_HEARTBEAT_MS = 250;

/** Longest assistant text kept from one step, characters; more is cut with a marker. */
export const MAX_MODEL_TEXT_CHARS = 524_288;

/**
 * A step's output must fit Temporal's 2 MiB payload limit. Text over
 * {@link MAX_MODEL_TEXT_CHARS} is cut (the rest could never be recorded), never inside a
 * character, with a marker line; tool calls too big to record fail the step without retries.
 *
 * @throws ApplicationFailure (`ModelError`, not retryable) when the output is still over
 *   1500000 bytes of JSON.
 */
export function boundOutput(output: ModelStepOutput): ModelStepOutput {
  const bounded =
    output.text.length > MAX_MODEL_TEXT_CHARS
      ? {
          ...output,
          text: `${cutPrefix(output.text, MAX_MODEL_TEXT_CHARS)}\n[... truncated: the model returned ${output.text.length} characters ...]`,
        }
      : output;
  const bytes = Buffer.byteLength(JSON.stringify(bounded));
  if (bytes > 1_500_000) {
    throw ApplicationFailure.create({
      type: 'ModelError',
      message: `The model step's output is ${bytes} bytes (tool call inputs included); the limit is 1500000`,
      nonRetryable: true,
      details: [
        {
          name: 'ModelError',
          code: 'MODEL_ERROR',
          message: `The model step's output is ${bytes} bytes; the limit is 1500000`,
        },
      ],
    });
  }
  return bounded;
}

/**
 * Build `modelStep`. With `conversationCache`, a step whose stamp matches the worker's copy
 * of its context reads it there; any other step queries the workflow and keeps the answer.
 * A step carrying an inline dispatch (`input.hook`) runs it first with `dispatchInline` (the
 * worker's `dispatchHook`, its stream event and span included).
 */
export function createModelActivities(deps: ModelActivityDeps) {
  async function modelStep(input: ModelStepInput): Promise<ModelStepOutput> {
    const ctx = Context.current();
    try {
      return await runStep(deps, input, Date.now());
    } catch (error) {
      throw withStepBackoff(error, ctx.info.attempt, ctx.cancellationSignal.aborted);
    }
  }
  return { modelStep };
}

/** What {@link createModelActivities} builds `modelStep` from. */
interface ModelActivityDeps {
  registry: AgentRegistry;
  conversationCache?: ConversationCache;
  /** The MCP tool lists this worker has seen. @default none kept (read from the session) */
  mcpLists?: McpToolLists;
  dispatchInline?: (input: DispatchHookInput) => Promise<HookDispatchOutcome>;
}

/** What an inline step hands its model call: the cached context, its live stream, its detail. */
interface InlineCall {
  cached: CachedContext;
  live: ReturnType<typeof modelStepStream>;
  detail: InlineHookDetail;
}

/** One step: its inline dispatch first when it carries one, then the model call. */
async function runStep(
  deps: ModelActivityDeps,
  input: ModelStepInput,
  startedAt: number,
): Promise<ModelStepOutput> {
  if (!input.hook) return callModel(deps, input, startedAt);
  if (!deps.dispatchInline) throw new Error('This worker cannot run inline hook dispatches');
  const ctx = Context.current();
  const { stream } = deps.registry.agent(input.agentName, input.version);
  // A retry's `restart` marker goes on the send's stream before its callbacks' `hook` event.
  const live = modelStepStream(stream, streamTargetOf(input), input, ctx.info.attempt);
  await live.flush();
  const hook = await deps.dispatchInline(input.hook);
  const deferred = (why: 'hook' | 'context'): ModelStepOutput => ({
    text: '',
    finishReason: 'other',
    hook,
    deferred: why,
  });
  // Rejected, rewritten or failed: the workflow decides what happens next, as for any dispatch.
  if (!leavesPromptAsIs(hook)) return deferred('hook');
  // The stamped context includes the prompt, which the workflow adds only once this step
  // returns: a query would answer without it, so only an exact cached copy will do.
  const execution = ctx.info.workflowExecution;
  const cached = execution && deps.conversationCache?.lookup(execution.workflowId, input.context);
  if (!cached) return deferred('context');
  // What the callbacks decided rides on the model call's heartbeats: a step that times out
  // during the call (its heartbeat timeout is 1 s at least, the heartbeats 250 ms apart)
  // still tells the workflow. None is sent at once: a heartbeat is an RPC, and a step's
  // first one holds up its completion by a round trip.
  const detail: InlineHookDetail = { inlineHook: hook };
  try {
    // Cancelled, the step ends at once (the workflow waits for it to report), whether or not
    // the model heeds its signal; a late answer is dropped.
    const output = await Promise.race([
      callModel(deps, input, startedAt, { cached, live, detail }),
      ctx.cancelled,
    ]);
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure('The model step was cancelled');
    return { ...output, hook };
  } catch (error) {
    throw withInlineHook(error, hook, ctx);
  }
}

/**
 * The model call. An inline step hands over the context it read from the cache, the live
 * stream it opened, and the detail its heartbeats carry.
 */
async function callModel(
  deps: ModelActivityDeps,
  input: ModelStepInput,
  startedAt: number,
  inline?: InlineCall,
): Promise<ModelStepOutput> {
  const ctx = Context.current();
  // A sub-agent's step runs its own model, tools and instructions where it has them.
  const {
    agent,
    model,
    tools: own,
    instructions,
  } = deps.registry.definitionFor(input.agentName, input.version, input.lineage);
  // The MCP tools the session started with, exactly as it listed them.
  const tools =
    input.mcpTools === undefined
      ? own
      : [
          ...own,
          ...(await (deps.mcpLists ?? new McpToolLists()).get(ctx, input.mcpTools)).tools
            .filter((tool) => allowedByPatterns(input.mcpAllow, tool.name))
            .map(offeredMcpTool),
        ];
  const { stream } = agent;
  const cached = inline?.cached;
  // The live stream: text deltas go to the send's stream transport, never to history.
  const live =
    inline?.live ?? modelStepStream(stream, streamTargetOf(input), input, ctx.info.attempt);
  // Heartbeats carry cancellation: an abort stops the provider call within ~this interval.
  const heartbeat = setInterval(() => ctx.heartbeat(inline?.detail), MODEL_HEARTBEAT_MS);
  const deadline = stepDeadline(ctx, startedAt);
  try {
    const { messages, prompt } = cached
      ? { ...cached, messages: cached.messages as ConversationMessage[] }
      : await conversationOf(ctx, input, deps.conversationCache);
    // Histories from before 0.2 carry the prompt in the input; now it comes with the context.
    const stepPrompt = input.step === 0 ? (input.prompt ?? prompt) : undefined;
    const { prompt: _carried, streamEvents: _published, lineage, ...rest } = input;
    const output = await Promise.race([
      model.step({
        ...rest,
        ...(stepPrompt !== undefined ? { prompt: stepPrompt } : {}),
        ...(instructions !== undefined ? { instructions } : {}),
        ...(lineage ? { agentPath: lineage.agentPath } : {}),
        messages,
        tools,
        signal: AbortSignal.any([ctx.cancellationSignal, deadline.signal]),
        ...live.request,
      }),
      deadline.reached,
    ]);
    // Usage is recorded only where a budget reads it: other sessions' histories stay as they were.
    if (input.maxOutputTokens === undefined && output.usage) {
      const { usage: _usage, ...kept } = output;
      return boundOutput(kept);
    }
    return boundOutput(output);
  } catch (error) {
    throw asStepFailure(error);
  } finally {
    clearInterval(heartbeat);
    deadline.clear();
    await live.flush();
  }
}

/**
 * What a failed model call throws. Our own errors (a script that ran out, a 401) are not
 * worth retrying unless they say so (a 503, a reset connection); anything else goes through
 * the retry policy. Ours carry their serialized form, so the caller of `send()` gets the
 * same class with its details (statusCode, retryable, provider, model), also once the
 * retries of a retryable one ran out.
 */
function asStepFailure(error: unknown): unknown {
  const retryable = (error as { retryable?: boolean }).retryable;
  if (error instanceof AgentSdkError) {
    return ApplicationFailure.create({
      type: error.name,
      message: error.message,
      nonRetryable: retryable !== true,
      details: [serializeError(error)],
    });
  }
  return error;
}

/** How long before Temporal's start-to-close backstop a step ends itself, ms. */
const STEP_DEADLINE_MARGIN_MS = 5_000;

/**
 * The step's own end, {@link STEP_DEADLINE_MARGIN_MS} before the activity's start-to-close
 * timeout (`modelTimeoutMs` + 10 s, plus an inline dispatch's budget): a model that ignores
 * its budget then fails the step with a retryable ModelError, paced like any provider failure
 * ({@link withStepBackoff}), rather than timing out, which Temporal retries as a lost worker
 * would be (100 ms later). Its signal aborts the model call; `reached` rejects at the end.
 */
function stepDeadline(ctx: Context, startedAt: number) {
  const controller = new AbortController();
  const budgetMs = ctx.info.startToCloseTimeoutMs - STEP_DEADLINE_MARGIN_MS;
  let timer: NodeJS.Timeout | undefined;
  const reached = new Promise<never>((_resolve, reject) => {
    // No room for an end of its own (a start-to-close timeout under the margin, as a test
    // environment may give): Temporal's timeout is the only one.
    if (budgetMs <= 0) return;
    timer = setTimeout(
      () => {
        const error = new ModelError(
          `The model did not answer within ${budgetMs} ms: the step's own limit, modelTimeoutMs ` +
            `+ 5 s (a built-in provider ends its call at modelTimeoutMs; this model did not)`,
          { retryable: true },
        );
        controller.abort(error);
        reject(error);
      },
      Math.max(budgetMs - (Date.now() - startedAt), 0),
    );
  });
  reached.catch(() => undefined); // raced while the call runs; unobserved after
  return { signal: controller.signal, reached, clear: () => clearTimeout(timer) };
}

/** The wait before the retry of a step that failed, ms: 1 s, doubled per attempt, 30 s at most. */
export function stepRetryDelayMs(attempt: number): number {
  return Math.min(1_000 * 2 ** (Math.max(attempt, 1) - 1), 30_000);
}

/**
 * A failure the step threw, with the wait before its retry ({@link stepRetryDelayMs}) as its
 * `nextRetryDelay`, or final from attempt {@link MODEL_STEP_PROVIDER_ATTEMPTS} on. The retry
 * policy's own backoff (`modelStepActivity`: 100 ms, doubled, up to
 * `MODEL_STEP_MAX_ATTEMPTS` attempts) then applies only where the step threw nothing: a
 * heartbeat or start-to-close timeout, that is a lost worker, whose step goes to another
 * worker at once. Cancellations (`cancelled`: the step's cancellation signal fired, whatever
 * it threw) and failures that are not retried pass as they are; the others are copied, with a
 * `nextRetryDelay` the model set kept, and a final one keeps its details (a ProviderError's
 * `retryable` stays as the provider said).
 */
export function withStepBackoff(error: unknown, attempt: number, cancelled = false): unknown {
  // A cancelled step's error (an AbortError too) is left for the worker to report as cancelled.
  if (cancelled || error instanceof CancelledFailure) return error;
  if (error instanceof ApplicationFailure && error.nonRetryable) return error;
  // A copy: the model may throw one failure object again at every attempt.
  const failure = ensureApplicationFailure(error);
  const final = attempt >= MODEL_STEP_PROVIDER_ATTEMPTS;
  const paced = new ApplicationFailure(
    failure.message,
    failure.type,
    final,
    failure.details,
    failure.cause,
    final ? undefined : (failure.nextRetryDelay ?? stepRetryDelayMs(attempt)),
    failure.category,
  );
  paced.stack = failure.stack;
  return paced;
}

/**
 * The model call of a step whose inline callbacks completed failed or was cancelled: the
 * failure carries what the callbacks decided ({@link InlineHookDetail}, its last detail), so
 * the workflow records it. An ApplicationFailure keeps its type and retryability; any other
 * error becomes a retryable one of its name.
 */
function withInlineHook(error: unknown, hook: HookDispatchOutcome, ctx: Context): unknown {
  const detail: InlineHookDetail = { inlineHook: hook };
  if (error instanceof CancelledFailure || ctx.cancellationSignal.aborted) {
    return new CancelledFailure(messageOf(error), [detail]);
  }
  if (error instanceof ApplicationFailure) {
    return ApplicationFailure.create({
      message: error.message,
      ...(error.type ? { type: error.type } : {}),
      nonRetryable: error.nonRetryable === true,
      details: [...(error.details ?? [null]), detail],
    });
  }
  return ApplicationFailure.create({
    message: messageOf(error),
    type: error instanceof Error ? error.name : 'Error',
    details: [null, detail],
    ...(error instanceof Error ? { cause: error } : {}),
  });
}

/**
 * Let any worker take the session's next workflow task and query (`ResetStickyTaskQueue`).
 * A retried step that misses the cache most likely follows a lost worker, and that worker
 * was the session's sticky one too (the step started eagerly where it was scheduled): the
 * step's query would first wait out the sticky schedule-to-start timeout on a queue nobody
 * polls (measured by `bench:chaos` with `BENCH_CHAOS_MODEL_MS`: such retries reached their
 * model call 1.8 to 2 s after being scheduled). Where that worker lives, it costs one replay.
 * Best effort: a refusal leaves the query to Temporal's own fallback.
 */
async function leaveStickyQueue(
  ctx: Context,
  execution: { workflowId: string; runId: string },
): Promise<void> {
  try {
    await ctx.client.workflowService.resetStickyTaskQueue({
      namespace: ctx.info.namespace,
      execution,
    });
  } catch {
    // Not allowed to, or the run is gone: the query goes its usual way.
  }
}

/**
 * The conversation, read from the session workflow by query: queries are not recorded in
 * history, so each message is in history once, however many steps read it.
 */
async function conversationOf(
  ctx: Context,
  input: ModelStepInput,
  cache: ConversationCache | undefined,
): Promise<{ messages: ConversationMessage[]; prompt?: Prompt }> {
  const execution = ctx.info.workflowExecution;
  if (!execution) return { messages: [] };
  const cached = cache?.lookup(execution.workflowId, input.context);
  if (cached) return { ...cached, messages: cached.messages as ConversationMessage[] };
  if (ctx.info.attempt > 1) await leaveStickyQueue(ctx, execution);
  // This run, by run id: a step of an earlier run (a retry racing a rollover) reads its own.
  const read = await readConversationPages(
    ctx.client.workflow.getHandle(execution.workflowId, execution.runId),
  );
  // Kept only if it is the stamped state (it is: nothing is added while a step runs).
  if (execution.runId === input.context?.runId)
    cache?.store(execution.workflowId, input.context, read);
  return read;
}
