/**
 * The input of a new session's workflow: what the session runs for good (its version and
 * fingerprint, hook counts, timeouts, tools, permission and its rules), from the agent's options and the
 * session's own.
 *
 * @module
 */
import {
  inlineDispatchEvents,
  localDispatchEvents,
  type HookDispatchMode,
} from '../common/hook-dispatch-mode.js';
import type { SessionWorkflowInput, SubagentsSpec } from '../common/workflow-io.js';
import type { ResolvedAgentOptions, SessionOptions } from '../definition/options.js';
import { hookCountsOf } from '../definition/resolve.js';
import { sessionBudgetSpec, subagentPrices } from '../definition/budget-rules.js';

/** The workflow input of session `sessionId` of the agent of `options`. */
export function sessionWorkflowInput(
  options: ResolvedAgentOptions,
  sessionId: string,
  sessionOptions: SessionOptions,
): SessionWorkflowInput {
  const permission: NonNullable<SessionWorkflowInput['permission']> =
    sessionOptions.permissionHandler
      ? { handler: 'session' }
      : typeof options.permission === 'function'
        ? { handler: 'function' }
        : { preset: options.permission };
  const budget = sessionBudgetSpec(options.budgets, options.model, sessionOptions.budgets, {
    agentName: options.name,
    ...(sessionOptions.tenant !== undefined ? { tenant: sessionOptions.tenant } : {}),
  });
  return {
    sessionId,
    agentName: options.name,
    // The definition the session runs, for good: every worker checks it before any task.
    version: options.version,
    fingerprint: options.fingerprint,
    manifest: options.manifest,
    hookCounts: hookCountsOf(options.hooks, sessionOptions.hooks),
    hookTimeoutMs: sessionOptions.hookTimeoutMs ?? options.hookTimeoutMs,
    sessionEndHookTimeoutMs:
      sessionOptions.sessionEndHookTimeoutMs ?? options.sessionEndHookTimeoutMs,
    maxTurns: sessionOptions.maxTurns ?? options.maxTurns,
    taskQueue: options.temporal.taskQueue,
    dispatchHeartbeatTimeoutMs: options.temporal.dispatchHeartbeatTimeoutMs,
    ...(options.temporal.modelHeartbeatTimeoutMs !== undefined
      ? { modelHeartbeatTimeoutMs: options.temporal.modelHeartbeatTimeoutMs }
      : {}),
    ...(options.temporal.toolHeartbeatTimeoutMs !== undefined
      ? { toolHeartbeatTimeoutMs: options.temporal.toolHeartbeatTimeoutMs }
      : {}),
    tools: options.tools.map((tool) => ({ name: tool.name, kind: tool.kind })),
    ...(options.mcpServers ? { mcpServers: Object.keys(options.mcpServers) } : {}),
    permission,
    // Only when set, so sessions keep the inputs (and histories) they had before it existed.
    ...(options.permissionRules ? { permissionRules: options.permissionRules } : {}),
    permissionTimeoutMs: options.permissionTimeoutMs,
    // Only when set, so sessions keep the inputs (and histories) they had before it existed.
    ...(options.requireBoundApprovals ? { requireBoundApprovals: true as const } : {}),
    ...(options.approvals ? { approvals: options.approvals.policy } : {}),
    toolTimeoutMs: options.toolTimeoutMs,
    modelTimeoutMs: options.modelTimeoutMs,
    maxContextTokens: options.maxContextTokens,
    // Only when set, so sessions keep the inputs (and histories) they had before it existed.
    ...(options.toolHookErrors === 'reject' ? { toolHookErrors: 'reject' as const } : {}),
    ...localDispatchOf(options.hookDispatch, sessionOptions.hookDispatch),
    turnStatus: options.temporal.turnStatus,
    ...(options.continueAsNewAfterPrompts !== undefined
      ? { continueAsNewAfterPrompts: options.continueAsNewAfterPrompts }
      : {}),
    ...((sessionOptions.idleTimeoutMs ?? options.idleTimeoutMs)
      ? { idleTimeoutMs: sessionOptions.idleTimeoutMs ?? options.idleTimeoutMs }
      : {}),
    ...(sessionOptions.resumeSessionId
      ? { isResume: true, resumeSessionId: sessionOptions.resumeSessionId }
      : {}),
    // Only when set, so sessions without a budget keep the inputs (and histories) they had.
    ...(budget ? { budget } : {}),
    // Only when set, so sessions without sub-agents keep the inputs they always had.
    ...(options.subagents
      ? { subagents: subagentsSpecOf(options, sessionOptions, permission, budget) }
      : {}),
  };
}

/**
 * The sub-agents of a session's input: each with its tools, limits, hook counts (its own
 * agent-level hooks, or the agent's when it inherits them, and this session's hooks) and
 * permission (its own, or this session's when it inherits it).
 */
function subagentsSpecOf(
  options: ResolvedAgentOptions,
  sessionOptions: SessionOptions,
  sessionPermission: NonNullable<SessionWorkflowInput['permission']>,
  budget: SessionWorkflowInput['budget'],
): SubagentsSpec | undefined {
  const subagents = options.subagents;
  if (!subagents) return undefined;
  // With a budget, each sub-agent's spend is counted at its model's price.
  const prices = subagentPrices(options.budgets, options.model, subagents, budget);
  return {
    maxDepth: subagents.maxDepth,
    maxConcurrent: subagents.maxConcurrent,
    timeoutMs: subagents.timeoutMs,
    agents: Object.values(subagents.agents).map((agent) => ({
      name: agent.name,
      tools: agent.tools.map((tool) => ({ name: tool.name, kind: tool.kind })),
      maxTurns: agent.maxTurns,
      timeoutMs: agent.timeoutMs,
      hookCounts: hookCountsOf(agent.hooks ?? options.hooks, sessionOptions.hooks),
      permission:
        agent.permission === undefined
          ? sessionPermission
          : typeof agent.permission === 'function'
            ? { handler: 'function' }
            : { preset: agent.permission },
      mayUse: [...agent.subagents],
      ...(agent.mcpTools ? { mcpTools: [...agent.mcpTools] } : {}),
      ...(prices[agent.name] ? { price: prices[agent.name] } : {}),
    })),
  };
}

/**
 * Only when some event is local or inline, so other sessions keep the inputs they had
 * before these existed.
 */
function localDispatchOf(agent: HookDispatchMode, session: HookDispatchMode | undefined) {
  const local = localDispatchEvents(agent, session);
  const inline = inlineDispatchEvents(agent, session);
  return {
    ...(local.length > 0 ? { localDispatch: local } : {}),
    ...(inline.length > 0 ? { inlineDispatch: inline } : {}),
  };
}
