/** Shared helpers of the integration tests. */
import { randomUUID } from 'node:crypto';
import { Connection, Client } from '@temporalio/client';

/** Most Updates one run accepts on the server the suite starts (Temporal's default: 2,000). */
export const SUITE_MAX_UPDATES_PER_RUN = 500;
/** How test/global-setup.ts tells the tests that its server has that limit. */
export const MAX_UPDATES_VARIABLE = 'DURABLE_AGENT_TEST_MAX_UPDATES';

/**
 * Most Updates one run accepts on the test run's server: {@link SUITE_MAX_UPDATES_PER_RUN} on
 * the one the suite started, Temporal's default on one given by TEMPORAL_ADDRESS.
 */
export function serverMaxUpdatesPerRun(): number {
  return Number(process.env[MAX_UPDATES_VARIABLE] ?? 2_000);
}

/** The test run's Temporal server (started by test/global-setup.ts). */
export function temporalAddress(): string {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address)
    throw new Error('TEMPORAL_ADDRESS is not set: run the tests through vitest (global setup)');
  return address;
}

/** A task queue of its own for one test, so tests never share workers. */
export function uniqueTaskQueue(prefix = 'test'): string {
  return `${prefix}-${randomUUID()}`;
}

/** A plain Temporal client, to read histories. */
export async function rawClient(): Promise<Client> {
  const connection = await Connection.connect({ address: temporalAddress() });
  return new Client({ connection });
}

/** Wait until `predicate` holds, polling, or fail after `timeoutMs`. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The request id of the session's first pending permission request, once one is asked, or
 * fail after `timeoutMs`.
 */
export async function pendingAsk(
  session: { pendingPermissions(): Promise<Array<{ requestId: string }>> },
  timeoutMs: number,
  what: string,
): Promise<string> {
  let requestId = '';
  await waitFor(
    async () => {
      requestId = (await session.pendingPermissions())[0]?.requestId ?? '';
      return requestId !== '';
    },
    timeoutMs,
    what,
  );
  return requestId;
}

/** A promise and its opener, to hold a callback until the test lets it go. */
export function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}
