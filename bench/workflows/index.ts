/**
 * Benchmark-only workflow: runs one activity per Update, so a hook dispatch and a bare
 * no-op activity are timed through identical plumbing.
 */
import {
  ActivityCancellationType,
  defineUpdate,
  proxyActivities,
  setHandler,
  condition,
} from '@temporalio/workflow';
import type { DispatchHookInput, HookDispatchOutcome } from '../../src/common/protocol.js';

interface BenchActivities {
  noop(): Promise<void>;
  dispatchHook(input: DispatchHookInput): Promise<HookDispatchOutcome>;
}

const acts = proxyActivities<BenchActivities>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

export const stepUpdate = defineUpdate<
  string,
  [{ kind: 'noop' | 'hook' | 'none'; input?: DispatchHookInput }]
>('step');
export const stopUpdate = defineUpdate<void>('stop');

export async function benchWorkflow(): Promise<void> {
  let done = false;
  setHandler(stepUpdate, async ({ kind, input }) => {
    if (kind === 'noop') await acts.noop();
    else if (kind === 'hook' && input) await acts.dispatchHook(input);
    return kind;
  });
  setHandler(stopUpdate, () => {
    done = true;
  });
  await condition(() => done);
}
