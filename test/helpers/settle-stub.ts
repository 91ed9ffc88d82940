/**
 * The stub of the `awaitHookSettled` activity the workflow tests run on a session's cleanup
 * queue: it heartbeats (so a cancel or a lost worker is seen) and answers `settled` once
 * `settled` resolves (the callback that outlived its dispatch has settled).
 */
import { Context } from '@temporalio/activity';

export function settleStub(settled: Promise<void> | undefined) {
  return {
    async awaitHookSettled(): Promise<'settled'> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 200);
      try {
        await settled;
      } finally {
        clearInterval(beat);
      }
      return 'settled';
    },
  };
}
