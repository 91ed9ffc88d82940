/**
 * The options of `createAgent` and sessions, their defaults, and the one function that
 * validates and resolves them.
 *
 * @module
 */
import { hookDispatchProblem, type HookDispatchMode } from '../common/hook-dispatch-mode.js';
import { z } from 'zod';
import { DEFAULTS, MAX_TIMEOUT_MS } from '../common/defaults.js';
import { ConfigError } from '../common/errors.js';
import { ALL_HOOK_EVENTS, isHookEvent, type HookEvent } from '../common/hook-events.js';
import type { HookCallback, HookMap } from '../common/types.js';
import { resolve as resolvePath } from 'node:path';
import { isAgentModel, type AgentModel } from '../models/model.js';
import {
  PERMISSION_PRESETS,
  type PermissionHandler,
  type PermissionPreset,
} from '../common/permission.js';
import { builtinTools } from '../tools/builtin/index.js';
import { fileStore, isPayloadStore, type PayloadStore } from '../payloads/store.js';
import { processMemoryStreams } from '../stream/memory.js';
import { isStreamTransport, type StreamTransport } from '../stream/transport.js';
import {
  ENCRYPTION_KEYS_VARIABLE,
  keyRingFromEnv,
  openKeyRing,
  type EncryptionKeyFunction,
  type EncryptionKeyRing,
  type EncryptionOption,
} from '../payloads/encryption.js';
import type { ToolDefinition } from '../tools/tool.js';
import type { ToolEnvOptions } from '../tools/options.js';
import type { StreamOptions } from '../stream/options.js';
export type { ToolEnvOptions } from '../tools/options.js';
export type { StreamOptions } from '../stream/options.js';
export type { EncryptionKeyFunction, EncryptionOption } from '../payloads/encryption.js';
import {
  resolveTracing,
  tracingProblem,
  type ResolvedTracing,
  type TracingOption,
} from '../tracing/options.js';
import {
  AGENT_NAME_RULE,
  AGENT_NAME_RULE_TEXT,
  VERSION_RULE,
  VERSION_RULE_TEXT,
  defaultTaskQueueOf,
  type DefinitionManifest,
} from '../common/identity.js';
import { identityOf } from './fingerprint.js';
import {
  LOG_LEVELS,
  isAgentLogger,
  parseLogLevel,
  resolveLogLevel,
  resolveRuntimeInstall,
  type AgentLogLevel,
  type AgentLogger,
  type RuntimeInstall,
} from '../temporal/logging.js';
import {
  resolveTemporalConnection,
  type ResolvedTemporalConnection,
} from '../temporal/connection-config.js';
export type { TemporalTlsOptions } from '../temporal/connection-config.js';
export type {
  TemporalInterceptorOptions,
  TemporalOptions,
  TemporalPlugin,
} from '../temporal/options.js';
import type {
  TemporalInterceptorOptions,
  TemporalOptions,
  TemporalPlugin,
} from '../temporal/options.js';

