/**
 * The options of `createAgent` and sessions: what each option means, its default and unit,
 * and the options after resolving. The rules are in `option-rules.ts`, the defaults filled
 * in by `resolveAgentOptions` (`resolve.ts`).
 *
 * @module
 */
import type { BudgetOptions } from '../common/budgets.js';
import type { ApprovalOptions, ResolvedApprovals } from './approval-options.js';
import type { HookDispatchMode } from '../common/hook-dispatch-mode.js';
import type { DefinitionManifest } from '../common/identity.js';
import type { PermissionHandler, PermissionPreset } from '../common/permission.js';
import type { PermissionRules } from '../common/permission-rules.js';
import type { HookMap } from '../common/types.js';
import type { AgentModel } from '../models/model.js';
import type {
  EncryptionKeyFunction,
  EncryptionKeyRing,
  EncryptionOption,
} from '../payloads/encryption.js';
import type { PayloadStore } from '../payloads/store.js';
import type { StreamOptions } from '../stream/options.js';
import type { StreamTransport } from '../stream/transport.js';
import type { ResolvedTemporalConnection } from '../temporal/connection-config.js';
import type { AgentLogLevel, AgentLogger, RuntimeInstall } from '../temporal/logging.js';
import type {
  TemporalInterceptorOptions,
  TemporalOptions,
  TemporalPlugin,
} from '../temporal/options.js';
import type { ToolEnvOptions } from '../tools/options.js';
import type { ToolDefinition } from '../tools/tool.js';
import type { McpServers } from '../mcp/options.js';
import type { ResolvedSubagents, SubagentsOptions } from './subagent-options.js';
import type { ResolvedTracing, TracingOption } from '../tracing/options.js';
export type { ToolEnvOptions } from '../tools/options.js';
export type { PermissionRules } from '../common/permission-rules.js';
export type {
  McpServerConfig,
  McpServers,
  McpStdioServerConfig,
  McpHttpServerConfig,
} from '../mcp/options.js';
export type { StreamOptions } from '../stream/options.js';
export type { SessionOptions } from './session-options.js';
export type {
  ResolvedSubagent,
  ResolvedSubagents,
  SubagentDefinition,
  SubagentsOptions,
} from './subagent-options.js';
export type { BudgetCaps, BudgetOptions, ModelPrice } from '../common/budgets.js';
export type { EncryptionKeyFunction, EncryptionOption } from '../payloads/encryption.js';
export type { TemporalTlsOptions } from '../temporal/connection-config.js';
export type {
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
  /**
   * Tool name patterns that decide a call before `permission` does, as Claude Code's
   * `permissions` settings name them: `{ allow?, ask?, deny? }`, each an array of patterns.
   * A pattern is an exact tool name (`'Read'`), a name with `*` globs anywhere
   * (`'mcp__github__*'`, `'mcp__*__delete_*'`), or a bare MCP server (`'mcp__github'`: every
   * tool of that server). The first matching pattern of `deny`, then `ask`, then `allow`
   * decides, whatever the order the lists are given in: `deny` denies (the message names the
   * rule, `Denied by permissionRules.deny 'mcp__github__*'`), `ask` waits for a person as a
   * preset's ask does, `allow` runs the call. A call no pattern matches is decided by
   * `permission` as before. PermissionRequest hooks still run first (and may deny). Decided in
   * the session's workflow; a session's sub-agents follow the same rules; sessions cannot
   * override them. Part of the fingerprint when set.
   * @default none (`permission` decides every call)
   * @throws {ConfigError} at `createAgent` for a list that is not an array, a pattern that is
   *   not a string, is empty, or has characters outside `[A-Za-z0-9_*-]`, or an unknown key,
   *   naming the field (`advanced.permissionRules.deny[0]`).
   * @example
   * ```ts
   * advanced: {
   *   permission: 'bypass-permissions',
   *   permissionRules: { deny: ['mcp__github__delete_*'], ask: ['mcp__github__create_*'] },
   * }
   * ```
   */
  permissionRules?: PermissionRules;
  /** How long an `ask` waits for a person before it is denied, ms. @default 86400000 (24 h) */
  permissionTimeoutMs?: number;
  /**
   * Refuse a person's answer that names no approval digest (`PERMISSION_DIGEST_REQUIRED`):
   * every approval and denial must be bound to the call the person was shown
   * (`session.approve(requestId, { digest })`, the CLI's `approve`, the session page). Off,
   * such an answer is accepted and recorded unbound (`bound: false`). Sessions keep the
   * setting they started with; a sub-agent takes its top session's.
   * @default false
   */
  requireBoundApprovals?: boolean;
  /**
   * Reminders and escalation while an `ask` waits (`remindAfterMs`, `escalateAfterMs`,
   * `escalateTo`, `notify`), each stage a durable timer before the `permissionTimeoutMs`
   * deadline. The timing is part of the fingerprint when set; the callback's source is not.
   * @default none (the ask waits for its deadline, as before)
   * @throws {ConfigError} at `createAgent` for a stage that is not a positive integer of ms,
   *   an escalation not after the reminder, a stage at or past the deadline, `escalateTo`
   *   without `escalateAfterMs`, a `notify` that is not a function, naming the field.
   */
  approvals?: ApprovalOptions;
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
  /**
   * Sub-agents the model may delegate to through the built-in `Task` tool, which is added to
   * the agent's tools when this is set. Each sub-agent runs as a session of its own under the
   * same definition and policy (agent hooks, the session's hooks, permission).
   * @default none (no `Task` tool)
   * @throws {ConfigError} at `createAgent` for a bad field (see {@link SubagentsOptions}).
   */
  subagents?: SubagentsOptions;
  /**
   * Spend caps every session of the agent runs under (docs/budgets.md): tokens (`inputTokens`,
   * `outputTokens`, `totalTokens`), `modelCalls`, `toolCalls`, and `costUsd` priced by
   * `prices`. Before each model step the session reserves its worst case (`maxOutputTokens`
   * plus its input estimate, priced) and a step that would pass a cap is never called: the
   * `send()` ends with status `budget_exceeded`. Per session so far; a session's `budgets`
   * may lower them. Part of the fingerprint when set.
   * @default none
   * @throws {ConfigError} at `createAgent` for a negative or non-integer cap (`costUsd` may be
   *   fractional), an unknown key, a price for a model the agent does not use, or `costUsd`
   *   without a price for the agent's model, naming the field (`advanced.budgets.totalTokens`).
   * @example
   * ```ts
   * advanced: {
   *   budgets: { totalTokens: 200_000, costUsd: 1, prices: { 'gpt-4o': { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 } } },
   * }
   * ```
   */
  budgets?: BudgetOptions;
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
   *   `maxTurns`), and `advanced.subagents` and `advanced.permissionRules` when set; see
   *   `src/definition/fingerprint.ts`
   * @throws {ConfigError} at `createAgent` unless it is 1 to 255 letters, digits, `.`, `_` or
   *   `-`, starting with a letter or digit (`VERSION_RULE`); at worker start when another
   *   agent of this process claims the same name and version with another fingerprint.
   */
  version?: string;
  /** The tools the model may call. @default the built-ins: Read, Write, Edit, Bash, Glob, Grep */
  tools?: ToolDefinition[];
  /**
   * MCP servers whose tools the model may call, by server name, as the Claude Agent SDK
   * takes them: stdio (`{ command, args?, env?, cwd? }`, started by each worker when first
   * needed) or Streamable HTTP (`{ type: 'http', url, headers? }`). Their tools reach the
   * model as `mcp__<server>__<tool>`, and every call goes through PreToolUse, permission and
   * PostToolUse as a built-in tool's does. A session lists the tools when it opens and keeps
   * that list: a tool outside it, or changed since, is refused without calling the server.
   * Needs `@modelcontextprotocol/sdk` installed beside this package.
   * @default none
   * @throws {ConfigError} at `createAgent` for a bad name or field, naming it (see
   *   {@link McpServerConfig}).
   */
  mcpServers?: McpServers;
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
  /** Options most agents leave at their defaults: limits, permission, payloads, logs, Temporal. */
  advanced?: AdvancedOptions;
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
  /** The tools the model may call; the `Task` tool last when `subagents` is set. */
  tools: ToolDefinition[];
  /** `advanced.subagents`; undefined: none (and no `Task` tool). */
  subagents?: ResolvedSubagents;
  /** `mcpServers`, as given; undefined: none. */
  mcpServers?: McpServers;
  /** `advanced.budgets`, as given (copied); undefined: none. */
  budgets?: BudgetOptions;
  workspaceRoots: string[];
  permission: PermissionPreset | PermissionHandler;
  /** `advanced.permissionRules` with all three lists; undefined when none has a pattern. */
  permissionRules?: Required<PermissionRules>;
  permissionTimeoutMs: number;
  /** `advanced.requireBoundApprovals`; absent when off. */
  requireBoundApprovals?: true;
  /** `advanced.approvals`, resolved; absent when not set. */
  approvals?: ResolvedApprovals;
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
