/**
 * Provider models: an {@link AgentModel} backed by a hosted model (OpenAI, Anthropic, or
 * any OpenAI-compatible chat completions server) through the Vercel AI SDK.
 *
 * One `step()` is one model request: the session workflow runs the agent loop, executes
 * the tools and retries failed steps (through the `modelStep` activity's retry policy), so
 * this module never retries by itself and never executes a tool. It only classifies
 * failures, as a {@link ProviderError} (defined in `common/errors`, so it crosses to the
 * caller of `send()` intact) whose `retryable` tells the activity whether trying again
 * can help.
 *
 * This file holds the model factory; `provider-messages.ts` converts messages and tools
 * to and from the AI SDK's, and `provider-errors.ts` classifies failures.
 *
 * Node only (it makes HTTP requests); never import it from workflow code.
 *
 * @module
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { stepCountIs, streamText, type LanguageModel, type TextStreamPart, type ToolSet } from 'ai';
import { ConfigError, ProviderError } from '../common/errors.js';
import type { ModelStepOutput } from '../common/activity-io.js';
import type { AgentModel, ModelStepRequest } from './model.js';
import { classifyError, throwIfAborted, type ProviderSource } from './provider-errors.js';
import { toFinishReason, toModelMessages, toToolCalls, toToolSet } from './provider-messages.js';

export { ProviderError };

/** Which API a {@link providerModel} talks to. */
export type ModelProvider = 'openai' | 'anthropic' | 'openai-compatible';

/** Options of {@link providerModel}. */
export interface ProviderModelOptions {
  /** The provider's model id, e.g. `gpt-4o`, `claude-sonnet-4-5`, `llama3.1:8b`. */
  model: string;
  /**
   * API key. Sent as `Authorization: Bearer <key>` (OpenAI, OpenAI-compatible) or
   * `x-api-key` (Anthropic).
   *
   * @default the `OPENAI_API_KEY` environment variable (OpenAI and OpenAI-compatible) or
   *   `ANTHROPIC_API_KEY` (Anthropic), read at each step. An OpenAI-compatible server
   *   with neither gets an empty key (local servers usually need none); OpenAI and
   *   Anthropic without a key fail the step with a non-retryable {@link ProviderError}
   *   (`createAgent` with a model id checks this up front).
   *   Note that the default sends `OPENAI_API_KEY` to `baseUrl` too: pass `apiKey`
   *   when `baseUrl` is not a server you trust with it.
   */
  apiKey?: string;
  /**
   * Base URL of the API, up to and including the version segment, e.g.
   * `http://127.0.0.1:11434/v1` (requests go to `<baseUrl>/chat/completions`).
   *
   * @default the provider's public endpoint
   */
  baseUrl?: string;
  /**
   * Which API to talk to.
   *
   * @default `openai-compatible` when `baseUrl` is given; else `anthropic` for model ids
   *   starting with `claude`; else `openai`
   */
  provider?: ModelProvider;
  /**
   * Longest one step may take (the whole HTTP request), in ms. When it runs out the
   * request is aborted and the step fails with a retryable {@link ProviderError}.
   *
   * @default 120000
   */
  timeoutMs?: number;
}

/** Default of {@link ProviderModelOptions.timeoutMs}: 2 minutes, in ms. */
const DEFAULT_PROVIDER_TIMEOUT_MS = 120_000;

/**
 * A model behind a hosted API: OpenAI (chat completions API), Anthropic (messages API),
 * or any OpenAI-compatible chat completions server (`baseUrl`).
 *
 * Each `step()` sends `request.instructions` as the system message when given, the whole
 * conversation (`request.messages`) and the tools' declarations (name, description, JSON
 * Schema of the input, derived from the zod `inputSchema`), and returns the model's answer:
 * its text, the tool calls it asked for (the raw arguments, not validated: the workflow
 * validates them), and the finish reason (`tool-calls` whenever it asked for tools). One
 * request per step: no retries, no tool execution, no second step. The request streams
 * (`stream: true`, server-sent events): each piece of text goes to `request.onTextDelta` as
 * it arrives, and the step resolves once the answer is complete.
 *
 * `step()` rejects with:
 * - a {@link ProviderError} (a `ModelError`, code `MODEL_ERROR`) for a provider or
 *   network failure, `retryable` as classified there, `provider` and `model` set, and
 *   `statusCode` when the provider answered with an HTTP error; for an id sent to OpenAI
 *   only by default (no `provider`, no `baseUrl`, not `claude*`) that does not look like
 *   one of OpenAI's (`gpt-`, `o1`..., `chatgpt-`, `ft:`), the message ends saying it was
 *   taken as an OpenAI model and the URL it was sent to;
 * - the abort reason of `request.signal` itself when it aborts (inside the `modelStep`
 *   activity, Temporal's `CancelledFailure`, so the activity ends as cancelled); an
 *   abort reason that is not an `Error` becomes a `DOMException` named `AbortError`.
 *
 * @param options model id, and optionally key, endpoint, provider and timeout.
 * @returns an {@link AgentModel} named `<provider>:<model>`, e.g. `openai:gpt-4o`.
 * @throws {ConfigError} when `model` is empty, `baseUrl` is not an http(s) URL, or
 *   `timeoutMs` is not a positive finite number.
 *
 * @example
 * const model = providerModel({ model: 'gpt-4o' }); // OPENAI_API_KEY from the environment
 * const local = providerModel({ model: 'llama3.1:8b', baseUrl: 'http://127.0.0.1:11434/v1' });
 */