/** The `advanced` options of {@link AgentOptions}. */
export interface AdvancedOptions {
  /** Hook callbacks by event, run in array order. */
  hooks?: HookMap;
  /**
   * Dispatch short, idempotent hooks as local activities: a few ms instead of ~18 ms, at the
   * price of at-least-once instead of at-most-once when a worker dies (see
   * {@link HookDispatchMode}). Sessions may override it per event.
   * @default 'activity'
   * @throws {ConfigError} at `createAgent` for anything else, or SessionStart/SessionEnd as `'local'`.
   */
  hookDispatch?: HookDispatchMode;
  /**
   * One wall-clock budget for all callbacks of an event, ms; an integer in (0, 2147483647].
   * @default 600000
   * @throws {ConfigError} at `createAgent` when out of range or not an integer.
   */
  hookTimeoutMs?: number;
  /**
   * SessionEnd's budget, ms; an integer in (0, 2147483647].
   * @default 3000
   * @throws {ConfigError} at `createAgent` when out of range or not an integer.
   */
  sessionEndHookTimeoutMs?: number;
  /** Most model steps in one `send()`; past it the send ends with status `max_turns`. @default 50 */
  maxTurns?: number;
  /** End an idle session (SessionEnd `reason: 'idle_timeout'`) after this long, ms. @default never */
  idleTimeoutMs?: number;
  /**
   * Who decides whether a tool call runs (contract §7): a preset, or a function returning
   * `'allow' | 'deny' | 'ask'` or a `PermissionResult`. `ask` waits durably for a person.
   * @default `'default'` (read-only tools run, the rest ask)
   */
  permission?: PermissionPreset | PermissionHandler;
  /** How long an `ask` waits for a person before it is denied, ms. @default 86400000 (24 h) */
  permissionTimeoutMs?: number;
  /** Time budget of one tool execution, ms; past it the tool is stopped. @default 600000 */
  toolTimeoutMs?: number;
  /** Largest tool output the model sees, bytes; more is cut with a marker. @default 65536 */
  maxToolOutputBytes?: number;
  /**
   * What a failed tool hook does to its `send()`. A tool hook is a PreToolUse,
   * PermissionRequest, PostToolUse or PostToolUseFailure callback; it fails when it throws,
   * returns `undefined` or an output not of the contract's shape, times out, or its worker is
   * lost. Either way the worker logs one WARN line (event, callback, agent, session, code,
   * message) and the call's record carries the error (`response.toolCalls[i].hookError`).
   * - `'tool-error'` (the seed's contract): the call ends in an error result telling the model
   *   that the hook failed (after PostToolUseFailure, the tool's own error is kept), and the
   *   prompt goes on: `send()` resolves.
   * - `'reject'`: the `send()` rejects with the hook's error (the `Error` it threw, with
   *   `event` and `callbackIndex`, or a `HookError` such as `HOOK_OUTPUT_INVALID` or
   *   `HOOK_TIMEOUT`); the calls after it in that step do not run, and TaskCompleted does not
   *   run. The session stays usable.
   *
   * Recorded in each session when it is created, so it holds on every worker.
   * @default 'tool-error'
   * @throws {ConfigError} at `createAgent` for any other value.
   */
  toolHookErrors?: 'tool-error' | 'reject';
  /**
   * The environment of the processes tools start (`Bash`, and custom tools that pass
   * `context.env`). They never inherit the worker's whole environment: they get PATH, HOME,
   * LANG, LC_ALL, TERM and TMPDIR (those the worker has), the variables named in `allow`,
   * and `set`. Values are read from the worker's environment when the worker starts.
   * @default `{}` (the six variables above only)
   * @throws {ConfigError} at `createAgent` when a name is not a variable name
   *   (`[A-Za-z_][A-Za-z0-9_]*`) or a value in `set` is not a string.
   */
  toolEnv?: ToolEnvOptions;
  /**
   * Time budget of one model step (one provider call), ms; a step that runs out is retried
   * like any transient provider failure. The built-in providers end their call at this; a
   * custom `Model` that does not end its own is cut off by the step 5 s later.
   * @default 120000
   */
  modelTimeoutMs?: number;
  /**
   * Most tokens of conversation sent to the model in one step, estimated as JSON characters
   * / 4. Past it the oldest whole turns leave the model's context (the full transcript
   * stays readable); see `compactContext` for the rule.
   * @default 100000
   */
  maxContextTokens?: number;
  /**
   * Continue the session's workflow as new after this many prompts in one run, besides
   * whenever Temporal suggests it (`continueAsNewSuggested`, from history size or length).
   * @default only when Temporal suggests it
   */
  continueAsNewAfterPrompts?: number;
  /**
   * Where payloads too large for Temporal's history go (tool outputs past
   * `maxToolOutputBytes`, any payload past `offloadPayloadBytes`). Workers and clients of an
   * agent must share it.
   * @default `fileStore('.durable-agent/payloads')` under the working directory
   */
  payloadStore?: PayloadStore;
  /**
   * Payloads larger than this go to `payloadStore` and history keeps a reference (Temporal
   * warns at 512 KiB and fails a payload over 2 MiB), bytes.
   * @default 262144
   */
  offloadPayloadBytes?: number;
  /**
   * Where the worker's log lines go: Temporal's worker, activity and workflow lines (a
   * failed model step, a failed SessionEnd), and what activities log through
   * `Context.current().log`. Any object with `debug`, `info`, `warn` and `error` methods
   * taking `(message, meta)`: `console`, winston, or a Temporal `Logger` as is (for pino,
   * wrap it: `warn: (m, meta) => pino.warn(meta, m)`). Each entry is one call: `message`
   * one line with the error's name and message, `meta` plain data (`sessionId`,
   * `activityType`, `attempt`, ...), a `stack` key only at `DEBUG`/`TRACE`.
   *
   * The Temporal runtime is one per process: when the application installed its own
   * first (`Runtime.install`), or `advanced.temporal.runtime` is `'never'`, Temporal's lines
   * go to that runtime's logger instead.
   *
   * @default one line per entry on stderr: `[durable-agent-sdk WARN] message (k=v, ...)`
   */
  logger?: AgentLogger;
  /**
   * Least severe level logged: `'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'`. Stacks and
   * Temporal's full metadata appear at `DEBUG` and `TRACE` only. The Temporal core's own
   * lines are filtered at the level of the first worker started in the process.
   *
   * @default `DURABLE_AGENT_LOG_LEVEL` (any case), else `'WARN'`
   * @throws {ConfigError} at `createAgent` for another value, or a bad `DURABLE_AGENT_LOG_LEVEL`.
   */
  logLevel?: AgentLogLevel;
  /**
   * Live streams of `send()` (`textStream()`, `stream()`, `session.stream()`): where the
   * activities publish text deltas and hook, tool and permission events, and where readers
   * get them. `false` turns publishing off (a send's stream then has only its final event).
   * Workers and clients of an agent must use the same transport to meet: the default serves
   * only a client and a worker in one process; `redisStreams({ url })` serves many. A client
   * on an in-memory transport with no worker of its agent in its process throws a
   * `ConfigError` when its streams are read (they would stay empty).
   *
   * @default `{ transport: ` the process's shared `memoryStreams()` `}`
   * @throws {ConfigError} at `createAgent` when `transport` is not a `StreamTransport`.
   */
  stream?: false | StreamOptions;
  /** Where Temporal is. */
  temporal?: TemporalOptions;
}

