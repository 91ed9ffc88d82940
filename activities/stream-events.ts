/**
 * The live-stream events of the hook, tool and permission activities: each of them,
 * wrapped, publishes what it did to its send's stream (`advanced.stream`) as it does it,
 * after the events the workflow handed it (`streamEvents`: the permission decisions made
 * since the send's last activity). Nothing here changes what an activity returns or throws,
 * and nothing waits on readers.
 *
 * @module
 */
import { CancelledFailure } from '@temporalio/common';
import { messageOf } from '../src/common/errors.js';
import { mergeHookOutputs } from '../src/common/hook-rules.js';
import type {
  CheckPermissionInput,
  CheckPermissionOutput,
  DispatchHookInput,
  ExecuteToolInput,
  ExecuteToolOutput,
  HookDispatchOutcome,
  PublishStreamEventsInput,
} from '../src/common/activity-io.js';
import type { WorkflowStreamEvent } from '../src/common/permission-events.js';
import type { SessionLineage } from '../src/common/workflow-io.js';
import type { AgentRegistry } from '../src/definition/registry.js';
import type { HookDispatchEvent } from '../src/stream/events.js';
import { streamWriter, type SendStreamWriter, type StreamTarget } from '../src/stream/writer.js';

type Activity<I, O> = (input: I) => Promise<O>;

interface Wrapped {
  dispatchHook: Activity<DispatchHookInput, HookDispatchOutcome>;
  executeTool: Activity<ExecuteToolInput, ExecuteToolOutput>;
  checkPermission: Activity<CheckPermissionInput, CheckPermissionOutput>;
}

/** `activities` with `dispatchHook`, `executeTool` and `checkPermission` publishing their events. */
export function withStreamEvents<T extends Wrapped>(registry: AgentRegistry, activities: T): T {
  const { dispatchHook, executeTool, checkPermission } = activities;
  return {
    ...activities,
    dispatchHook: (input: DispatchHookInput) => streamedDispatch(registry, dispatchHook, input),
    executeTool: (input: ExecuteToolInput) => streamedExecution(registry, executeTool, input),
    checkPermission: (input: CheckPermissionInput) =>
      streamedPermission(registry, checkPermission, input),
  };
}

/** What an activity's input says of its send: whose session and send, and its lineage. */
interface StreamedInput {
  sessionId: string;
  requestId?: string;
  lineage?: SessionLineage;
}

/**
 * The stream an activity's events go to: in a sub-agent, the stream of the top session's
 * send that started it (`lineage.stream`), whatever the sub-agent's own session and send;
 * else the activity's own send. `requestId` is undefined outside a send (SessionStart and
 * SessionEnd of a top session: no stream).
 */
export function streamKeyOf(input: StreamedInput): {
  sessionId: string;
  requestId: string | undefined;
} {
  return input.lineage?.stream ?? { sessionId: input.sessionId, requestId: input.requestId };
}

/** {@link streamKeyOf}, with the sub-agent's path every event of a sub-agent carries. */
export function streamTargetOf(input: StreamedInput): StreamTarget {
  const key = streamKeyOf(input);
  return input.lineage ? { ...key, agentPath: input.lineage.agentPath } : key;
}

/** The send's stream writer for an activity's input; undefined when this worker lacks the agent. */
function writerOf(
  registry: AgentRegistry,
  input: StreamedInput & { agentName: string },
): SendStreamWriter | undefined {
  let transport;
  try {
    transport = registry.agent(input.agentName).stream;
  } catch {
    return undefined; // the activity itself says that this worker lacks the agent
  }
  return streamWriter(transport, streamTargetOf(input));
}

/** `dispatchHook`, then a `hook` event with the decision (or the failure) it came to. */
async function streamedDispatch(
  registry: AgentRegistry,
  dispatchHook: Wrapped['dispatchHook'],
  input: DispatchHookInput,
): Promise<HookDispatchOutcome> {
  const writer = writerOf(registry, input);
  if (!writer) return dispatchHook(input);
  emitCarried(writer, input.streamEvents);
  const started = performance.now();
  const tags = toolTagsOf(input);
  try {
    const outcome = await dispatchHook(input);
    writer.emit({ type: 'hook', event: input.event, ...tags, ...decisionOf(outcome) });
    return outcome;
  } catch (error) {
    writer.emit({
      type: 'hook',
      event: input.event,
      ...tags,
      decision: error instanceof CancelledFailure ? 'cancelled' : 'error',
      reason: messageOf(error),
      callbackCount: input.callbackCount,
      durationMs: Math.round(performance.now() - started),
    });
    throw error;
  } finally {
    await writer.flush();
  }
}

