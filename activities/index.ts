/**
 * Every activity of a session, built from the worker's dependencies.
 *
 * @module
 */
import type { AgentRegistry } from '../src/registry.js';
import { createHookActivities } from './hook-dispatch.js';
import { createModelActivities } from './model-step.js';
import { createToolActivities } from './tool-exec.js';

/** Dependencies of the activities. */
export interface ActivityDeps {
  registry: AgentRegistry;
  /** This process's worker-unique task queue. */
  cleanupQueue: string;
  /** How often a running dispatch heartbeats, ms. */
  heartbeatIntervalMs: number;
}

/** `createActivities({ registry, cleanupQueue, heartbeatIntervalMs })`. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHookActivities(deps),
    ...createModelActivities(deps),
    ...createToolActivities(deps),
  };
}