/** Options of `createAgent`. */
export interface AgentOptions {
  /**
   * A model id such as `'gpt-4o'` (OpenAI), `'claude-sonnet-4-5'` (Anthropic), or any id
   * with `baseUrl` (an OpenAI-compatible server); or a model object such as
   * `scriptedModel([...])`. An id without `baseUrl` that does not start with `claude` is
   * taken as an OpenAI model, whatever it is (not checked against a list: a failed step
   * of an id unlike OpenAI's says it was taken as one, and where it was sent).
   */
  model: string | AgentModel;
  /**
   * The provider's API key, for model ids. `createAgent` and `createAgentWorker` need one
   * for OpenAI and Anthropic ids (a `ConfigError` at once otherwise); `createAgentClient`
   * never runs the model and needs none.
   * @default `OPENAI_API_KEY` (OpenAI, OpenAI-compatible) or `ANTHROPIC_API_KEY`
   *   (Anthropic); with `baseUrl` and neither, no key (local servers usually need none).
   */
  apiKey?: string;
  /**
   * Base URL of an OpenAI-compatible endpoint, for model ids, up to the version segment
   * (e.g. `http://127.0.0.1:11434/v1`). A key is optional there.
   */
  baseUrl?: string;
  /**
   * Name of the agent definition: its identity on the Temporal server. Workers and clients
   * of one agent must agree on it; the default task queue is `durable-agent.<name>`, so two
   * differently named agents never share a queue. It becomes the Worker Deployment name.
   * Give every agent that shares a Temporal namespace with another definition a name of its
   * own: agents left at the default share `durable-agent.default`, where each worker still
   * refuses the other's tasks (their versions differ) but sessions wait for the right one.
   * @default `'default'`
   * @throws {ConfigError} at `createAgent` unless it is 1 to 100 letters, digits, `-` or `_`,
   *   starting with a letter or digit (`AGENT_NAME_RULE`).
   */
  name?: string;
  /**
   * Version of this definition: what a session records when it starts, and what every worker
   * compares before running any of its tasks (a worker of another version refuses them, and
   * never runs its own callbacks instead). It becomes the Worker Deployment build id.
   * @default the definition's fingerprint: 16 hex digits of a SHA-256 over each callback's
   *   source by event and position, the permission policy, the tools (name, kind,
   *   description, input schema, `affectedPaths`) and the deciding options
   *   (`hookTimeoutMs`, `sessionEndHookTimeoutMs`, `toolHookErrors`, `permissionTimeoutMs`,
   *   `maxTurns`); see `src/definition/fingerprint.ts`
   * @throws {ConfigError} at `createAgent` unless it is 1 to 255 letters, digits, `.`, `_` or
   *   `-`, starting with a letter or digit (`VERSION_RULE`); at worker start when another
   *   agent of this process claims the same name and version with another fingerprint.
   */
  version?: string;
  /** The tools the model may call. @default the built-ins: Read, Write, Edit, Bash, Glob, Grep */
  tools?: ToolDefinition[];
  /** Folders the file tools may touch (and Bash's working directory). @default `[process.cwd()]` */
  workspaceRoots?: string[];
  /**
   * Encryption at rest: every payload the agent writes to Temporal (prompts, tool inputs and
   * outputs, hook inputs, decisions and errors, permission requests, model replies, the
   * memo) is sealed with AES-256-GCM, failure messages and stack traces are encoded and
   * sealed too, and the values the agent keeps in `advanced.payloadStore` are stored sealed.
   * Workflow ids, activity names, task queues, timings and search attributes stay readable
   * (README, Security).
   *
   * - `'env'`: the key ring from `DURABLE_AGENT_ENCRYPTION_KEYS` (`keyId:base64Key,...`, the
   *   first key current), read when the agent is created.
   * - a key ring `{ currentKeyId, keys: { [keyId]: 32-byte key or base64 } }`.
   * - a function returning one (or a promise of one), e.g. fetching keys from a KMS; called
   *   once, when the first worker or client of these options starts.
   * - `false` or left out: off.
   *
   * The variable alone does not turn encryption on: it is on only where the code says so,
   * and a process told `'env'` without the variable fails at start instead of writing
   * plaintext. Every worker and client of an agent needs the same ring (a client without it
   * cannot read sealed sessions: `PAYLOAD_UNDECRYPTABLE`). Sessions written before
   * encryption was turned on stay readable. Rotate by making a new key current and keeping
   * the old ones in the ring for as long as their histories are read.
   *
   * With encryption on, a worker bundles its workflow code at startup (once per process)
   * with the encoding failure converter, so failures the workflow makes itself (a hook's
   * block reason refusing a `send()`) are encoded too; a `DURABLE_AGENT_WORKFLOW_BUNDLE`
   * file is used only when it was bundled with it. `advanced.temporal.workflowBundle` is
   * used as given: build it with `failureConverterPath: encodingFailureConverterPath()`
   * (from `durable-agent-sdk/payloads`), or the workflow's own failures stay plaintext.
   *
   * @default off
   * @throws {ConfigError} at `createAgent` for `'env'` without the variable, a bad variable,
   *   a bad ring (unknown `currentKeyId`, a key not 32 bytes, a bad key id), or another
   *   value; when the worker or client starts, for a function that throws or returns a bad
   *   ring.
   */
  encryption?: EncryptionOption;
  /**
   * OpenTelemetry tracing, exported over OTLP/HTTP: spans for session creation and close,
   * each `send()` (one trace per send), each hook dispatch (event, tool, callbacks,
   * budget, outcome, decision, deciding callback), model step, permission check and tool,
   * joined to Temporal's own spans (`StartWorkflow`, `StartWorkflowUpdate`, `HandleUpdate`,
   * `StartActivity`, `RunActivity`) through Temporal's `OpenTelemetryPlugin`.
   *
   * - `true`: export to the collector the standard variables name
   *   (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`; else
   *   `http://localhost:4318`), service name `OTEL_SERVICE_NAME` or `durable-agent.<name>`.
   * - `{ endpoint, headers, serviceName }`: the same with these instead.
   * - `{ tracerProvider }`: your own OpenTelemetry SDK provider and its exporter.
   * - `false` or left out: off; nothing of OpenTelemetry is loaded.
   *
   * Needs the optional peer dependencies `@temporalio/interceptors-opentelemetry`,
   * `@opentelemetry/api`, `@opentelemetry/sdk-trace-base`, `@opentelemetry/resources` and
   * (without `tracerProvider`) `@opentelemetry/exporter-trace-otlp-http`. Give workers and
   * clients of an agent the same setting, so that their spans join. See {@link TracingOption}
   * (README, Operability: Tracing).
   *
   * @default off
   * @throws {ConfigError} at `createAgent` for a bad value (naming it); when the worker or
   *   client starts, when a package it needs is not installed (naming the packages).
   */
  tracing?: TracingOption;
  advanced?: AdvancedOptions;
}

/** Lower level options of one session, with the same hooks contract. */
export interface SessionOptions {
  /** The session's id. @default a random UUID */
  sessionId?: string;
  /** Extra callbacks for this session, run after the agent's. In-process only. */
  hooks?: HookMap;
  /** @see AdvancedOptions.hookTimeoutMs */
  hookTimeoutMs?: number;
  /** @see AdvancedOptions.sessionEndHookTimeoutMs */
  sessionEndHookTimeoutMs?: number;
  /** @see AdvancedOptions.idleTimeoutMs */
  idleTimeoutMs?: number;
  /** @see AdvancedOptions.maxTurns */
  maxTurns?: number;
  /** The session this one resumes; SessionStart then gets `isResume: true`. */
  resumeSessionId?: string;
  /**
   * @see AdvancedOptions.hookDispatch; events it names override the agent's mode.
   * @throws {ConfigError} from `createSession` when it is not a {@link HookDispatchMode}.
   */
  hookDispatch?: HookDispatchMode;
  /**
   * The permission function of this session: it takes the place of `advanced.permission` for
   * this session's tool calls, with the same contract (`{toolName, input, kind,
   * affectedPaths, signal}` in; `'allow' | 'deny' | 'ask'` or a `PermissionResult` out). The
   * low-level runtime hook of the seed's page. In-process only, like session `hooks`: it runs
   * on the worker of the process that created the session; a worker of another process
   * refuses the check (the tool call is denied, naming why) rather than use its own policy.
   * @default the agent's `advanced.permission`
   * @throws {ConfigError} from `createSession` when it is not a function, or the agent has no
   *   worker in this process (`createAgentClient`).
   */
  permissionHandler?: PermissionHandler;
}

