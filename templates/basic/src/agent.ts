/**
 * The agent definition, shared by the worker, the client and the test. Both processes import
 * this one module: a session records which hooks, tools and budgets it runs with, and every
 * worker of its task queue must have the same.
 */
import {
  HookEvent,
  type AgentModel,
  type AgentOptions,
  type HookCallback,
} from 'durable-agent-sdk';
import { scriptedModel, toolCall } from 'durable-agent-sdk/testing';

/** PreToolUse: refuse `rm -rf` before Bash runs it; every other call goes on. */
export const blockDangerous: HookCallback = async (input) => {
  const command = String(input.toolInput?.command ?? '');
  if (input.toolName === 'Bash' && /rm\s+-rf/.test(command)) {
    return { action: 'abort', reason: `blocked a dangerous command: ${command}` };
  }
  return { action: 'continue' };
};

/** PostToolUse: one audit line per tool call that ran. */
export const audit: HookCallback = async (input) => {
  console.log(`[audit] ${input.toolName} ${JSON.stringify(input.toolInput)}`);
  return { action: 'continue' };
};

/**
 * A real provider when its key is set; else a scripted model that reads package.json and
 * answers from it, so the project runs offline.
 */
function model(): string | AgentModel {
  // A real provider goes here: 'gpt-4o-mini' reads OPENAI_API_KEY; a 'claude-...' id reads
  // ANTHROPIC_API_KEY; any id with `baseUrl` beside `model` talks to an OpenAI-compatible server.
  if (process.env.OPENAI_API_KEY) return 'gpt-4o-mini';
  return scriptedModel((request) => {
    if (request.step === 0) return toolCall('Read', { file_path: 'package.json' });
    const last = request.messages.at(-1);
    const output = last?.role === 'tool' ? (last.results[0]?.model ?? '') : '';
    const name = /"name":\s*"([^"]+)"/.exec(output)?.[1] ?? 'nothing I could read';
    return `package.json names the project "${name}".`;
  });
}

const agent: AgentOptions = {
  name: 'my-agent',
  model: model(),
  // Tools read and write in the worker's folder, and nowhere else.
  workspaceRoots: [process.cwd()],
  advanced: {
    hooks: {
      [HookEvent.PreToolUse]: [blockDangerous],
      [HookEvent.PostToolUse]: [audit],
    },
  },
};

export default agent;
