/**
 * Sub-agents' pure rules, shared by the session workflow and the tests: a sub-agent's session
 * id and path, its workflow input made from its parent's, and the refusals of a `Task` call
 * (each a tool error the model reads). Workflow-safe: no Node imports, no clock, no random.
 *
 * @module
 */
import type { JsonObject } from './json.js';
import type {
  SessionLineage,
  SessionWorkflowInput,
  SubagentSpec,
  SubagentTask,
} from './workflow-io.js';

/** The name of the `Task` tool (`src/tools/builtin/task.ts`). */
export const TASK_TOOL = 'Task';

/** The path of the top session of a tree of sub-agents. */
export const ROOT_AGENT_PATH = 'main';

/** Stable codes of a refused `Task` call (the tool error's `code`). */
type SubagentRefusalCode =
  | 'SUBAGENT_INPUT_INVALID'
  | 'SUBAGENT_UNKNOWN'
  | 'SUBAGENT_NOT_ALLOWED'
  | 'SUBAGENT_DEPTH_LIMIT'
  | 'SUBAGENT_CONCURRENCY_LIMIT';

/** Why a `Task` call starts no sub-agent: its tool error. */
interface SubagentRefusal {
  code: SubagentRefusalCode;
  /** What the model is told. */
  message: string;
}

/**
 * The session id of the sub-agent a `Task` call starts: `<parent>/<modelStepIndex>-<toolUseId>`
 * (its workflow id is `session-` and this). The step index keeps ids unique when a provider
 * reuses tool-use ids across steps. Pure.
 */
export function childSessionIdOf(
  parentSessionId: string,
  modelStepIndex: number,
  toolUseId: string,
): string {
  return `${parentSessionId}/${modelStepIndex}-${toolUseId}`;
}

/** The path of sub-agent `name` started by a session at `parent` (`main` for a top session). Pure. */
export function agentPathOf(parent: SessionLineage | undefined, name: string): string {
  return `${parent?.agentPath ?? ROOT_AGENT_PATH}/${name}`;
}

/**
 * The lineage of the sub-agent a `Task` call of session `parent` starts. Pure.
 * @param stream the top session's send whose stream the sub-agent's events join: for a top
 *   session, its own send (`{ sessionId, requestId }`); a sub-agent passes on its own.
 */
export function childLineageOf(
  parent: Pick<SessionWorkflowInput, 'sessionId' | 'lineage'>,
  subagent: string,
  toolUseId: string,
  stream: SessionLineage['stream'],
): SessionLineage {
  return {
    parentSessionId: parent.sessionId,
    rootSessionId: parent.lineage?.rootSessionId ?? parent.sessionId,
    agentPath: agentPathOf(parent.lineage, subagent),
    depth: (parent.lineage?.depth ?? 0) + 1,
    subagent,
    toolUseId,
    stream: parent.lineage?.stream ?? stream,
  };
}

/**
 * The workflow input of a sub-agent's session, from its parent's: the parent's definition
 * (`version`, `fingerprint`, `manifest`), budgets, dispatch modes, task queue and
 * `permissionRules` (a sub-agent follows its top session's rules); the
 * sub-agent's tools, `maxTurns`, hook counts and permission; an ask's deadline of the
 * parent's `permissionTimeoutMs` or the `Task` budget, whichever is shorter; the `Task` tool
 * only when it may start sub-agents (its depth under `maxDepth`, and `mayUse` not empty).
 * Nothing of the parent's own life: no `carry`, `upgrades`, `idleTimeoutMs`,
 * `continueAsNewAfterPrompts` or resume. Pure.
 *
 * @param parent the parent's input, with the task queue it uses now.
 */
