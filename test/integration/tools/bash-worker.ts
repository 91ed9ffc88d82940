/** Worker process of crash-bash.test.ts: its model runs the prompt as one Bash command. */
import { createAgentWorker } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';

const env = JSON.parse(process.env.SCRATCH_ENV ?? '{}') as {
  address: string;
  taskQueue: string;
  ws: string;
  /** `advanced.toolEnv`, when the test sets one. */
  toolEnv?: { allow?: string[]; set?: Record<string, string> };
};
export const model = scriptedModel((request) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `done:${last.results.map((r) => r.model).join('|')}`;
  const prompt = typeof request.prompt === 'string' ? request.prompt : '';
  return { toolCalls: [{ toolName: 'Bash', input: { command: prompt } }] };
});
const worker = await createAgentWorker({
  model,
  workspaceRoots: [env.ws],
  advanced: {
    permission: 'bypass-permissions',
    ...(env.toolEnv ? { toolEnv: env.toolEnv } : {}),
    temporal: { address: env.address, taskQueue: env.taskQueue },
  },
});
console.log(`ready ${worker.cleanupQueue}`);
process.on('SIGTERM', () => void worker.shutdown().then(() => process.exit(0)));
await worker.done;
