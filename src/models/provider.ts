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
 * Node only (it makes HTTP requests); never import it from workflow code.
 *
 * @module
 */
import { STATUS_CODES } from 'node:http';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import {
  APICallError,
  InvalidArgumentError,
  InvalidPromptError,
  LoadAPIKeyError,
  NoSuchModelError,
  TypeValidationError,
  UnsupportedFunctionalityError,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  type FinishReason,
  type LanguageModel,
  type ModelMessage,
  type ToolSet,
  type UserContent,
} from 'ai';
import { z } from 'zod';
import type { ConversationMessage, ToolCall } from '../common/conversation.js';
import { ConfigError, ProviderError, type ModelErrorDetails } from '../common/errors.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import type { ModelStepOutput } from '../common/activity-io.js';
import { cutPrefix } from '../common/text.js';
import type { ToolDefinition } from '../tools/tool.js';
import type { AgentModel, ModelStepRequest } from './model.js';

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
   *   (`createAgent` with a model id checks this up front: see {@link apiKeyVariable}).
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
   * @default 120000 ({@link DEFAULT_PROVIDER_TIMEOUT_MS})
   */
  timeoutMs?: number;
}

/** Default of {@link ProviderModelOptions.timeoutMs}: 2 minutes, in ms. */
const DEFAULT_PROVIDER_TIMEOUT_MS = 120_000;

/**
 * A model behind a hosted API: OpenAI (chat completions API), Anthropic (messages API),
 * or any OpenAI-compatible chat completions server (`baseUrl`).
 *
 * Each `step()` sends the whole conversation (`request.messages`) and the tools'
 * declarations (name, description, JSON Schema of the input, derived from the zod
 * `inputSchema`), and returns the model's answer: its text, the tool calls it asked for
 * (the raw arguments, not validated: the workflow validates them), and the finish reason
 * (`tool-calls` whenever it asked for tools). One request per step: no retries, no tool
 * execution, no second step. The request streams (`stream: true`, server-sent events):
 * each piece of text goes to `request.onTextDelta` as it arrives, and the step resolves
 * once the answer is complete.
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
  const label = `${provider} ${modelId}`;
  const source = { provider, model: modelId };
  const guessed = guessedOpenAI(modelId, options);

  function languageModel(): LanguageModel {
    if (provider === 'anthropic') {
      const apiKey = options.apiKey || process.env.ANTHROPIC_API_KEY;
      if (!apiKey) throw missingKey('ANTHROPIC_API_KEY');
      return createAnthropic({ apiKey, ...(baseUrl ? { baseURL: baseUrl } : {}) })(modelId);
    }
    let apiKey = options.apiKey || process.env.OPENAI_API_KEY;
    if (!apiKey) {
      if (provider === 'openai') throw missingKey('OPENAI_API_KEY');
      apiKey = '';
    }
    // The chat completions API, for OpenAI too: stateless (the conversation is ours),
    // and what OpenAI-compatible servers implement.
    return createOpenAI({ apiKey, ...(baseUrl ? { baseURL: baseUrl } : {}) }).chat(modelId);
  }

  function missingKey(variable: string): ProviderError {
    return new ProviderError(
      `${label}: no API key: pass \`apiKey\` to providerModel() or set ${variable}`,
      { retryable: false, ...source },
    );
  }

  return {
    name: `${provider}:${modelId}`,
    async step(request: ModelStepRequest): Promise<ModelStepOutput> {
      const callerSignal = request.signal;
      throwIfAborted(callerSignal);
      const timeoutSignal = AbortSignal.timeout(timeoutMs);
      try {
        const abortSignal = AbortSignal.any([callerSignal, timeoutSignal]);
        // Streaming on: the text reaches `onTextDelta` as the provider sends it; the step's
        // output is the same as the whole answer's (text, tool calls, finish reason).
        const result = streamText({
          model: languageModel(),
          messages: toModelMessages(request.messages),
          tools: toToolSet(request.tools),
          maxRetries: 0,
          abortSignal,
          stopWhen: stepCountIs(1),
          // Errors arrive as `error` parts and are classified below (the default logs them).
          onError: () => undefined,
        });
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') {
            if (part.text !== '') request.onTextDelta?.(part.text);
          } else if (part.type === 'error') {
            throw part.error;
          } else if (part.type === 'abort') {
            throw abortSignal.reason;
          }
        }
        const [text, calls, finishReason] = await Promise.all([
          result.text,
          result.toolCalls,
          result.finishReason,
        ]);
        const toolCalls: ToolCall[] = calls.map((call) => {
          if (!isPlainObject(call.input)) {
            // Unparsable arguments: another sample may well be fine.
            throw new ProviderError(
              `${label}: the model called tool '${call.toolName}' with arguments that are not a JSON object: ${snippet(
                typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
              )}`,
              { retryable: true, ...source },
            );
          }
          return {
            toolUseId: call.toolCallId,
            toolName: call.toolName,
            input: call.input as JsonObject,
          };
        });
        const output: ModelStepOutput = {
          text,
          finishReason: toFinishReason(finishReason, toolCalls.length),
        };
        if (toolCalls.length > 0) output.toolCalls = toolCalls;
        return output;
      } catch (error) {
        if (callerSignal.aborted) throwIfAborted(callerSignal);
        if (error instanceof ProviderError) throw error;
        if (timeoutSignal.aborted) {
          throw new ProviderError(
            `${label}: no answer within ${timeoutMs}ms (timeoutMs)${guessed ?? ''}`,
            { retryable: true, ...source, cause: error },
          );
        }
        const failure = classifyError(label, source, error);
        if (guessed === undefined) throw failure;
        throw new ProviderError(`${failure.message}${guessed}`, {
          retryable: failure.retryable,
          ...(failure.statusCode !== undefined ? { statusCode: failure.statusCode } : {}),
          ...source,
          cause: error,
        });
      }
    },
  };
}

/** Throw `signal`'s reason (as an `Error`) when it has aborted. */
function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  if (reason instanceof Error) throw reason;
  throw new DOMException(
    reason === undefined
      ? 'The model step was aborted'
      : `The model step was aborted: ${String(reason)}`,
    'AbortError',
  );
}

