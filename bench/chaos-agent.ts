/** The agent of bench/chaos.ts, shared by its client and its worker processes. */
import { Context } from '@temporalio/activity';
import { appendFileSync } from 'node:fs';
import { HookEvent, type AgentOptions } from '../src/index.js';
// Straight from its module: the testing index loads @temporalio/testing (~0.3 s of a worker's start).
import { scriptedModel } from '../src/testing/scripted-model.js';

/** What the chaos run varies: the recovery settings under test. */
export interface ChaosSettings {
  address: string;
  taskQueue: string;
  stickyMs?: number;
  workflowTaskTimeoutMs?: number;
  dispatchHeartbeatTimeoutMs?: number;
  modelHeartbeatTimeoutMs?: number;
  /** The workflow bundle, bundled once by the run (a worker then starts in about a second). */
  bundlePath?: string;
}

export function chaosAgentOptions(s: ChaosSettings): AgentOptions {
  return {
    model: scriptedModel(async (request) => {
      // BENCH_CHAOS_TRACE: each model step attempt that reached a worker, one line to that file.
      const trace = process.env.BENCH_CHAOS_TRACE;
      if (trace) {
        const { attempt, workflowExecution, currentAttemptScheduledTimestampMs } =
          Context.current().info;
        // From the attempt's scheduling to here: its wait for a worker and for its context.
        const waited = Date.now() - currentAttemptScheduledTimestampMs;
        appendFileSync(
          trace,
          `${new Date().toISOString()} pid ${process.pid} ${workflowExecution?.workflowId} attempt ${attempt} after ${waited} ms\n`,
        );
      }
      // BENCH_CHAOS_MODEL_MS: a provider's time per step, so that kills catch model calls too.
      const modelMs = Number(process.env.BENCH_CHAOS_MODEL_MS ?? 0);
      if (modelMs > 0) await new Promise((resolve) => setTimeout(resolve, modelMs));
      return typeof request.prompt === 'string' ? `echo:${request.prompt}` : 'echo';
    }),
    advanced: {
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      temporal: {
        address: s.address,
        taskQueue: s.taskQueue,
        shutdownGraceTimeMs: 1_000,
        ...(s.bundlePath ? { workflowBundle: { codePath: s.bundlePath } } : {}),
        ...(s.stickyMs ? { stickyQueueScheduleToStartTimeoutMs: s.stickyMs } : {}),
        ...(s.workflowTaskTimeoutMs ? { workflowTaskTimeoutMs: s.workflowTaskTimeoutMs } : {}),
        ...(s.dispatchHeartbeatTimeoutMs
          ? { dispatchHeartbeatTimeoutMs: s.dispatchHeartbeatTimeoutMs }
          : {}),
        ...(s.modelHeartbeatTimeoutMs
          ? { modelHeartbeatTimeoutMs: s.modelHeartbeatTimeoutMs }
          : {}),
      },
    },
  };
}
