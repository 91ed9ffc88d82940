/**
 * Worker process of bench/grep-stall.ts. Its model answers the prompt `grep` with a Grep
 * call whose pattern, `(a+)+$`, never finishes on the workspace's one line, and `sync` with
 * a call of `SyncGrep`: the same kind of regex run on the event loop, as Grep did before it
 * had a thread, one "file" (about 300 ms of matching) at a time until the call is aborted.
 * Its UserPromptSubmit callback, for the prompt `wait`, prints `entered` and then
 * `aborted <epoch ms>` when its abortSignal fires. Prints `started <tool>` when a tool runs.
 *
 * Env: BENCH_ADDRESS, BENCH_TASK_QUEUE, BENCH_WS (the workspace).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { z } from 'zod';
import { builtinTools, createAgentWorker, defineTool, Grep, HookEvent } from '../src/index.js';
import { scriptedModel } from '../src/testing/index.js';

const now = () => performance.timeOrigin + performance.now();

/** The length of a line of a's on which `(a+)+$` takes about `targetMs` to fail. */
function calibrate(targetMs: number): number {
  for (let n = 16; n < 40; n++) {
    const t0 = performance.now();
    /(a+)+$/.test(`${'a'.repeat(n)}b`);
    if (performance.now() - t0 >= targetMs) return n;
  }
  return 40;
}
const syncLine = `${'a'.repeat(calibrate(300))}b`;

const observedGrep = defineTool({
  ...Grep,
  execute: (input, context) => {
    console.log('started Grep');
    return Grep.execute(input, context);
  },
});

const syncGrep = defineTool({
  name: 'SyncGrep',
  description: 'The regex on the event loop, file after file (the old Grep), until aborted',
  kind: 'readonly',
  inputSchema: z.object({}),
  execute: async (_input, context) => {
    console.log('started SyncGrep');
    const regex = /(a+)+$/;
    while (!context.signal.aborted) {
      regex.test(syncLine);
      // The old Grep awaited the next file's read: the loop ran between files only.
      await yieldToLoop();
    }
    return 'stopped';
  },
});

const worker = await createAgentWorker({
  model: scriptedModel((request) => {
    if (request.messages.at(-1)?.role === 'tool') return 'done';
    if (request.prompt === 'grep') {
      return { toolCalls: [{ toolName: 'Grep', input: { pattern: '(a+)+$' } }] };
    }
    if (request.prompt === 'sync') return { toolCalls: [{ toolName: 'SyncGrep', input: {} }] };
    return 'ok';
  }),
  workspaceRoots: [process.env.BENCH_WS!],
  tools: [...builtinTools().filter((t) => t.name !== 'Grep'), observedGrep, syncGrep],
  advanced: {
    permission: 'bypass-permissions',
    hooks: {
      [HookEvent.UserPromptSubmit]: [
        async (input) => {
          if (input.userPrompt !== 'wait') return { action: 'continue' };
          const signal = input.abortSignal!;
          console.log('entered');
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          console.log(`aborted ${now()}`);
          return { action: 'continue' };
        },
      ],
    },
    temporal: { address: process.env.BENCH_ADDRESS!, taskQueue: process.env.BENCH_TASK_QUEUE! },
  },
});
console.log(`ready ${syncLine.length - 1}`);
process.on('SIGTERM', () => void worker.shutdown().then(() => process.exit(0)));
await worker.done;
