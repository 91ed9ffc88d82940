/**
 * Benchmark-only workflow: runs one activity per Update, so a hook dispatch, a tool execution
 * and a bare no-op activity are timed through identical plumbing.
 */
import {
  ActivityCancellationType,
  defineUpdate,
  executeChild,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  condition,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  DispatchHookInput,
  ExecuteToolInput,
  ExecuteToolOutput,
  HookDispatchOutcome,
} from '../../src/common/activity-io.js';
import type { JsonObject } from '../../src/common/json.js';
import type { ConversationMessage, ToolCall } from '../../src/common/conversation.js';

interface BenchActivities {
  noop(): Promise<void>;
  dispatchHook(input: DispatchHookInput): Promise<HookDispatchOutcome>;
  executeTool(input: ExecuteToolInput): Promise<ExecuteToolOutput>;
}

const acts = proxyActivities<BenchActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export const stepUpdate = defineUpdate<
  string,
  [
    | { kind: 'noop' | 'hook' | 'none'; input?: DispatchHookInput }
    | { kind: 'tool'; input: ExecuteToolInput },
  ]
>('step');
export const stopUpdate = defineUpdate<void>('stop');

export async function benchWorkflow(): Promise<void> {
  let done = false;
  setHandler(stepUpdate, async (step) => {
    if (step.kind === 'noop') await acts.noop();
    else if (step.kind === 'hook' && step.input) await acts.dispatchHook(step.input);
    else if (step.kind === 'tool') await acts.executeTool(step.input);
    return step.kind;
  });
  setHandler(stopUpdate, () => {
    done = true;
  });
  await condition(() => done);
}

/**
 * The baseline of `bench/long-session.ts`: the way other Temporal agent integrations run a
 * loop, passing the whole conversation to every model activity (so each turn's activity
 * input, and with it the history, grows with the conversation).
 */
interface BaselineActivities {
  wholeConversationModel(input: {
    messages: Array<{ role: string; text: string }>;
  }): Promise<string>;
}

const baseline = proxyActivities<BaselineActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

export const turnUpdate = defineUpdate<string, [string]>('turn');

export async function wholeConversationWorkflow(): Promise<void> {
  const messages: Array<{ role: string; text: string }> = [];
  let done = false;
  let busy = Promise.resolve();
  setHandler(turnUpdate, async (prompt) => {
    const previous = busy;
    let release!: () => void;
    busy = new Promise((resolve) => (release = resolve));
    await previous;
    try {
      messages.push({ role: 'user', text: prompt });
      const reply = await baseline.wholeConversationModel({ messages });
      messages.push({ role: 'assistant', text: reply });
      return reply;
    } finally {
      release();
    }
  });
  setHandler(stopUpdate, () => {
    done = true;
  });
  await condition(() => done);
}

/**
 * The baseline of `bench/cluster.ts`: a session written by hand on Temporal, one Update per
 * send that runs the same activities a send of ours runs with one hook (the hook, then the
 * model), one send at a time.
 */
interface SendActivities {
  benchHook(input: { event: string; prompt: string }): Promise<{ action: string }>;
  benchModel(input: { prompt: string }): Promise<string>;
}

const sendActivities = proxyActivities<SendActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

export const sendUpdate = defineUpdate<string, [string]>('send');

export async function handWrittenSessionWorkflow(): Promise<void> {
  let done = false;
  let busy = Promise.resolve();
  setHandler(sendUpdate, async (prompt) => {
    const previous = busy;
    let release!: () => void;
    busy = new Promise((resolve) => (release = resolve));
    await previous;
    try {
      const decision = await sendActivities.benchHook({ event: 'UserPromptSubmit', prompt });
      if (decision.action !== 'continue') return 'rejected';
      return await sendActivities.benchModel({ prompt });
    } finally {
      release();
    }
  });
  setHandler(stopUpdate, () => {
    done = true;
  });
  await condition(() => done);
}

/**
 * The baseline of `bench/hotpath.ts`: a send written by hand on Temporal with the same
 * activities a session runs (the real `dispatchHook` for each event that has callbacks, one
 * model step calling the same model), the conversation passed in the model step's input, and
 * none of the SDK's bookkeeping (timeline, fail-closed, abort, rollover).
 */
