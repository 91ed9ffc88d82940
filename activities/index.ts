/**
 * Every activity of a session, built from the worker's dependencies.
 *
 * @module
 */
import type {
  ActivityName,
  DispatchHookInput,
  ExecuteToolInput,
  HookDispatchOutcome,
} from '../src/common/activity-io.js';
import type { PayloadStore } from '../src/payloads/store.js';
import type { AgentRegistry } from '../src/definition/registry.js';
import type { BudgetClock } from './budget-clock.js';
import type { ConversationCache } from './conversation-cache.js';
import { createArchiveActivities } from './archive-run.js';
import { createBudgetActivities } from './budget-lease.js';
import { createDefinitionActivities } from './describe-definition.js';
import { createApprovalActivities } from './approval-notify.js';
import { Context } from '@temporalio/activity';
import { createHookActivities, refuseIfBegun } from './hook-dispatch.js';
import { createModelActivities } from './model-step.js';
import { McpToolLists, createMcpActivities } from './mcp.js';
import { createToolActivities, refuseToolIfBegun, withInlinePostToolUse } from './tool-exec.js';
import { guardVersions } from './version-guard.js';
import { createStreamActivities, withStreamEvents } from './stream-events.js';
import { withTracing } from './tracing.js';
import type { AgentTracing } from '../src/tracing/tracing.js';

/** Dependencies of the activities. */
interface ActivityDeps {
  registry: AgentRegistry;
  /** This process's worker-unique task queue. */
  cleanupQueue: string;
  /** How often a running dispatch heartbeats, ms. */
  heartbeatIntervalMs: number;
  /** Where oversized values (tool outputs, hook outputs, run archives) go. */
  payloadStore: PayloadStore;
  /** The clock hook and tool budgets run on. @default the process's clock */
  clock?: BudgetClock;
  /** This worker's copies of its sessions' contexts (model steps read them without a query). */
  conversationCache?: ConversationCache;
  /** The agent's tracing (`tracing` on): the activities' spans. @default off */
  tracing?: AgentTracing;
}

/**
 * `createActivities({ registry, cleanupQueue, heartbeatIntervalMs, payloadStore })`. Every
 * activity that runs the definition's code (hooks, model, tools, permission) first checks the
 * session's version against the registry and refuses another definition's task
 * (`version-guard.ts`).
 */
export function createActivities(deps: ActivityDeps) {
  // The MCP tool lists the sessions of this worker started with, shared by the activities.
  const mcpLists = new McpToolLists();
  // A model step's or a tool's inline dispatch runs the finished `dispatchHook` below: the
  // same stream event and span as a dispatch of its own.
  let dispatchHook: (input: DispatchHookInput) => Promise<HookDispatchOutcome> = () =>
    Promise.reject(new Error('dispatchHook is not built yet'));
  const dispatchInline = (input: DispatchHookInput) => dispatchHook(input);
  // The hook, tool and permission activities publish to their send's live stream; a worker of
  // another version refuses first (nothing runs, nothing is published). With tracing on,
  // each runs in its span, a refusal included.
  const streamed = withStreamEvents(deps.registry, {
    ...createHookActivities(deps),
    ...createModelActivities({ ...deps, dispatchInline, mcpLists }),
    ...createToolActivities({ ...deps, mcpLists }),
    ...createMcpActivities({ registry: deps.registry, lists: mcpLists }),
    ...createArchiveActivities(deps),
    ...createDefinitionActivities(deps),
    ...createApprovalActivities(deps),
    // Publishes what the workflow decided (no definition code runs): any worker may.
    ...createStreamActivities(deps.registry),
    // Asks a shared budget's workflow (no definition code runs): any worker may.
    ...createBudgetActivities(),
  });
  const guarded = guardVersions(
    deps.registry,
    // A tool's inline PostToolUse runs after the tool's own stream events.
    {
      ...streamed,
      executeTool: withInlinePostToolUse(streamed.executeTool, dispatchInline),
    },
    [
      'dispatchHook',
      'modelStep',
      'describeToolCall',
      'checkPermission',
      'executeTool',
      'listMcpTools',
    ],
  );
  const activities = withTracing(deps.tracing, deps.registry, {
    ...guarded,
    // A retried dispatch whose earlier attempt began its callbacks ends as lost before the
    // version check: refused instead, it would be scheduled again as a new activity (attempt
    // 1, no record), and a worker of the session's version would run the callbacks twice.
    dispatchHook: async (input: DispatchHookInput) => {
      refuseIfBegun(Context.current(), input);
      return guarded.dispatchHook(input);
    },
    // The same for a tool execution whose earlier attempt began the tool.
    executeTool: async (input: ExecuteToolInput) => {
      refuseToolIfBegun(Context.current(), input);
      return guarded.executeTool(input);
    },
  });
  dispatchHook = activities.dispatchHook;
  return activities;
}

type Assert<T extends true> = T;
/** Compile-time: the activities are exactly the ones the protocol names (histories record them). */
type _Named = Assert<
  [keyof ReturnType<typeof createActivities>] extends [ActivityName]
    ? [ActivityName] extends [keyof ReturnType<typeof createActivities>]
      ? true
      : false
    : false
>;
