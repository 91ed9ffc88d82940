/** The agent definition the benchmarks share between processes. */
import type { AgentOptions, HookMap, TemporalOptions } from '../src/index.js';
import { scriptedModel } from '../src/testing/index.js';

export function benchAgentOptions(
  address: string,
  taskQueue: string,
  hooks: HookMap,
  heartbeatIntervalMs?: number,
  temporal: TemporalOptions = {},
): AgentOptions {
  return {
    model: scriptedModel(() => 'ok'),
    advanced: {
      hooks,
      temporal: {
        // BENCH_VERSIONING=off|deployments|auto: the routing the benchmark's agents use.
        ...(process.env.BENCH_VERSIONING
          ? { versioning: process.env.BENCH_VERSIONING as TemporalOptions['versioning'] }
          : {}),
        ...temporal,
        address,
        taskQueue,
        ...(heartbeatIntervalMs ? { heartbeatIntervalMs } : {}),
      },
    },
  };
}
