/**
 * The worker half: runs the hooks, tools and model steps of every session on the task
 * queue, until Ctrl-C (or SIGTERM), then stops after in-flight work finishes.
 *
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx examples/two-process/worker.ts
 */
import { createAgentWorker } from '../../src/index.js';
import agent, { say, taskQueue } from './agent.js';

if (!process.env.TEMPORAL_ADDRESS) {
  console.error(
    'Set TEMPORAL_ADDRESS to a running Temporal server, e.g. TEMPORAL_ADDRESS=127.0.0.1:7233 ' +
      '(README: "Worker and client in two processes" says how to start one).',
  );
  process.exit(2);
}

const worker = await createAgentWorker(agent);
say(
  'worker',
  `polling task queue ${taskQueue} at ${process.env.TEMPORAL_ADDRESS}; hooks run in this process. Ctrl-C stops.`,
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say('worker', `${signal}: stopping after in-flight work ...`);
    void worker.shutdown();
  });
}
await worker.done;
say('worker', 'stopped');
