/**
 * The worker: runs the hooks, tools and model steps of every session of the agent, until
 * Ctrl-C (or SIGTERM), then stops once in-flight work is done.
 *
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 npm run worker
 */
import { createAgentWorker } from 'durable-agent-sdk';
import agent from './agent.js';

const worker = await createAgentWorker(agent);
console.log(`worker: polling task queue ${worker.taskQueue}; Ctrl-C stops it`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void worker.shutdown());
}
await worker.done;
