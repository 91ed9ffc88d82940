/**
 * Tool activities: describe a call (kind, affected paths), ask the agent's permission
 * function, and execute a tool.
 *
 * @module
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ToolError, serializeError } from '../src/common/errors.js';
import { normalizePermission } from '../src/common/permission.js';
import type {
  CheckPermissionInput,
  CheckPermissionOutput,
  DescribeToolCallInput,
  DispatchHookInput,
  ExecuteToolInput,
  ExecuteToolOutput,
  HookDispatchOutcome,
  InlineToolDetail,
  ToolCallDescription,
} from '../src/common/activity-io.js';
import {
  TOOL_EXECUTION_LOST_TYPE,
  TOOL_EXECUTION_NOT_BEGUN_TYPE,
} from '../src/common/activity-io.js';
import type { ToolResult } from '../src/common/types.js';
import type { PayloadStore } from '../src/payloads/store.js';
import type { AgentRegistry } from '../src/definition/registry.js';
import { runTool } from '../src/tools/run-tool.js';
import type { ToolDefinition } from '../src/tools/tool.js';
import { abortSignalFor } from './abort-reason.js';
import { McpToolLists, mcpCallTool } from './mcp.js';
import type { McpToolRef } from '../src/common/mcp.js';
import { realClock, type BudgetClock } from './budget-clock.js';
import {
  earlierAttemptBegan,
  finalFailure,
  heartbeatKeepingRecord,
  recordBegan,
} from './attempt-record.js';

/** Dependencies of the tool activities. */
interface ToolActivityDeps {
  registry: AgentRegistry;
  /** How often a running tool heartbeats, ms. */
  heartbeatIntervalMs: number;
  /** Where full outputs cut for the model are kept; none kept when absent. */
  payloadStore?: PayloadStore;
  /** The clock tool budgets run on. @default the process's clock */
  clock?: BudgetClock;
  /** The MCP tool lists this worker has seen. @default none kept (read from the session) */
  mcpLists?: McpToolLists;
}

/**
 * `executeTool` that runs the execution's inline PostToolUse dispatch (`input.hook`,
 * `hookDispatch: { PostToolUse: 'inline' }`) after a tool that succeeded, with
 * `dispatchInline` (the worker's `dispatchHook`: its stream event and span included), and
 * returns its outcome with the result. Applied outside the live stream's wrapper of
 * `executeTool`, so the stream says the tool ended (with its own duration) before the
 * callbacks' `hook` event, as with the default dispatch.
 */
export function withInlinePostToolUse(
  executeTool: (input: ExecuteToolInput) => Promise<ExecuteToolOutput>,
  dispatchInline: (input: DispatchHookInput) => Promise<HookDispatchOutcome>,
): (input: ExecuteToolInput) => Promise<ExecuteToolOutput> {
  return async (input) => {
    const result = await executeTool(input);
    if (!input.hook || result.status !== 'success') return result;
    const { hook } = input;
    const started = performance.now();
    try {
      const outcome = await dispatchInline({
        ...hook,
        payload: { ...hook.payload, toolOutput: result.model },
      });
      return { ...result, hook: outcome };
    } catch (error) {
      // Aborted while the callbacks ran: the tool ran, and its result goes with the
      // cancellation (after the dispatch's cleanup handle), as the default dispatch keeps it.
      if (error instanceof CancelledFailure) {
        const detail: InlineToolDetail = {
          inlineTool: result,
          durationMs: Math.round(performance.now() - started),
        };
        throw new CancelledFailure(error.message, [...error.details, detail]);
      }
      // The tool ran: no later attempt may run it again to report this.
      throw finalFailure(error);
    }
  };
}

/** Build `describeToolCall`, `checkPermission` and `executeTool`. */
export function createToolActivities(deps: ToolActivityDeps) {
  const clock = deps.clock ?? realClock;
  return {
    describeToolCall: (input: DescribeToolCallInput) => describeToolCall(deps.registry, input),
    checkPermission: (input: CheckPermissionInput) => checkPermission(deps, input),
    executeTool: (input: ExecuteToolInput) => executeTool(deps, clock, input),
  };
}