export function providerModel(options: ProviderModelOptions): AgentModel {
  const ctx = providerContext(options);
  return {
    name: `${ctx.provider}:${ctx.modelId}`,
    step: (request: ModelStepRequest) => runStep(ctx, request),
  };
}

/** What one {@link providerModel} knows, fixed at construction; read by each step. */
interface ProviderContext {
  options: ProviderModelOptions;
  modelId: string;
  provider: ModelProvider;
  baseUrl: string | undefined;
  timeoutMs: number;
  /** `<provider> <model>`: how failure messages name the model. */
  label: string;
  source: ProviderSource;
  /** See {@link guessedOpenAI}. */
  guessed: string | undefined;
}

/** Validate {@link ProviderModelOptions} and resolve the context every step reads. */
function providerContext(options: ProviderModelOptions): ProviderContext {
  const modelId = options.model;
  if (typeof modelId !== 'string' || modelId.trim() === '') {
    throw new ConfigError('providerModel: `model` must be a non-empty model id');
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigError(
      `providerModel: \`timeoutMs\` must be a positive number of ms, got ${String(options.timeoutMs)}`,
    );
  }
  const baseUrl = options.baseUrl;
  if (baseUrl !== undefined && !/^https?:\/\//i.test(baseUrl)) {
    throw new ConfigError(`providerModel: \`baseUrl\` must be an http(s) URL, got '${baseUrl}'`);
  }
  const provider = providerOf(modelId, options);
  return {
    options,
    modelId,
    provider,
    baseUrl,
    timeoutMs,
    label: `${provider} ${modelId}`,
    source: { provider, model: modelId },
    guessed: guessedOpenAI(modelId, options),
  };
}

/** The AI SDK model for one step; the API key is read now (option, else environment). */
function languageModel(ctx: ProviderContext): LanguageModel {
  const { options, provider, baseUrl, modelId } = ctx;
  if (provider === 'anthropic') {
    const apiKey = options.apiKey || process.env.ANTHROPIC_API_KEY;
    if (!apiKey) throw missingKey(ctx, 'ANTHROPIC_API_KEY');
    return createAnthropic({ apiKey, ...(baseUrl ? { baseURL: baseUrl } : {}) })(modelId);
  }
  let apiKey = options.apiKey || process.env.OPENAI_API_KEY;
  if (!apiKey) {
    if (provider === 'openai') throw missingKey(ctx, 'OPENAI_API_KEY');
    apiKey = '';
  }
  // The chat completions API, for OpenAI too: stateless (the conversation is ours),
  // and what OpenAI-compatible servers implement.
  return createOpenAI({ apiKey, ...(baseUrl ? { baseURL: baseUrl } : {}) }).chat(modelId);
}

function missingKey(ctx: ProviderContext, variable: string): ProviderError {
  return new ProviderError(
    `${ctx.label}: no API key: pass \`apiKey\` to providerModel() or set ${variable}`,
    { retryable: false, ...ctx.source },
  );
}

/** One model request: stream the answer, then return its text, tool calls and finish reason. */
async function runStep(ctx: ProviderContext, request: ModelStepRequest): Promise<ModelStepOutput> {
  const callerSignal = request.signal;
  throwIfAborted(callerSignal);
  const timeoutSignal = AbortSignal.timeout(ctx.timeoutMs);
  try {
    const abortSignal = AbortSignal.any([callerSignal, timeoutSignal]);
    // Streaming on: the text reaches `onTextDelta` as the provider sends it; the step's
    // output is the same as the whole answer's (text, tool calls, finish reason).
    const result = streamText({
      model: languageModel(ctx),
      // A sub-agent's instructions, as the provider's system message; top sessions send none.
      ...(request.instructions !== undefined ? { system: request.instructions } : {}),
      messages: toModelMessages(request.messages),
      tools: toToolSet(request.tools),
      maxRetries: 0,
      ...(request.maxOutputTokens !== undefined
        ? { maxOutputTokens: request.maxOutputTokens }
        : {}),
      abortSignal,
      stopWhen: stepCountIs(1),
      // Errors arrive as `error` parts and are classified below (the default logs them).
      onError: () => undefined,
    });
    await forwardStream(result.fullStream, request, abortSignal);
    const [text, calls, finishReason, usage] = await Promise.all([
      result.text,
      result.toolCalls,
      result.finishReason,
      result.usage,
    ]);
    const toolCalls = toToolCalls(calls, ctx.label, ctx.source);
    const output: ModelStepOutput = {
      text,
      finishReason: toFinishReason(finishReason, toolCalls.length),
    };
    if (toolCalls.length > 0) output.toolCalls = toolCalls;
    const reported = reportedUsage(usage);
    if (reported) output.usage = reported;
    return output;
  } catch (error) {
    throw stepFailure(ctx, error, callerSignal, timeoutSignal);
  }
}