interface HandActivities {
  dispatchHook(input: DispatchHookInput): Promise<HookDispatchOutcome>;
  handModelStep(input: {
    agentName: string;
    messages: Array<{ role: 'user'; content: string } | { role: 'assistant'; text: string }>;
  }): Promise<string>;
}

const hand = proxyActivities<HandActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** The same dispatch as a local activity, for the baseline of `hookDispatch: 'local'`. */
const handLocal = proxyLocalActivities<
  Pick<HandActivities, 'dispatchHook'> & { noop(): Promise<void> }
>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export const handSendUpdate = defineUpdate<string, [string]>('handSend');

export async function handWrittenSession(input: {
  agentName: string;
  /** Callbacks per event, as the agent registered them. */
  hookCounts: Partial<Record<'UserPromptSubmit' | 'TaskCompleted', number>>;
  /** Dispatch hooks as local activities. @default false */
  localDispatch?: boolean;
  /**
   * Instead of each dispatch, one local activity that does nothing: what a local activity
   * costs in Temporal's TypeScript SDK on this machine, the floor of any local dispatch.
   * @default false
   */
  localNoop?: boolean;
}): Promise<void> {
  const messages: Parameters<HandActivities['handModelStep']>[0]['messages'] = [];
  let done = false;
  let busy = Promise.resolve();
  let seq = 0;
  const dispatch = async (event: 'UserPromptSubmit' | 'TaskCompleted', payload: JsonObject) => {
    const callbackCount = input.hookCounts[event] ?? 0;
    if (callbackCount === 0) return;
    if (input.localNoop) return await handLocal.noop();
    const outcome = await (input.localDispatch ? handLocal : hand).dispatchHook({
      dispatchId: `d${seq++}`,
      sessionId: 'hand',
      agentName: input.agentName,
      event: event as DispatchHookInput['event'],
      payload,
      budgetMs: 600_000,
      callbackCount,
    });
    if (outcome.status !== 'completed') throw new Error(`hook ${event}: ${outcome.status}`);
  };
  setHandler(handSendUpdate, async (prompt) => {
    const previous = busy;
    let release!: () => void;
    busy = new Promise((resolve) => (release = resolve));
    await previous;
    try {
      await dispatch('UserPromptSubmit', { userPrompt: prompt, hasImages: false, imageCount: 0 });
      messages.push({ role: 'user', content: prompt });
      const text = await hand.handModelStep({ agentName: input.agentName, messages });
      messages.push({ role: 'assistant', text });
      await dispatch('TaskCompleted', { taskId: 'x', taskDescription: prompt, success: true });
      return text;
    } finally {
      release();
    }
  });
  setHandler(stopUpdate, () => {
    done = true;
  });
  await condition(() => done);
}

/**
 * The baseline of `bench/subagents.ts`: a `Task` call written by hand on Temporal. The parent
 * runs the hook and the model as `handWrittenSession` does; when the model asks for the
 * sub-agent, it runs `benchTaskChild` as a child workflow (the same hook and model
 * activities), then the model again with the child's text. No tool pipeline, timeline,
 * abort or lineage.
 */
interface TaskActivities {
  dispatchHook(input: DispatchHookInput): Promise<HookDispatchOutcome>;
  taskModelStep(input: {
    agentName: string;
    role: 'parent' | 'child';
    last: string;
  }): Promise<string>;
}

const taskActs = proxyActivities<TaskActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export const taskSendUpdate = defineUpdate<string, [string]>('taskSend');

async function taskDispatch(agentName: string, sessionId: string, id: string, prompt: string) {
  const outcome = await taskActs.dispatchHook({
    dispatchId: id,
    sessionId,
    agentName,
    event: 'UserPromptSubmit' as DispatchHookInput['event'],
    payload: { userPrompt: prompt, hasImages: false, imageCount: 0 },
    budgetMs: 600_000,
    callbackCount: 1,
  });
  if (outcome.status !== 'completed') throw new Error(`hook: ${outcome.status}`);
}

export async function benchTaskChild(input: {
  agentName: string;
  prompt: string;
}): Promise<string> {
  await taskDispatch(input.agentName, 'hand-child', 'c0', input.prompt);
  return await taskActs.taskModelStep({
    agentName: input.agentName,
    role: 'child',
    last: input.prompt,
  });
}