/** Options after validation, with every default filled in. */
export interface ResolvedAgentOptions {
  name: string;
  /** `version`, else the fingerprint. */
  version: string;
  /** The definition's fingerprint (16 hex digits), whatever `version` says. */
  fingerprint: string;
  /** What the fingerprint is the hash of, part by part. */
  manifest: DefinitionManifest;
  model: string | AgentModel;
  apiKey: string | undefined;
  baseUrl: string | undefined;
  hooks: HookMap;
  hookTimeoutMs: number;
  sessionEndHookTimeoutMs: number;
  hookDispatch: HookDispatchMode;
  maxTurns: number;
  idleTimeoutMs: number | undefined;
  tools: ToolDefinition[];
  workspaceRoots: string[];
  permission: PermissionPreset | PermissionHandler;
  permissionTimeoutMs: number;
  toolTimeoutMs: number;
  maxToolOutputBytes: number;
  toolHookErrors: 'tool-error' | 'reject';
  toolEnv: { allow: string[]; set: Record<string, string> };
  modelTimeoutMs: number;
  maxContextTokens: number;
  continueAsNewAfterPrompts: number | undefined;
  payloadStore: PayloadStore;
  offloadPayloadBytes: number;
  /** The key ring (`'env'` read already), a function giving it, or `undefined`: off. */
  encryption: EncryptionKeyRing | EncryptionKeyFunction | undefined;
  /** `advanced.stream`'s transport; undefined: streaming off. */
  stream: StreamTransport | undefined;
  /** `tracing`, resolved; undefined: off. */
  tracing: ResolvedTracing | undefined;
  /** `advanced.logger`; undefined: stderr. */
  logger: AgentLogger | undefined;
  logLevel: AgentLogLevel;
  temporal: Required<Pick<TemporalOptions, 'namespace' | 'taskQueue'>> &
    Required<
      Pick<
        TemporalOptions,
        | 'heartbeatIntervalMs'
        | 'dispatchHeartbeatTimeoutMs'
        | 'shutdownGraceTimeMs'
        | 'stickyQueueScheduleToStartTimeoutMs'
        | 'maxConcurrentWorkflowTaskExecutions'
        | 'turnStatus'
        | 'workflowTaskTimeoutMs'
      >
    > &
    Pick<
      TemporalOptions,
      | 'address'
      | 'embedded'
      | 'workflowBundle'
      | 'modelHeartbeatTimeoutMs'
      | 'toolHeartbeatTimeoutMs'
    > & {
      /** The resolved connection (address and namespace as above, TLS, API key, metadata). */
      connection: ResolvedTemporalConnection;
      plugins: TemporalPlugin[];
      interceptors: TemporalInterceptorOptions;
      runtime: RuntimeInstall;
      /** As given; the worker and the client resolve `'auto'` against the server. */
      versioning: 'auto' | 'deployments' | 'off';
    };
}

const timeoutMs = (name: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (
        typeof value !== 'number' ||
        !Number.isInteger(value) ||
        value <= 0 ||
        value > MAX_TIMEOUT_MS
      ) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be an integer with 0 < ${name} <= ${MAX_TIMEOUT_MS} (ms), got ${describeValue(value)}`,
        });
      }
    })
    .optional();

const positiveInt = (name: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a positive integer, got ${describeValue(value)}`,
        });
      }
    })
    .optional();

/**
 * An optional option `ok` accepts, else refused with `<name> <requirement>, got <value>`.
 */
const checked = (name: string, ok: (value: unknown) => boolean, requirement: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value !== undefined && !ok(value)) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} ${requirement}, got ${describeValue(value)}`,
        });
      }
    })
    .optional();

const optionalString = (name: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value !== undefined && (typeof value !== 'string' || value === '')) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a non-empty string, got ${describeValue(value)}`,
        });
      }
    })
    .optional();

