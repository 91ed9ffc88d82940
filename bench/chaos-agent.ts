/** The agent of bench/chaos.ts, shared by its client and its worker processes. */
import { HookEvent, type AgentOptions } from '../src/index.js';
import { scriptedModel } from '../src/testing/index.js';

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
    model: scriptedModel((request) =>
      typeof request.prompt === 'string' ? `echo:${request.prompt}` : 'echo',
    ),
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