/**
 * The step's usage as the AI SDK reports it (from the stream's final chunk when streaming), or
 * undefined when the provider did not report both input and output tokens (the budget then
 * counts the step by its estimate, as for a provider that reports none: a missing side is
 * never taken as 0). A missing total is input + output.
 */
function reportedUsage(
  usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number } | undefined,
): ModelStepOutput['usage'] {
  const inputTokens = usage?.inputTokens;
  const outputTokens = usage?.outputTokens;
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage?.totalTokens ?? inputTokens + outputTokens,
  };
}

/** Send each text delta to `request.onTextDelta`; throw a streamed error or abort. */
async function forwardStream(
  stream: AsyncIterable<TextStreamPart<ToolSet>>,
  request: ModelStepRequest,
  abortSignal: AbortSignal,
): Promise<void> {
  for await (const part of stream) {
    if (part.type === 'text-delta') {
      if (part.text !== '') request.onTextDelta?.(part.text);
    } else if (part.type === 'error') {
      throw part.error;
    } else if (part.type === 'abort') {
      throw abortSignal.reason;
    }
  }
}

/**
 * What a failed step rejects with: the caller's abort reason when it aborted, else a
 * {@link ProviderError} (a timeout, or the error classified), ending with the
 * {@link guessedOpenAI} sentence when there is one.
 */
function stepFailure(
  ctx: ProviderContext,
  error: unknown,
  callerSignal: AbortSignal,
  timeoutSignal: AbortSignal,
): unknown {
  const { label, source, guessed } = ctx;
  if (callerSignal.aborted) throwIfAborted(callerSignal);
  if (error instanceof ProviderError) return error;
  if (timeoutSignal.aborted) {
    return new ProviderError(
      `${label}: no answer within ${ctx.timeoutMs}ms (timeoutMs)${guessed ?? ''}`,
      { retryable: true, ...source, cause: error },
    );
  }
  const failure = classifyError(label, source, error);
  if (guessed === undefined) return failure;
  return new ProviderError(`${failure.message}${guessed}`, {
    retryable: failure.retryable,
    ...(failure.statusCode !== undefined ? { statusCode: failure.statusCode } : {}),
    ...source,
    cause: error,
  });
}

/** How OpenAI's own model ids begin (`gpt-4o`, `o3-mini`, `chatgpt-4o-latest`, `ft:...`). */
const OPENAI_ID = /^(gpt-|o\d|chatgpt-|ft:|text-|davinci|babbage|codex-|computer-use|omni-)/i;

/**
 * For a model id sent to OpenAI only because nothing said otherwise (no `provider`, no
 * `baseUrl`, not `claude*`) and that does not look like one of OpenAI's ids: the sentence
 * a failed step's message ends with, saying the id was taken as an OpenAI model, where it
 * went, and how to send it elsewhere. Undefined otherwise.
 */
function guessedOpenAI(
  modelId: string,
  options: { baseUrl?: string | undefined; provider?: ModelProvider | undefined },
): string | undefined {
  if (options.provider !== undefined || options.baseUrl !== undefined) return undefined;
  if (providerOf(modelId) !== 'openai' || OPENAI_ID.test(modelId)) return undefined;
  // Where the AI SDK sends it: OPENAI_BASE_URL when set, else OpenAI's public API.
  const base = (process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1').replace(/\/+$/, '');
  return (
    ` (model id '${modelId}' was taken as an OpenAI model and sent to ${base}/chat/completions: ` +
    "an id without `baseUrl` that does not start with 'claude' goes to OpenAI; for a model " +
    'served elsewhere pass `baseUrl` (an OpenAI-compatible server, e.g. ' +
    'http://127.0.0.1:11434/v1), or give a model object)'
  );
}

/**
 * Which API a model id goes to: `options.provider`; else `openai-compatible` with a
 * `baseUrl`; else `anthropic` for ids starting with `claude`; else `openai`.
 */
export function providerOf(
  model: string,
  options: { baseUrl?: string | undefined; provider?: ModelProvider | undefined } = {},
): ModelProvider {
  if (options.provider) return options.provider;
  if (options.baseUrl !== undefined) return 'openai-compatible';
  return model.startsWith('claude') ? 'anthropic' : 'openai';
}

/**
 * The environment variable a provider's API key comes from when `apiKey` is not given:
 * `ANTHROPIC_API_KEY` for Anthropic, `OPENAI_API_KEY` for OpenAI and OpenAI-compatible
 * servers. `required` is false for OpenAI-compatible servers (local ones usually need no
 * key: without one, requests carry an empty key).
 */
export function apiKeyVariable(provider: ModelProvider): { variable: string; required: boolean } {
  if (provider === 'anthropic') return { variable: 'ANTHROPIC_API_KEY', required: true };
  return { variable: 'OPENAI_API_KEY', required: provider === 'openai' };
}