/** A string option that must match `rule` (described by `text`). */
const ruled = (name: string, rule: RegExp, text: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value !== undefined && (typeof value !== 'string' || !rule.test(value))) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be ${text}, got ${typeof value === 'string' && value.length > 60 ? `${value.length} characters` : describeValue(value)}`,
        });
      }
    })
    .optional();

const hooksSchema = (name: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be an object of callback arrays by event`,
        });
        return;
      }
      for (const [event, callbacks] of Object.entries(value)) {
        if (!isHookEvent(event)) {
          ctx.addIssue({
            code: 'custom',
            message: `${name} has an unknown event '${event}' (events: ${ALL_HOOK_EVENTS.join(', ')})`,
          });
        } else if (!Array.isArray(callbacks) || callbacks.some((c) => typeof c !== 'function')) {
          ctx.addIssue({
            code: 'custom',
            message: `${name}.${event} must be an array of functions`,
          });
        }
      }
    })
    .optional();

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const toolEnvSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === undefined) return;
    const issue = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      issue(`advanced.toolEnv must be an object { allow?, set? }, got ${describeValue(value)}`);
      return;
    }
    const { allow, set, ...rest } = value as { allow?: unknown; set?: unknown };
    for (const key of Object.keys(rest)) {
      issue(`advanced.toolEnv has an unknown key '${key}' (keys: allow, set)`);
    }
    if (allow !== undefined) {
      if (!Array.isArray(allow)) {
        issue(
          `advanced.toolEnv.allow must be an array of variable names, got ${describeValue(allow)}`,
        );
      } else {
        allow.forEach((name: unknown, i) => {
          if (typeof name !== 'string' || !ENV_NAME.test(name)) {
            issue(
              `advanced.toolEnv.allow[${i}] must be a variable name ([A-Za-z_][A-Za-z0-9_]*), got ${describeValue(name)}`,
            );
          }
        });
      }
    }
    if (set !== undefined) {
      if (typeof set !== 'object' || set === null || Array.isArray(set)) {
        issue(
          `advanced.toolEnv.set must be an object of variable values, got ${describeValue(set)}`,
        );
      } else {
        for (const [name, v] of Object.entries(set)) {
          if (!ENV_NAME.test(name)) {
            issue(
              `advanced.toolEnv.set has '${name}', which is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
            );
          } else if (typeof v !== 'string') {
            issue(`advanced.toolEnv.set.${name} must be a string, got ${describeValue(v)}`);
          }
        }
      }
    }
  })
  .optional();

const PEM_KEYS = [
  'serverCaCert',
  'serverCaCertPath',
  'serverName',
  'clientCert',
  'clientCertPath',
  'clientKey',
  'clientKeyPath',
] as const;

const tlsSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === undefined || typeof value === 'boolean') return;
    const issue = (message: string) => ctx.addIssue({ code: 'custom', message });
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      issue(
        `advanced.temporal.tls must be true, false or an object { serverCaCert(Path)?, serverName?, clientCert(Path)?, clientKey(Path)? }, got ${describeValue(value)}`,
      );
      return;
    }
    for (const [key, v] of Object.entries(value)) {
      if (!(PEM_KEYS as readonly string[]).includes(key)) {
        issue(`advanced.temporal.tls has an unknown key '${key}' (keys: ${PEM_KEYS.join(', ')})`);
      } else if (v === undefined) {
        continue;
      } else if (key.endsWith('Path') || key === 'serverName') {
        if (typeof v !== 'string' || v === '') {
          issue(`advanced.temporal.tls.${key} must be a non-empty string, got ${describeValue(v)}`);
        }
      } else if (!(typeof v === 'string' && v !== '') && !(v instanceof Uint8Array)) {
        issue(
          `advanced.temporal.tls.${key} must be PEM text (a string or bytes; ${key}Path for a file), got ${describeValue(v)}`,
        );
      }
    }
  })
  .optional();

const metadataSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === undefined) return;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `advanced.temporal.metadata must be an object of header values, got ${describeValue(value)}`,
      });
      return;
    }
    for (const [key, v] of Object.entries(value)) {
      if (typeof v !== 'string') {
        ctx.addIssue({
          code: 'custom',
          message: `advanced.temporal.metadata['${key}'] must be a string, got ${describeValue(v)}`,
        });
      }
    }
  })
  .optional();

const pluginsSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (value === undefined) return;
    if (!Array.isArray(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `advanced.temporal.plugins must be an array of Temporal plugins, got ${describeValue(value)}`,
      });
      return;
    }
    value.forEach((plugin: unknown, i) => {
      const name = (plugin as { name?: unknown } | null)?.name;
      if (typeof plugin !== 'object' || plugin === null || typeof name !== 'string') {
        ctx.addIssue({
          code: 'custom',
          message: `advanced.temporal.plugins[${i}] is not a Temporal plugin (an object with a name and configureWorker, configureClient, ... methods), got ${describeValue(plugin)}`,
        });
      }
    });
  })
  .optional();

const functionArray = (name: string) =>
  z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (!Array.isArray(value) || value.some((f) => typeof f !== 'function')) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be an array of interceptor factories (functions), got ${describeValue(value)}`,
        });
      }
    })
    .optional();

const interceptorsSchema = z
  .strictObject({
    activity: functionArray('advanced.temporal.interceptors.activity'),
    workflowModules: z
      .unknown()
      .superRefine((value, ctx) => {
        if (value === undefined) return;
        if (!Array.isArray(value) || value.some((m) => typeof m !== 'string' || m === '')) {
          ctx.addIssue({
            code: 'custom',
            message: `advanced.temporal.interceptors.workflowModules must be an array of module paths, got ${describeValue(value)}`,
          });
        }
      })
      .optional(),
    client: z
      .unknown()
      .superRefine((value, ctx) => {
        if (
          value !== undefined &&
          (typeof value !== 'object' || value === null || Array.isArray(value))
        ) {
          ctx.addIssue({
            code: 'custom',
            message: `advanced.temporal.interceptors.client must be Temporal's ClientInterceptors ({ workflow?: [...], schedule?: [...] }, workflow an array), got ${describeValue(value)}`,
          });
        }
      })
      .optional(),
  })
  .optional();

