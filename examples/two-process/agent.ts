/**
 * The agent definition both processes import. The worker (worker.ts) runs its hooks, tools
 * and model steps; the client (client.ts) runs none of them, but starts sessions from the
 * same definition: a session records how many callbacks each event has, which tools exist
 * and which budgets apply, and every worker of the task queue must match.
 *
 * The default export is plain `AgentOptions`, so `durable-agent dev examples/two-process/agent.ts`
 * runs it too (an embedded server and a worker in one process).
 *
 * In your app, import from 'durable-agent-sdk' and 'durable-agent-sdk/testing'.
 */
import { HookEvent, type AgentOptions } from '../../src/index.js';
import { scriptedModel, toolCall } from '../../src/testing/index.js';

/** The task queue both halves use (a unique one per test run in CI). */
export const taskQueue = process.env.EXAMPLE_TASK_QUEUE || 'two-process-example';

/** A line on this process's stdout, tagged with its role and pid. */
export function say(role: 'worker' | 'client', line: string): void {
  console.log(`[${role} ${process.pid}] ${line}`);
}

const agent: AgentOptions = {
  name: 'two-process-example',
  // Scripted, so the example runs offline: read package.json, then answer from what the tool
  // returned. With a key: model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY.
  model: scriptedModel((request) => {
    if (request.step === 0) return toolCall('Read', { file_path: 'package.json' });
    const last = request.messages.at(-1);
    const output = last?.role === 'tool' ? (last.results[0]?.model ?? '') : '';
    const name = /"name":\s*"([^"]+)"/.exec(output)?.[1] ?? 'nothing I could read';
    return `package.json names the package "${name}".`;
  }),
  // The worker's folder: tools run where the worker runs.
  workspaceRoots: [process.cwd()],
  advanced: {
    hooks: {
      [HookEvent.SessionStart]: [
        async (input) => {
          say('worker', `SessionStart ${input.sessionId}`);
          return { action: 'continue' };
        },
      ],
      [HookEvent.PreToolUse]: [
        async (input) => {
          say('worker', `PreToolUse ${input.toolName} ${JSON.stringify(input.toolInput)}`);
          return { action: 'continue' };
        },
      ],
      [HookEvent.SessionEnd]: [
        async (input) => {
          say('worker', `SessionEnd ${input.sessionId} (${String(input.reason)})`);
          return { action: 'continue' };
        },
      ],
    },
    // Read-only tools run; anything else would wait for a person (session.approve).
    permission: 'default',
    // The address comes from TEMPORAL_ADDRESS (or set `address` here).
    temporal: { taskQueue },
  },
};

export default agent;
