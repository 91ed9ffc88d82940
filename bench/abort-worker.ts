/**
 * Worker process of the abort benchmark. Its UserPromptSubmit callback prints `entered`
 * when it starts and `aborted <epoch ms>` when its abortSignal fires.
 * Env: BENCH_ADDRESS, BENCH_TASK_QUEUE, BENCH_HEARTBEAT_MS.
 */
import { createAgentWorker, HookEvent } from '../src/index.js';
import { benchAgentOptions } from './bench-agent.js';

const now = () => performance.timeOrigin + performance.now();
const worker = await createAgentWorker(
  benchAgentOptions(
    process.env.BENCH_ADDRESS!,
    process.env.BENCH_TASK_QUEUE!,
    {
      [HookEvent.UserPromptSubmit]: [
        async (input) => {
          const signal = input.abortSignal!;
          console.log('entered');
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          console.log(`aborted ${now()}`);
          return { action: 'continue' };
        },
      ],
    },
    Number(process.env.BENCH_HEARTBEAT_MS ?? 25),
  ),
);
console.log('ready');
process.on('SIGTERM', () => void worker.shutdown().then(() => process.exit(0)));
await worker.done;