const agentSchema = z.strictObject({
  model: z.unknown().superRefine((value, ctx) => {
    if (!(typeof value === 'string' && value !== '') && !isAgentModel(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `model must be a model id such as 'gpt-4o' or a model object (e.g. scriptedModel([...])), got ${describeValue(value)}`,
      });
    }
  }),
  apiKey: z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (typeof value !== 'string') {
        ctx.addIssue({
          code: 'custom',
          message: `apiKey must be a string, got ${describeValue(value)}`,
        });
      } else if (value.trim() === '') {
        // Typically `apiKey: process.env.OPENAI_API_KEY!` with the variable set but empty.
        ctx.addIssue({
          code: 'custom',
          message:
            "apiKey is empty: pass the provider's key (is the variable you read it from set?), " +
            'or leave apiKey out to read OPENAI_API_KEY or ANTHROPIC_API_KEY',
        });
      }
    })
    .optional(),
  baseUrl: optionalString('baseUrl'),
  name: ruled('name', AGENT_NAME_RULE, AGENT_NAME_RULE_TEXT),
  version: ruled('version', VERSION_RULE, VERSION_RULE_TEXT),
  tools: z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (!Array.isArray(value)) {
        ctx.addIssue({
          code: 'custom',
          message: 'tools must be an array of tools (defineTool or built-ins)',
        });
        return;
      }
      const names = new Set<string>();
      value.forEach((tool: unknown, i) => {
        const t = tool as Partial<ToolDefinition> | null;
        if (!t || typeof t.name !== 'string' || typeof t.execute !== 'function' || !t.inputSchema) {
          ctx.addIssue({
            code: 'custom',
            message: `tools[${i}] is not a tool: it needs name, inputSchema, kind and execute`,
          });
        } else if (names.has(t.name)) {
          ctx.addIssue({ code: 'custom', message: `tools has two tools named '${t.name}'` });
        } else if (!['readonly', 'write', 'execute'].includes(String(t.kind))) {
          ctx.addIssue({
            code: 'custom',
            message: `tools[${i}] (${t.name}) has kind ${describeValue(t.kind)}; expected 'readonly', 'write' or 'execute'`,
          });
        } else names.add(t.name);
      });
    })
    .optional(),
  workspaceRoots: z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (
        !Array.isArray(value) ||
        value.length === 0 ||
        value.some((r) => typeof r !== 'string' || r === '')
      ) {
        ctx.addIssue({
          code: 'custom',
          message: 'workspaceRoots must be a non-empty array of folder paths',
        });
      }
    })
    .optional(),
  encryption: z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined || value === false || value === 'env') return;
      if (typeof value === 'function') return;
      if (typeof value !== 'object' || value === null) {
        ctx.addIssue({
          code: 'custom',
          message: `encryption must be 'env', a key ring { currentKeyId, keys }, a function returning one, or false, got ${describeValue(value)}`,
        });
        return;
      }
      try {
        openKeyRing(value as EncryptionKeyRing);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `encryption: ${(error as Error).message}` });
      }
    })
    .optional(),
  tracing: z
    .unknown()
    .superRefine((value, ctx) => {
      const problem = tracingProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  advanced: z
    .strictObject({
      hooks: hooksSchema('advanced.hooks'),
      hookTimeoutMs: timeoutMs('advanced.hookTimeoutMs'),
      sessionEndHookTimeoutMs: timeoutMs('advanced.sessionEndHookTimeoutMs'),
      hookDispatch: hookDispatchSchema('advanced.hookDispatch'),
      maxTurns: positiveInt('advanced.maxTurns'),
      idleTimeoutMs: timeoutMs('advanced.idleTimeoutMs'),
      permission: z
        .unknown()
        .superRefine((value, ctx) => {
          if (value === undefined || typeof value === 'function') return;
          if (!(PERMISSION_PRESETS as readonly unknown[]).includes(value)) {
            ctx.addIssue({
              code: 'custom',
              message: `advanced.permission must be a function or one of ${PERMISSION_PRESETS.map((p) => `'${p}'`).join(', ')}, got ${describeValue(value)}`,
            });
          }
        })
        .optional(),
      permissionTimeoutMs: timeoutMs('advanced.permissionTimeoutMs'),
      toolTimeoutMs: timeoutMs('advanced.toolTimeoutMs'),
      maxToolOutputBytes: positiveInt('advanced.maxToolOutputBytes'),
      toolHookErrors: checked(
        'advanced.toolHookErrors',
        (v) => v === 'tool-error' || v === 'reject',
        "must be 'tool-error' or 'reject'",
      ),
      toolEnv: toolEnvSchema,
      modelTimeoutMs: timeoutMs('advanced.modelTimeoutMs'),
      maxContextTokens: positiveInt('advanced.maxContextTokens'),
      continueAsNewAfterPrompts: positiveInt('advanced.continueAsNewAfterPrompts'),
      payloadStore: checked(
        'advanced.payloadStore',
        isPayloadStore,
        'must have put(data) and get(ref) methods (e.g. fileStore(dir))',
      ),
      stream: z
        .unknown()
        .superRefine((value, ctx) => {
          if (value === undefined || value === false) return;
          const transport = (value as { transport?: unknown } | null)?.transport;
          const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
          if (
            typeof value !== 'object' ||
            value === null ||
            keys.some((key) => key !== 'transport') ||
            (transport !== undefined && !isStreamTransport(transport))
          ) {
            ctx.addIssue({
              code: 'custom',
              message: `advanced.stream must be false or { transport? } with a StreamTransport (memoryStreams(), redisStreams({ url })), got ${describeValue(value)}`,
            });
          }
        })
        .optional(),
      offloadPayloadBytes: z
        .unknown()
        .superRefine((value, ctx) => {
          if (value === undefined) return;
          if (
            typeof value !== 'number' ||
            !Number.isInteger(value) ||
            value < 1024 ||
            value > 1_572_864
          ) {
            ctx.addIssue({
              code: 'custom',
              message: `advanced.offloadPayloadBytes must be an integer from 1024 to 1572864 (bytes), got ${describeValue(value)}`,
            });
          }
        })
        .optional(),
      logger: checked(
        'advanced.logger',
        isAgentLogger,
        'must have debug, info, warn and error methods (e.g. console)',
      ),
      logLevel: z
        .unknown()
        .superRefine((value, ctx) => {
          if (value !== undefined && parseLogLevel(value) === undefined) {
            ctx.addIssue({
              code: 'custom',
              message: `advanced.logLevel must be one of ${LOG_LEVELS.map((l) => `'${l}'`).join(', ')}, got ${describeValue(value)}`,
            });
          }
        })
        .optional(),
      temporal: z
        .strictObject({
          address: optionalString('advanced.temporal.address'),
          embedded: z.unknown().optional(),
          workflowBundle: z.unknown().optional(),
          namespace: optionalString('advanced.temporal.namespace'),
          taskQueue: optionalString('advanced.temporal.taskQueue'),
          heartbeatIntervalMs: positiveInt('advanced.temporal.heartbeatIntervalMs'),
          dispatchHeartbeatTimeoutMs: timeoutMs('advanced.temporal.dispatchHeartbeatTimeoutMs'),
          modelHeartbeatTimeoutMs: checked(
            'advanced.temporal.modelHeartbeatTimeoutMs',
            (v) => Number.isInteger(v) && (v as number) >= 1_000 && (v as number) <= 3_600_000,
            'must be an integer from 1000 to 3600000 (the step heartbeats every 250 ms)',
          ),
          toolHeartbeatTimeoutMs: checked(
            'advanced.temporal.toolHeartbeatTimeoutMs',
            (v) => Number.isInteger(v) && (v as number) >= 1_000 && (v as number) <= 3_600_000,
            'must be an integer from 1000 to 3600000',
          ),
          shutdownGraceTimeMs: positiveInt('advanced.temporal.shutdownGraceTimeMs'),
          stickyQueueScheduleToStartTimeoutMs: positiveInt(
            'advanced.temporal.stickyQueueScheduleToStartTimeoutMs',
          ),
          maxConcurrentWorkflowTaskExecutions: checked(
            'advanced.temporal.maxConcurrentWorkflowTaskExecutions',
            (v) => Number.isInteger(v) && (v as number) >= 2 && (v as number) <= 10_000,
            'must be an integer from 2 to 10000',
          ),
          tls: tlsSchema,
          apiKey: optionalString('advanced.temporal.apiKey'),
          metadata: metadataSchema,
          profile: optionalString('advanced.temporal.profile'),
          configFile: optionalString('advanced.temporal.configFile'),
          envConfig: checked(
            'advanced.temporal.envConfig',
            (v) => typeof v === 'boolean',
            'must be true or false',
          ),
          plugins: pluginsSchema,
          interceptors: interceptorsSchema,
          runtime: checked(
            'advanced.temporal.runtime',
            (v) => v === 'if-absent' || v === 'never',
            "must be 'if-absent' or 'never'",
          ),
          workflowTaskTimeoutMs: positiveInt('advanced.temporal.workflowTaskTimeoutMs'),
          turnStatus: checked(
            'advanced.temporal.turnStatus',
            (v) => typeof v === 'boolean',
            'must be true or false',
          ),
          versioning: checked(
            'advanced.temporal.versioning',
            (v) => v === 'auto' || v === 'deployments' || v === 'off',
            "must be 'auto', 'deployments' or 'off'",
          ),
        })
        .optional(),
    })
    .optional(),
});

