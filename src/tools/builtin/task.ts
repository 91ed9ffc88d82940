/**
 * `Task`: delegate a piece of work to a sub-agent (`advanced.subagents`). Its input follows
 * the Claude Agent SDK's `Task` tool. A `Task` call goes through the whole tool pipeline
 * (PreToolUse, permission, PostToolUse) like any call; only its execution differs: the
 * session workflow runs the sub-agent as a session of its own, never this tool's `execute`.
 *
 * @module
 */
import { z } from 'zod';
import { ToolError } from '../../common/errors.js';
import { TASK_TOOL } from '../../common/subagents.js';
import { defineTool, type ToolDefinition } from '../tool.js';

/** Input of the `Task` tool. */
const taskInputSchema = z.object({
  /** A short (3 to 5 words) description of the task. */
  description: z.string().min(1),
  /** The task for the sub-agent: everything it needs to know, as it reads it. */
  prompt: z.string().min(1),
  /** The name of the sub-agent to run it. */
  subagent_type: z.string().min(1),
});

/** The input of a `Task` call. */
type TaskInput = z.infer<typeof taskInputSchema>;

/** A sub-agent as the `Task` tool's description lists it. */
interface TaskToolAgent {
  name: string;
  description: string;
}

/**
 * The `Task` tool for these sub-agents, its description listing each as `name: description`.
 * Kind `readonly`: the sub-agent's own tool calls are each governed by permission.
 *
 * Its `execute` only throws a `ToolError`: the session workflow runs a `Task` call.
 */
export function taskTool(agents: readonly TaskToolAgent[]): ToolDefinition<TaskInput> {
  const listed = agents.map((agent) => `- ${agent.name}: ${agent.description}`).join('\n');
  return defineTool({
    name: TASK_TOOL,
    description:
      'Launch a sub-agent to carry out a task on its own and report back. Give it a short ' +
      '`description` (3 to 5 words), the whole task as `prompt` (it sees nothing else of ' +
      'this conversation), and the sub-agent to use as `subagent_type`. Only its final ' +
      `message comes back. The sub-agents:\n${listed}`,
    kind: 'readonly',
    inputSchema: taskInputSchema,
    execute() {
      return Promise.reject(
        new ToolError(
          'A Task call is run by the session workflow, which starts the sub-agent as a ' +
            'session of its own, not as a tool execution; this call reached the tool, so ' +
            'the workflow that made it does not run sub-agents',
        ),
      );
    },
  });
}