/** `executeTool` between a `tool-start` and a `tool-end` event. */
async function streamedExecution(
  registry: AgentRegistry,
  executeTool: Wrapped['executeTool'],
  input: ExecuteToolInput,
): Promise<ExecuteToolOutput> {
  const writer = writerOf(registry, input);
  if (!writer) return executeTool(input);
  emitCarried(writer, input.streamEvents);
  const { toolUseId, toolName } = input;
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  writer.emit({ type: 'tool-start', toolUseId, toolName, input: input.input });
  try {
    const result = await executeTool(input);
    const summary =
      result.display?.summary ?? (result.status === 'error' ? result.error.message : undefined);
    writer.emit({
      type: 'tool-end',
      toolUseId,
      toolName,
      status: result.status,
      ...(summary !== undefined ? { summary } : {}),
      durationMs: ms(),
    });
    return result;
  } catch (error) {
    const cancelled = error instanceof CancelledFailure;
    writer.emit({
      type: 'tool-end',
      toolUseId,
      toolName,
      status: cancelled ? 'cancelled' : 'error',
      summary: messageOf(error),
      durationMs: ms(),
    });
    throw error;
  } finally {
    await writer.flush();
  }
}

/** `checkPermission` after a `permission-asked` event. */
async function streamedPermission(
  registry: AgentRegistry,
  checkPermission: Wrapped['checkPermission'],
  input: CheckPermissionInput,
): Promise<CheckPermissionOutput> {
  const writer = writerOf(registry, input);
  if (!writer) return checkPermission(input);
  emitCarried(writer, input.streamEvents);
  const { toolUseId, toolName, kind, affectedPaths } = input;
  // Only the asking: the workflow makes the decision of what the function returned (or of
  // its failure), and the send's next activity publishes it.
  writer.emit({
    type: 'permission-asked',
    toolUseId,
    toolName,
    kind,
    affectedPaths,
    askedOf: 'function',
  });
  try {
    return await checkPermission(input);
  } finally {
    await writer.flush();
  }
}

/**
 * The `publishStreamEvents` local activity: the workflow's stream events that no following
 * activity of the send carries (a person is asked; a denial is the send's last act). Never
 * fails: the stream is best effort, the session is not.
 */
export function createStreamActivities(registry: AgentRegistry) {
  return {
    async publishStreamEvents(input: PublishStreamEventsInput): Promise<void> {
      // Undefined when this worker lacks the agent: nothing to publish to.
      const writer = writerOf(registry, input);
      if (!writer) return;
      emitCarried(writer, input.events);
      await writer.flush();
    },
  };
}

/** Publish the events the workflow handed an activity, in order. */
function emitCarried(writer: SendStreamWriter, events: WorkflowStreamEvent[] | undefined): void {
  for (const event of events ?? []) writer.emit(event);
}

function toolTagsOf(input: DispatchHookInput): { toolName?: string; toolUseId?: string } {
  const { toolName, toolUseId } = input.payload;
  return {
    ...(typeof toolName === 'string' ? { toolName } : {}),
    ...(typeof toolUseId === 'string' ? { toolUseId } : {}),
  };
}

/** The decision a dispatch's outcome comes to, as the workflow merges it. */
function decisionOf(
  outcome: HookDispatchOutcome,
): Pick<HookDispatchEvent, 'decision' | 'reason' | 'callbackCount' | 'durationMs'> {
  const { callbackCount, durationMs } = outcome;
  switch (outcome.status) {
    case 'completed': {
      const merged = mergeHookOutputs(outcome.outputs);
      return {
        decision: merged.action,
        ...(merged.reason !== undefined ? { reason: merged.reason } : {}),
        callbackCount,
        durationMs,
      };
    }
    case 'error':
      return { decision: 'error', reason: outcome.error.message, callbackCount, durationMs };
    case 'timeout':
      return { decision: 'timeout', callbackCount, durationMs };
  }
}