const sessionSchema = z.strictObject({
  sessionId: z
    .unknown()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      if (typeof value !== 'string' || value === '' || value.length > 200) {
        ctx.addIssue({
          code: 'custom',
          message: `sessionId must be a string of 1 to 200 characters, got ${typeof value === 'string' ? `${value.length} characters` : describeValue(value)}`,
        });
      }
    })
    .optional(),
  hooks: hooksSchema('hooks'),
  hookDispatch: hookDispatchSchema('hookDispatch'),
  hookTimeoutMs: timeoutMs('hookTimeoutMs'),
  sessionEndHookTimeoutMs: timeoutMs('sessionEndHookTimeoutMs'),
  idleTimeoutMs: timeoutMs('idleTimeoutMs'),
  maxTurns: positiveInt('maxTurns'),
  resumeSessionId: optionalString('resumeSessionId'),
  permissionHandler: checked(
    'permissionHandler',
    (v) => typeof v === 'function',
    'must be a function',
  ),
});

function check(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const messages = parsed.error.issues.map((issue) =>
      issue.code === 'custom' ? issue.message : `${issue.path.join('.') || what}: ${issue.message}`,
    );
    throw new ConfigError(`Invalid ${what}: ${messages.join('; ')}`);
  }
}

/**
 * Validate `createAgent` options and fill in every default.
 * @throws {ConfigError} naming each bad option and the value given.
 */
