/**
 * durable-agent-sdk: an agent SDK whose hooks lifecycle runs on Temporal.
 *
 * The root export is the core surface: agents, sessions, hooks, tools, models, errors.
 * Infrastructure is on subpaths: `durable-agent-sdk/testing` (test env, scripted models,
 * replay, golden sessions), `durable-agent-sdk/server` (the embedded Temporal server and
 * CLI), `durable-agent-sdk/payloads` (payload store, offload codec, encryption).
 *
 * @module durable-agent-sdk
 */
export { createAgent, createAgentWorker, createAgentClient, type Agent } from './agent/agent.js';
export type { AgentClient } from './client/client.js';
export type { SessionFilter, SessionSummary } from './client/list-sessions.js';
export type { AgentWorker } from './worker/worker.js';
export type {
  CachedContext,
  ConversationCache,
  ConversationCacheOptions,
  ConversationCacheStats,
} from '../activities/conversation-cache.js';
export type { HookDispatchMode } from './common/hook-dispatch-mode.js';
export type { SessionSearchStatus } from './common/search-attributes.js';
export type { SessionEndStatus, SessionListStatus } from './client/session-status.js';
export {
  workflowsPath as agentWorkflowsPath,
  type WorkflowBundleSource,
} from './worker/workflow-code.js';
export { Session } from './client/session.js';
export { SendResponse, type SendOptions } from './client/send-response.js';
export type {
  SendCall,
  SendStream,
  StreamOptions as SendStreamOptions,
  ResumeOptions,
} from './stream/send-call.js';
export type {
  StreamEvent,
  StreamedEvent,
  TextDeltaEvent,
  RestartEvent,
  HookDispatchEvent,
  ToolStartEvent,
  ToolEndEvent,
  PermissionAskedEvent,
  PermissionDecidedEvent,
  PermissionDecider,
  PermissionStageEvent,
  FinishEvent,
  ErrorEvent,
} from './stream/events.js';
export {
  type AgentOptions,
  type AdvancedOptions,
  type SessionOptions,
  type SubagentsOptions,
  type SubagentDefinition,
  type TemporalOptions,
  type TemporalTlsOptions,
  type TemporalPlugin,
  type TemporalInterceptorOptions,
  type ToolEnvOptions,
  type McpServers,
  type McpServerConfig,
  type McpStdioServerConfig,
  type McpHttpServerConfig,
  type StreamOptions,
  type EncryptionOption,
  type EncryptionKeyFunction,
} from './definition/options.js';
export {
  tracingWorkflowInterceptorsPath,
  type TracingOption,
  type TracingOptions,
  type SdkTracerProvider,
} from './tracing/options.js';
export { HookEvent, SessionHookEvent, ALL_HOOK_EVENTS } from './common/hook-events.js';
export type {
  HookInput,
  HookOutput,
  HookCallback,
  HookMap,
  Prompt,
  TextPart,
  ImagePart,
  ToolResult,
  ToolDisplay,
  ToolKind,
  ToolModelContent,
  SessionId,
  SessionEndReason,
} from './common/types.js';
export type { JsonObject, JsonValue } from './common/json.js';
export {
  AgentSdkError,
  ConfigError,
  HookError,
  HookTimeoutError,
  SessionNotFoundError,
  SessionClosedError,
  ModelError,
  ToolError,
  EngineError,
  TemporalConnectionError,
  McpServerError,
  type ErrorCode,
  type HookErrorRecord,
  type ModelErrorDetails,
} from './common/errors.js';
export {
  LOG_LEVELS,
  LOG_LEVEL_VARIABLE,
  type AgentLogger,
  type AgentLogLevel,
} from './temporal/logging.js';
export type {
  TimelineEntry,
  DispatchOutcomeKind,
  VersionUpgrade,
  AbandonedUpgrade,
} from './common/workflow-io.js';
export type {
  SessionDescription,
  CloseResult,
  SessionTermination,
  SendStatus,
  ToolCallRecord,
  UpgradeAnswer,
} from './common/messages.js';
export type { AgentModel, ModelStepRequest } from './models/model.js';
export {
  providerModel,
  ProviderError,
  type ProviderModelOptions,
  type ModelProvider,
} from './models/provider.js';
export { defineTool, type ToolDefinition, type ToolContext } from './tools/tool.js';
export { builtinTools, Read, Write, Edit, Bash, Glob, Grep } from './tools/builtin/index.js';
export type {
  PermissionPreset,
  PermissionResult,
  PermissionDecision,
  PermissionRequest,
  PermissionHandler,
  PendingPermission,
} from './common/permission.js';
export type {
  PermissionRules,
  PermissionRuleList,
  PermissionRuleMatch,
} from './common/permission-rules.js';
export type { ConversationMessage, ToolCall } from './common/conversation.js';
export type {
  BudgetCaps,
  BudgetExceeded,
  BudgetName,
  BudgetOptions,
  BudgetRaise,
  BudgetSpend,
  BudgetStatus,
  ModelPrice,
} from './common/budgets.js';
export type {
  BudgetAmounts,
  BudgetWindow,
  HeldLease,
  SharedBudgetOptions,
  SharedBudgetStatus,
} from './common/shared-budgets.js';
export type { ApprovalOptions } from './definition/approval-options.js';
export type {
  ApprovalNotifyEvent,
  ApprovalNotifyStage,
  ApprovalStage,
} from './common/approval-stages.js';
export { fileStore, PayloadNotFoundError, type PayloadStore } from './payloads/store.js';
export { compactContext, estimateTokens, type ContextWindow } from './common/context.js';