export async function benchTaskParent(input: { agentName: string }): Promise<void> {
  let done = false;
  let busy = Promise.resolve();
  let seq = 0;
  setHandler(taskSendUpdate, async (prompt) => {
    const previous = busy;
    let release!: () => void;
    busy = new Promise((resolve) => (release = resolve));
    await previous;
    try {
      const n = seq++;
      await taskDispatch(input.agentName, 'hand', `p${n}`, prompt);
      const ask = await taskActs.taskModelStep({
        agentName: input.agentName,
        role: 'parent',
        last: prompt,
      });
      const text = await executeChild(benchTaskChild, {
        workflowId: `${workflowInfo().workflowId}/${n}`,
        args: [{ agentName: input.agentName, prompt: ask }],
      });
      return await taskActs.taskModelStep({
        agentName: input.agentName,
        role: 'parent',
        last: text,
      });
    } finally {
      release();
    }
  });
  setHandler(stopUpdate, () => {
    done = true;
  });
  await condition(() => done);
}

/**
 * The baseline of `bench/mcp.ts`: an MCP tool call written by hand on Temporal. One Update
 * per send runs a model step, the PreToolUse dispatch, an activity calling the MCP server's
 * tool through its own client, the PostToolUse dispatch and a second model step. No
 * recorded tool list, permission decision, timeline, abort or digest check.
 */
interface McpActivities {
  dispatchHook(input: DispatchHookInput): Promise<HookDispatchOutcome>;
  mcpModelStep(input: {
    agentName: string;
    messages: ConversationMessage[];
  }): Promise<{ text: string; toolCalls?: ToolCall[] }>;
  mcpCall(input: {
    server: string;
    tool: string;
    args: JsonObject;
    /** List the server's tools before the call, as our digest check does. */
    list: boolean;
  }): Promise<{ status: 'success' | 'error'; model: string }>;
}

const mcpActs = proxyActivities<McpActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export const mcpSendUpdate = defineUpdate<string, [string]>('mcpSend');

export async function benchMcpSession(input: {
  agentName: string;
  server: string;
  list: boolean;
}): Promise<void> {
  let done = false;
  let busy = Promise.resolve();
  let seq = 0;
  const dispatch = async (event: 'PreToolUse' | 'PostToolUse', payload: JsonObject) => {
    const outcome = await mcpActs.dispatchHook({
      dispatchId: `d${seq++}`,
      sessionId: 'hand',
      agentName: input.agentName,
      event: event as DispatchHookInput['event'],
      payload,
      budgetMs: 600_000,
      callbackCount: 1,
    });
    if (outcome.status !== 'completed') throw new Error(`hook ${event}: ${outcome.status}`);
  };
  setHandler(mcpSendUpdate, async (prompt) => {
    const previous = busy;
    let release!: () => void;
    busy = new Promise((resolve) => (release = resolve));
    await previous;
    try {
      const messages: ConversationMessage[] = [{ role: 'user', content: prompt }];
      const ask = await mcpActs.mcpModelStep({ agentName: input.agentName, messages });
      const call = ask.toolCalls?.[0];
      if (!call) return ask.text;
      const tool = call.toolName.slice(`mcp__${input.server}__`.length);
      const fields = { mcpServer: input.server, mcpTool: tool };
      const { toolName, toolUseId, input: toolInput } = call;
      await dispatch('PreToolUse', { toolName, toolInput, toolUseId, ...fields });
      const result = await mcpActs.mcpCall({
        server: input.server,
        tool,
        args: toolInput,
        list: input.list,
      });
      await dispatch('PostToolUse', {
        toolName,
        toolInput,
        toolOutput: result.model,
        toolUseId,
        ...fields,
      });
      messages.push(
        { role: 'assistant', text: ask.text, toolCalls: [call] },
        { role: 'tool', results: [{ toolUseId, toolName, ...result }] },
      );
      const answer = await mcpActs.mcpModelStep({ agentName: input.agentName, messages });
      return answer.text;
    } finally {
      release();
    }
  });
  setHandler(stopUpdate, () => {
    done = true;
  });
  await condition(() => done);
}