export function resolveAgentOptions(options: AgentOptions): ResolvedAgentOptions {
  if (typeof options !== 'object' || options === null)
    throw new ConfigError('createAgent needs an options object');
  check(agentSchema, options, 'agent options');
  const advanced = options.advanced ?? {};
  const temporal = advanced.temporal ?? {};
  const heartbeatIntervalMs = temporal.heartbeatIntervalMs ?? DEFAULTS.heartbeatIntervalMs;
  const dispatchHeartbeatTimeoutMs =
    temporal.dispatchHeartbeatTimeoutMs ?? DEFAULTS.dispatchHeartbeatTimeoutMs;
  if (heartbeatIntervalMs * 2 > dispatchHeartbeatTimeoutMs) {
    throw new ConfigError(
      `Invalid agent options: advanced.temporal.heartbeatIntervalMs (${heartbeatIntervalMs}) must be at most half ` +
        `of advanced.temporal.dispatchHeartbeatTimeoutMs (${dispatchHeartbeatTimeoutMs}), or live hooks count as lost workers`,
    );
  }
  const connection = resolveTemporalConnection(temporal);
  if (connection.address === undefined) {
    const given = (['tls', 'apiKey', 'metadata'] as const).filter((k) => temporal[k] !== undefined);
    if (given.length > 0 && temporal.tls !== false) {
      throw new ConfigError(
        `Invalid agent options: ${given.map((k) => `advanced.temporal.${k}`).join(', ')} ` +
          'set without an address: set advanced.temporal.address (or TEMPORAL_ADDRESS, or a ' +
          "profile's address) to the server they are for; the embedded dev server runs without TLS",
      );
    }
    // The embedded dev server: the variables' and profile's TLS and key are not for it.
    connection.tls = false;
    connection.apiKey = undefined;
    connection.metadata = {};
  }
  const name = options.name ?? DEFAULTS.agentName;
  const hooks = copyHooks(advanced.hooks);
  const tools = options.tools ? [...options.tools] : builtinTools();
  const permission = advanced.permission ?? 'default';
  const deciding = {
    hookTimeoutMs: advanced.hookTimeoutMs ?? DEFAULTS.hookTimeoutMs,
    sessionEndHookTimeoutMs: advanced.sessionEndHookTimeoutMs ?? DEFAULTS.sessionEndHookTimeoutMs,
    toolHookErrors: advanced.toolHookErrors ?? DEFAULTS.toolHookErrors,
    permissionTimeoutMs: advanced.permissionTimeoutMs ?? DEFAULTS.permissionTimeoutMs,
    maxTurns: advanced.maxTurns ?? DEFAULTS.maxTurns,
  };
  const identity = identityOf({ ...deciding, hooks, tools, permission }, options.version);
  return {
    name,
    ...identity,
    model: options.model,
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    hooks,
    hookTimeoutMs: deciding.hookTimeoutMs,
    sessionEndHookTimeoutMs: deciding.sessionEndHookTimeoutMs,
    maxTurns: deciding.maxTurns,
    hookDispatch: advanced.hookDispatch ?? 'activity',
    idleTimeoutMs: advanced.idleTimeoutMs,
    tools,
    workspaceRoots: (options.workspaceRoots ?? [process.cwd()]).map((root) => resolvePath(root)),
    permission,
    permissionTimeoutMs: deciding.permissionTimeoutMs,
    toolTimeoutMs: advanced.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs,
    maxToolOutputBytes: advanced.maxToolOutputBytes ?? DEFAULTS.maxToolOutputBytes,
    toolHookErrors: deciding.toolHookErrors,
    toolEnv: {
      allow: [...(advanced.toolEnv?.allow ?? [])],
      set: { ...advanced.toolEnv?.set },
    },
    modelTimeoutMs: advanced.modelTimeoutMs ?? DEFAULTS.modelTimeoutMs,
    maxContextTokens: advanced.maxContextTokens ?? DEFAULTS.maxContextTokens,
    continueAsNewAfterPrompts: advanced.continueAsNewAfterPrompts,
    payloadStore: advanced.payloadStore ?? fileStore(resolvePath(DEFAULTS.payloadDir)),
    offloadPayloadBytes: advanced.offloadPayloadBytes ?? DEFAULTS.offloadPayloadBytes,
    encryption: resolveEncryption(options.encryption),
    stream:
      advanced.stream === false
        ? undefined
        : (advanced.stream?.transport ?? processMemoryStreams()),
    tracing: resolveTracing(options.tracing, name),
    logger: advanced.logger,
    logLevel: resolveLogLevel(parseLogLevel(advanced.logLevel)),
    temporal: {
      address: connection.address,
      namespace: connection.namespace,
      taskQueue: temporal.taskQueue ?? defaultTaskQueueOf(name),
      heartbeatIntervalMs: temporal.heartbeatIntervalMs ?? DEFAULTS.heartbeatIntervalMs,
      dispatchHeartbeatTimeoutMs:
        temporal.dispatchHeartbeatTimeoutMs ?? DEFAULTS.dispatchHeartbeatTimeoutMs,
      // Only when set: sessions keep the inputs they had before it existed.
      ...(temporal.modelHeartbeatTimeoutMs !== undefined
        ? { modelHeartbeatTimeoutMs: temporal.modelHeartbeatTimeoutMs }
        : {}),
      ...(temporal.toolHeartbeatTimeoutMs !== undefined
        ? { toolHeartbeatTimeoutMs: temporal.toolHeartbeatTimeoutMs }
        : {}),
      // A deploy must not fail in-flight hooks: by default the grace time is the hook budget.
      shutdownGraceTimeMs:
        temporal.shutdownGraceTimeMs ?? advanced.hookTimeoutMs ?? DEFAULTS.hookTimeoutMs,
      stickyQueueScheduleToStartTimeoutMs:
        temporal.stickyQueueScheduleToStartTimeoutMs ??
        DEFAULTS.stickyQueueScheduleToStartTimeoutMs,
      maxConcurrentWorkflowTaskExecutions:
        temporal.maxConcurrentWorkflowTaskExecutions ??
        DEFAULTS.maxConcurrentWorkflowTaskExecutions,
      turnStatus: temporal.turnStatus ?? false,
      workflowTaskTimeoutMs: temporal.workflowTaskTimeoutMs ?? DEFAULTS.workflowTaskTimeoutMs,
      embedded: temporal.embedded,
      workflowBundle: temporal.workflowBundle,
      connection,
      plugins: [...(temporal.plugins ?? [])],
      interceptors: { ...temporal.interceptors },
      runtime: resolveRuntimeInstall(temporal.runtime),
      versioning: temporal.versioning ?? 'auto',
    },
  };
}

function resolveEncryption(
  option: EncryptionOption | undefined,
): ResolvedAgentOptions['encryption'] {
  if (option === undefined || option === false) return undefined;
  if (option !== 'env') return option;
  let ring: EncryptionKeyRing | undefined;
  try {
    ring = keyRingFromEnv();
  } catch (error) {
    throw new ConfigError(`Invalid agent options: encryption: 'env': ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!ring) {
    throw new ConfigError(
      `Invalid agent options: encryption: 'env' needs ${ENCRYPTION_KEYS_VARIABLE} ` +
        `(keyId:base64Key,..., the first current); it is unset or empty`,
    );
  }
  return ring;
}

/**
 * Validate session options.
 * @throws {ConfigError} naming each bad option and the value given.
 */
export function validateSessionOptions(options: SessionOptions): void {
  check(sessionSchema, options, 'session options');
}

function hookDispatchSchema(path: string) {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      const problem = hookDispatchProblem(value, path);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional();
}

/** Callback counts by event, for the workflow (events with none schedule nothing). */
export function hookCountsOf(
  ...maps: Array<HookMap | undefined>
): Partial<Record<HookEvent, number>> {
  const counts: Partial<Record<HookEvent, number>> = {};
  for (const map of maps) {
    for (const [event, callbacks] of Object.entries(map ?? {}) as Array<
      [HookEvent, HookCallback[]]
    >) {
      if (callbacks.length > 0) counts[event] = (counts[event] ?? 0) + callbacks.length;
    }
  }
  return counts;
}

function copyHooks(hooks: HookMap | undefined): HookMap {
  const copy: HookMap = {};
  for (const [event, callbacks] of Object.entries(hooks ?? {}) as Array<
    [HookEvent, HookCallback[]]
  >) {
    copy[event] = [...callbacks];
  }
  return copy;
}

function describeValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `'${value}'`;
  if (value === null) return 'null';
  return typeof value;
}