/** A call's kind and the paths it affects, as its tool names them; unknown tools say so. */
async function describeToolCall(
  registry: AgentRegistry,
  input: DescribeToolCallInput,
): Promise<ToolCallDescription> {
  // A sub-agent's call: only its own tools are known to it.
  const { agent, tools } = registry.definitionFor(input.agentName, input.version, input.lineage);
  const tool = tools.find((t) => t.name === input.toolName);
  if (!tool) return { known: false, kind: 'execute', affectedPaths: [] };
  let affectedPaths: string[] = [];
  try {
    const parsed = tool.inputSchema.safeParse(input.input);
    if (parsed.success && tool.affectedPaths) {
      affectedPaths = tool.affectedPaths(parsed.data, { workspaceRoots: agent.workspaceRoots });
    }
  } catch {
    // A tool that cannot name its paths still asks for permission, with none listed.
  }
  // Said only when it is not what the kind implies, so descriptions stay as they were.
  const idempotent = tool.idempotent ?? tool.kind === 'readonly';
  return {
    known: true,
    kind: tool.kind,
    affectedPaths,
    ...(idempotent !== (tool.kind === 'readonly') ? { idempotent } : {}),
  };
}

/** The permission function's answer for a call: the session's own, else the agent's. */
async function checkPermission(
  deps: ToolActivityDeps,
  input: CheckPermissionInput,
): Promise<CheckPermissionOutput> {
  const { registry } = deps;
  // A session's own function is never replaced by the agent's: a worker without it refuses.
  // A sub-agent asks its own function, else the top session's or the agent's.
  const owner = input.lineage?.rootSessionId ?? input.sessionId;
  const permission =
    input.handler === 'session'
      ? registry.sessionPermission(owner)
      : registry.definitionFor(input.agentName, input.version, input.lineage).permission;
  if (!permission) {
    return {
      ok: false,
      error: {
        name: 'ConfigError',
        code: 'CONFIG_INVALID',
        message:
          input.handler === 'session'
            ? `This worker has no permissionHandler for session '${owner}' (it runs on the worker of the process that created the session)`
            : 'This worker has no permission function',
      },
    };
  }
  const ctx = Context.current();
  // Heartbeats carry cancellation: without them the function's signal never fires on abort.
  const heartbeat = setInterval(() => ctx.heartbeat(), deps.heartbeatIntervalMs);
  // Aborted with the reason `abort()` was called with, up a sub-agent's parents, as a hook
  // callback's signal is.
  const aborting = abortSignalFor(ctx, input.lineage?.depth ?? 0);
  try {
    const value = await permission({
      toolName: input.toolName,
      input: input.input,
      kind: input.kind,
      affectedPaths: input.affectedPaths,
      signal: aborting.signal,
      ...(input.lineage ? { agentPath: input.lineage.agentPath, depth: input.lineage.depth } : {}),
    });
    const result = normalizePermission(value, input.toolName);
    if (!result) {
      return {
        ok: false,
        error: {
          name: 'ConfigError',
          code: 'CONFIG_INVALID',
          message: `advanced.permission returned ${JSON.stringify(value) ?? String(value)} for ${input.toolName}; expected 'allow', 'deny', 'ask' or a PermissionResult`,
        },
      };
    }
    return { ok: true, result };
  } catch (error) {
    if (error instanceof CancelledFailure) throw error;
    return { ok: false, error: serializeError(error) };
  } finally {
    clearInterval(heartbeat);
    aborting.dispose();
  }
}

/**
 * The tool itself, within its budget; cancelled, it reports as cancelled once cleaned up.
 * Before the tool runs, the attempt has the server record that it began (`attempt-record.ts`):
 * a later attempt that finds the record ends as lost (`refuseToolIfBegun`), so a tool runs at
 * most once, and an attempt lost before it (a task the matching service never delivered) is
 * retried. An idempotent call (`ExecuteToolInput.idempotent`: read-only) sends no record: an
 * attempt lost while it ran is retried too.
 */
async function executeTool(
  deps: ToolActivityDeps,
  clock: BudgetClock,
  input: ExecuteToolInput,
): Promise<ExecuteToolOutput> {
  const ctx = Context.current();
  const { agent, tools } = deps.registry.definitionFor(
    input.agentName,
    input.version,
    input.lineage,
  );
  const tool = input.mcp
    ? mcpToolOf(deps, agent, ctx, input.toolName, input.mcp)
    : tools.find((t) => t.name === input.toolName);
  if (!tool) {
    const message = `Unknown tool '${input.toolName}'`;
    return { status: 'error', model: message, error: { message, type: 'UnknownTool' } };
  }
  // An idempotent call may run again after a lost attempt: no record that it began.
  const recorded =
    input.idempotent === true
      ? 'not-recorded'
      : await recordBegan(
          ctx,
          { began: input.toolUseId },
          `Tool ${input.toolName}`,
          TOOL_EXECUTION_NOT_BEGUN_TYPE,
          Math.max(1000, 4 * deps.heartbeatIntervalMs),
        );
  if (recorded === 'cancelled') throw new CancelledFailure('Tool execution was cancelled');
  try {
    return await runWithinBudget(deps, clock, ctx, agent, tool, input);
  } catch (error) {
    // The tool began: whatever ends this attempt now, no later attempt runs it.
    throw finalFailure(error);
  }
}