/** HTTP statuses worth another attempt besides 5xx: request timeout, conflict, rate limit. */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);

/** Network error codes (on the error or its causes) of failures worth another attempt. */
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

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

/** Turn whatever `streamText` raised (thrown or as an `error` part) into a {@link ProviderError}. */
function classifyError(
  label: string,
  source: Pick<ModelErrorDetails, 'provider' | 'model'>,
  error: unknown,
): ProviderError {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status !== undefined && (status < 200 || status >= 300)) {
      const statusText = STATUS_CODES[status] ?? 'Error';
      let detail = error.message.trim();
      if ((detail === '' || detail === statusText) && error.responseBody) {
        detail = snippet(error.responseBody);
      }
      const message = `${label}: ${status} ${statusText}${detail && detail !== statusText ? `: ${detail}` : ''}`;
      return new ProviderError(message, {
        retryable: RETRYABLE_STATUSES.has(status) || status >= 500,
        statusCode: status,
        ...source,
        cause: error,
      });
    }
    const networkCode = findNetworkCode(error);
    if (status === undefined && (error.isRetryable || networkCode !== undefined)) {
      return new ProviderError(`${label}: cannot reach ${error.url}: ${describe(error)}`, {
        retryable: true,
        ...source,
        cause: error,
      });
    }
    // A 2xx the SDK could not read: the endpoint does not speak the provider's protocol.
    return new ProviderError(
      `${label}: ${status === undefined ? '' : `${status} answer from ${error.url} `}unusable: ${describe(error)}`,
      {
        retryable: error.isRetryable,
        ...(status === undefined ? {} : { statusCode: status }),
        ...source,
        cause: error,
      },
    );
  }
  if (
    LoadAPIKeyError.isInstance(error) ||
    InvalidPromptError.isInstance(error) ||
    InvalidArgumentError.isInstance(error) ||
    NoSuchModelError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error)
  ) {
    // Rejected before or after the request, the same way every time.
    return new ProviderError(`${label}: ${describe(error)}`, {
      retryable: false,
      ...source,
      cause: error,
    });
  }
  if (findNetworkCode(error) !== undefined) {
    return new ProviderError(`${label}: network failure: ${describe(error)}`, {
      retryable: true,
      ...source,
      cause: error,
    });
  }
  // Unknown: let the activity's retry policy (bounded) have a go.
  return new ProviderError(`${label}: ${describe(error)}`, {
    retryable: true,
    ...source,
    cause: error,
  });
}

