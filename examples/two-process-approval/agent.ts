/**
 * The agent both processes import. The worker (worker.ts) runs its hooks, tools and model
 * steps; the client (client.ts) runs none of them but starts sessions from the same
 * definition, since every worker and client of a task queue must agree on it.
 */
import { HookEvent, type AgentOptions } from 'durable-agent-sdk';
import { scriptedModel, toolCall } from 'durable-agent-sdk/testing';

/** The task queue both processes use. */
export const taskQueue = process.env.EXAMPLE_TASK_QUEUE || 'two-process-approval';

/** A line on stdout, tagged with the process's role. */
export function say(role: 'worker' | 'client', line: string): void {
  console.log(`[${role}] ${line}`);
}

const agent: AgentOptions = {
  name: 'two-process-approval',
  // A scripted model, so the example runs without an API key: it asks to write NOTES.md,
  // then reports what the tool returned. With a provider: model: 'gpt-4o-mini' and
  // OPENAI_API_KEY in the worker's environment.
  model: scriptedModel((request) => {
    if (request.step === 0) {
      return toolCall('Write', { file_path: 'NOTES.md', content: 'Written after approval.\n' });
    }
    const last = request.messages.at(-1);
    const result = last?.role === 'tool' ? last.results[0] : undefined;
    return `The Write call ended: ${result?.model ?? 'no result'}`;
  }),
  // Tools run in the worker's folder.
  workspaceRoots: [process.cwd()],
  advanced: {
    // The permission rule: read-only tools run, anything else waits for a person.
    permission: (request) => (request.kind === 'readonly' ? 'allow' : 'ask'),
    // Unanswered for 10 minutes, the request becomes a deny.
    permissionTimeoutMs: 10 * 60_000,
    hooks: {
      [HookEvent.PreToolUse]: [
        async (input) => {
          say('worker', `PreToolUse ${input.toolName} ${JSON.stringify(input.toolInput)}`);
          return { action: 'continue' };
        },
      ],
      [HookEvent.PostToolUse]: [
        async (input) => {
          say('worker', `PostToolUse ${input.toolName}`);
          return { action: 'continue' };
        },
      ],
    },
    // The server's address comes from TEMPORAL_ADDRESS.
    temporal: { taskQueue },
  },
};

export default agent;