export function childInputOf(
  parent: SessionWorkflowInput,
  spec: SubagentSpec,
  child: { sessionId: string; lineage: SessionLineage; task: SubagentTask },
): SessionWorkflowInput {
  const limits = parent.subagents;
  const spawns =
    limits !== undefined && child.lineage.depth < limits.maxDepth && spec.mayUse.length > 0;
  const optional = <K extends keyof SessionWorkflowInput>(...keys: K[]) =>
    Object.fromEntries(
      keys.filter((key) => parent[key] !== undefined).map((key) => [key, parent[key]]),
    ) as Pick<SessionWorkflowInput, K>;
  return {
    sessionId: child.sessionId,
    agentName: parent.agentName,
    ...optional(
      'version',
      'fingerprint',
      'manifest',
      'modelHeartbeatTimeoutMs',
      'toolHeartbeatTimeoutMs',
      'toolTimeoutMs',
      'modelTimeoutMs',
      'maxContextTokens',
      'toolHookErrors',
      'localDispatch',
      'inlineDispatch',
      'turnStatus',
      'subagents',
      'permissionRules',
      'mcpServers',
      'requireBoundApprovals',
      'approvals',
    ),
    hookCounts: { ...spec.hookCounts },
    hookTimeoutMs: parent.hookTimeoutMs,
    sessionEndHookTimeoutMs: parent.sessionEndHookTimeoutMs,
    maxTurns: spec.maxTurns,
    taskQueue: parent.taskQueue,
    dispatchHeartbeatTimeoutMs: parent.dispatchHeartbeatTimeoutMs,
    tools: [...spec.tools, ...(spawns ? [{ name: TASK_TOOL, kind: 'readonly' as const }] : [])],
    permission: spec.permission,
    permissionTimeoutMs: Math.min(parent.permissionTimeoutMs ?? spec.timeoutMs, spec.timeoutMs),
    lineage: child.lineage,
    task: child.task,
  };
}

/**
 * Why session `session` may not start a sub-agent for this `Task` call, checked in this
 * order: a bad input, an unknown name, a name the caller may not use, `maxDepth` reached,
 * `maxConcurrent` sub-agents of the session running. `undefined` when it may. Pure.
 *
 * @param running the session's sub-agents running now.
 */
export function taskCallRefusal(
  session: Pick<SessionWorkflowInput, 'subagents' | 'lineage'>,
  input: JsonObject,
  running: number,
): SubagentRefusal | undefined {
  const problem = taskInputProblem(input);
  if (problem) return { code: 'SUBAGENT_INPUT_INVALID', message: problem };
  const limits = session.subagents;
  const names = limits?.agents.map((agent) => agent.name) ?? [];
  const name = input.subagent_type as string;
  const path = session.lineage?.agentPath ?? ROOT_AGENT_PATH;
  if (!limits || !names.includes(name)) {
    return {
      code: 'SUBAGENT_UNKNOWN',
      message: `Unknown sub-agent '${name}'; known: ${names.join(', ') || 'none'}`,
    };
  }
  const mayUse = session.lineage
    ? (limits.agents.find((agent) => agent.name === session.lineage!.subagent)?.mayUse ?? [])
    : names;
  if (!mayUse.includes(name)) {
    return {
      code: 'SUBAGENT_NOT_ALLOWED',
      message: `${path} may not start sub-agent '${name}'; it may start: ${mayUse.join(', ') || 'none'}`,
    };
  }
  const depth = session.lineage?.depth ?? 0;
  if (depth >= limits.maxDepth) {
    return {
      code: 'SUBAGENT_DEPTH_LIMIT',
      message: `maxDepth ${limits.maxDepth} reached: ${path} is at depth ${depth}`,
    };
  }
  if (running >= limits.maxConcurrent) {
    return {
      code: 'SUBAGENT_CONCURRENCY_LIMIT',
      message: `maxConcurrent ${limits.maxConcurrent}: ${running} sub-agents of this session are running`,
    };
  }
  return undefined;
}

/** What is wrong with a `Task` call's input, or `undefined` when it is `{ description, prompt, subagent_type }` strings. Pure. */
export function taskInputProblem(input: JsonObject): string | undefined {
  const missing = (['description', 'prompt', 'subagent_type'] as const).filter(
    (key) => typeof input[key] !== 'string' || input[key] === '',
  );
  return missing.length > 0
    ? `Task input needs non-empty strings description, prompt and subagent_type; bad or missing: ${missing.join(', ')}`
    : undefined;
}

/** The tool error of a `Task` call whose sub-agent ran out of its budget and was cancelled. Pure. */
export function taskTimeoutMessage(agentPath: string, timeoutMs: number): string {
  return `Task failed: sub-agent ${agentPath} did not finish within ${timeoutMs} ms (subagents.timeoutMs); it was cancelled`;
}