/** The first retryable network error code on `error` or its chain of causes. */
function findNetworkCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE_NETWORK_CODES.has(code)) return code;
    current = current.cause;
  }
  return undefined;
}

/** An error's message, with its innermost cause's when that says more. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let root: Error = error;
  const seen = new Set<Error>([error]);
  while (root.cause instanceof Error && !seen.has(root.cause)) {
    root = root.cause;
    seen.add(root);
  }
  const rootMessage = root.message.trim();
  return root !== error && rootMessage && !error.message.includes(rootMessage)
    ? `${error.message} (${rootMessage})`
    : error.message;
}

/** `text`, cut to 300 characters (never inside one). */
function snippet(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 300 ? `${cutPrefix(trimmed, 300)}…` : trimmed;
}

function toFinishReason(
  reason: FinishReason,
  toolCallCount: number,
): ModelStepOutput['finishReason'] {
  if (toolCallCount > 0) return 'tool-calls';
  switch (reason) {
    case 'stop':
    case 'length':
    case 'error':
      return reason;
    default:
      // `content-filter`, `other`, and `tool-calls` without any call.
      return 'other';
  }
}

/**
 * Our conversation as AI SDK messages. Assistant messages with neither text nor tool
 * calls are left out (Anthropic rejects empty messages); empty text parts too.
 */
function toModelMessages(messages: readonly ConversationMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'user': {
        const content: UserContent =
          typeof message.content === 'string'
            ? message.content
            : message.content.map((part) =>
                part.type === 'text'
                  ? { type: 'text' as const, text: part.text }
                  : {
                      type: 'image' as const,
                      // Base64, or an https:/data: URL: the SDK tells them apart.
                      image: part.image,
                      ...(part.mediaType ? { mediaType: part.mediaType } : {}),
                    },
              );
        out.push({ role: 'user', content });
        break;
      }
      case 'assistant': {
        const content: Exclude<Extract<ModelMessage, { role: 'assistant' }>['content'], string> =
          [];
        if (message.text !== '') content.push({ type: 'text', text: message.text });
        for (const call of message.toolCalls) {
          content.push({
            type: 'tool-call',
            toolCallId: call.toolUseId,
            toolName: call.toolName,
            input: call.input,
          });
        }
        if (content.length > 0) out.push({ role: 'assistant', content });
        break;
      }
      case 'tool':
        if (message.results.length === 0) break;
        out.push({
          role: 'tool',
          content: message.results.map((result) => ({
            type: 'tool-result' as const,
            toolCallId: result.toolUseId,
            toolName: result.toolName,
            output:
              result.status === 'error'
                ? { type: 'error-text' as const, value: result.model }
                : { type: 'text' as const, value: result.model },
          })),
        });
        break;
    }
  }
  return out;
}

/**
 * Our tools as AI SDK tools: declarations only (no `execute`, so the SDK runs nothing),
 * with the JSON Schema of each zod input schema's input side and no validation (the
 * workflow validates the arguments and answers the model with an error result).
 */
function toToolSet(tools: readonly ToolDefinition[]): ToolSet | undefined {
  if (tools.length === 0) return undefined;
  const set: ToolSet = {};
  for (const def of tools) {
    const schema = z.toJSONSchema(def.inputSchema, {
      target: 'draft-07',
      io: 'input',
      unrepresentable: 'any',
    });
    set[def.name] = tool({
      description: def.description,
      inputSchema: jsonSchema<JsonObject>(schema as Parameters<typeof jsonSchema>[0]),
    });
  }
  return set;
}
