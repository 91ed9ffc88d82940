/**
 * A stand-in for the worker's client in `MockActivityEnvironment`, for the began record
 * (`activities/attempt-record.ts`).
 */
import type { Client } from '@temporalio/client';

/**
 * A client whose `activity.heartbeat` is the worker's confirmed heartbeat RPC: it logs
 * `record <details as JSON>`, settles as `answer` says (the server's reply), then logs
 * `recorded`.
 */
export function recordingClient(
  log: string[],
  answer: () => Promise<void> = async () => undefined,
): Client {
  return {
    // The worker ties its client's calls to the activity's signal.
    withAbortSignal: (_signal: AbortSignal, fn: () => unknown) => fn(),
    activity: {
      heartbeat: async (_token: Uint8Array, details: unknown) => {
        log.push(`record ${JSON.stringify(details)}`);
        await answer();
        log.push('recorded');
      },
    },
  } as unknown as Client;
}