/**
 * The tool an MCP call runs (the session recorded it when it opened); undefined when this
 * worker's definition has no MCP servers.
 */
function mcpToolOf(
  deps: ToolActivityDeps,
  agent: ReturnType<AgentRegistry['agent']>,
  ctx: Context,
  name: string,
  ref: McpToolRef,
): ToolDefinition | undefined {
  if (!agent.mcp) return undefined;
  const lists = deps.mcpLists ?? new McpToolLists();
  const recorded = async () =>
    (await lists.get(ctx, ref.list).catch(() => undefined))?.tools.find((t) => t.name === name);
  return mcpCallTool(agent.mcp, name, ref, recorded);
}

/** Run the tool, heartbeating, until it ends, its budget runs out, or it is cancelled. */
async function runWithinBudget(
  deps: ToolActivityDeps,
  clock: BudgetClock,
  ctx: Context,
  agent: ReturnType<AgentRegistry['agent']>,
  tool: ToolDefinition,
  input: ExecuteToolInput,
): Promise<ToolResult> {
  const heartbeat = setInterval(() => heartbeatKeepingRecord(ctx), deps.heartbeatIntervalMs);
  // The tool's time budget, enforced here for every tool: its signal aborts at the budget
  // and the call ends with a timeout result even if the tool ignores the signal.
  const timeout = new AbortController();
  const cancelTimer = clock.after(input.timeoutMs, () =>
    timeout.abort(new ToolTimeoutError(input.toolName, input.timeoutMs)),
  );
  const signal = AbortSignal.any([ctx.cancellationSignal, timeout.signal]);
  const timedOut = new Promise<ToolResult>((resolve) => {
    timeout.signal.addEventListener('abort', () => {
      const message = `Tool ${input.toolName} timed out after ${input.timeoutMs} ms`;
      resolve({ status: 'error', model: message, error: { message, type: 'TimeoutError' } });
    });
  });
  try {
    const running = runTool(tool, input.input, {
      sessionId: input.sessionId,
      toolUseId: input.toolUseId,
      signal,
      workspaceRoots: agent.workspaceRoots,
      // The tool's own details go with the record that it began, never in its place.
      heartbeat: (details?: unknown) => heartbeatKeepingRecord(ctx, details),
      timeoutMs: input.timeoutMs,
      maxOutputBytes: agent.maxToolOutputBytes,
      ...(agent.toolEnv ? { env: agent.toolEnv } : {}),
      ...(deps.payloadStore ? { saveFullOutput: saverOf(deps.payloadStore) } : {}),
    });
    // A tool that honours its signal reports its own timeout result (e.g. Bash, after
    // killing its process group); one that does not is answered for at the budget.
    const result = await Promise.race([
      running,
      timedOut.then(async (fallback) => {
        const settled = await Promise.race([running, delay(2_000).then(() => undefined)]);
        return settled ?? fallback;
      }),
    ]);
    // A cancelled call reports as cancelled, after the tool cleaned up (e.g. killed its
    // process group), so the workflow knows nothing is left running.
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure('Tool execution was cancelled');
    return result;
  } finally {
    clearInterval(heartbeat);
    cancelTimer();
  }
}

/**
 * A later attempt of a tool execution whose earlier attempt began the tool (its heartbeat
 * details say so) ends at once: that attempt was lost with the tool running, and a tool runs
 * at most once. Checked before the version guard, as `refuseIfBegun` is for a dispatch.
 * @throws ApplicationFailure of type {@link TOOL_EXECUTION_LOST_TYPE}, non-retryable.
 */
export function refuseToolIfBegun(ctx: Context, input: ExecuteToolInput): void {
  if (!earlierAttemptBegan(ctx, input.toolUseId)) return;
  throw ApplicationFailure.create({
    type: TOOL_EXECUTION_LOST_TYPE,
    nonRetryable: true,
    message:
      `attempt ${ctx.info.attempt - 1} began the tool, then was lost (its worker stopped ` +
      `heartbeating, or it overran its backstop timeout); the tool is not run again`,
  });
}

/** The reason a tool's signal aborts with when its time budget runs out. */
class ToolTimeoutError extends ToolError {
  constructor(toolName: string, timeoutMs: number) {
    super(`Tool ${toolName} exceeded ${timeoutMs}ms`);
    this.name = 'TimeoutError';
  }
}

function saverOf(store: PayloadStore) {
  return (text: string | Uint8Array) =>
    store.put(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
