/**
 * The worker: runs the hooks, tools and model steps of every session on the task queue
 * until Ctrl-C (or SIGTERM), then stops once in-flight work is done.
 */
import { createAgentWorker } from 'durable-agent-sdk';
import agent, { say, taskQueue } from './agent.js';

if (!process.env.TEMPORAL_ADDRESS) {
  console.error('Set TEMPORAL_ADDRESS to a running Temporal server, e.g. 127.0.0.1:7233.');
  process.exit(2);
}

const worker = await createAgentWorker(agent);
say('worker', `polling task queue ${taskQueue} at ${process.env.TEMPORAL_ADDRESS}; Ctrl-C stops`);
// `on`, not `once`: Ctrl-C reaches the process twice (from the terminal and through tsx).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void worker.shutdown());
}
await worker.done;
say('worker', 'stopped');
