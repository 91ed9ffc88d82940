/**
 * Memory per closed session: one process (`createAgent`: its worker and its client) runs
 * BENCH_MEMORY_SESSIONS sessions (default 10,000) of BENCH_MEMORY_SENDS sends each (10), each
 * session closed once its sends are answered, BENCH_MEMORY_CONCURRENCY at a time (10). At
 * every checkpoint (BENCH_MEMORY_CHECKPOINTS, default `1000,10000`) it collects garbage
 * (`global.gc()`, so run it with `node --expose-gc`, which `npm run bench:memory` does) and
 * prints the heap and RSS, and the sizes of the per-session maps of the process. The last
 * line is the ratio of the last checkpoint to the first (target <= 1.1) and the heap each
 * closed session added between them.
 *
 *   npm run bench:memory
 *   BENCH_MEMORY_SESSIONS=300 BENCH_MEMORY_CHECKPOINTS=100,300 npm run bench:memory
 *   BENCH_MEMORY_SNAPSHOTS=1 ...   # also a heap snapshot at each checkpoint (v8.writeHeapSnapshot)
 *
 * The model is scripted (no API key, no network); it keeps no requests. Each session has a
 * session-level UserPromptSubmit hook (held in the worker's registry while it is open) and
 * the agent one of its own, so every send dispatches two callbacks.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { createAgent, fileStore } from '../src/index.js';
import { clientCallsOf } from '../src/client/client.js';
import { cachedWorkflowsOf } from '../src/worker/worker.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel } from '../src/testing/index.js';
import { fmt, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error(`${name} must be a positive integer; got '${raw}'`);
  }
  return value;
}

const SESSIONS = positive('BENCH_MEMORY_SESSIONS', 10_000);
const SENDS = positive('BENCH_MEMORY_SENDS', 10);
const CONCURRENCY = positive('BENCH_MEMORY_CONCURRENCY', 10);
const CHECKPOINTS = (
  process.env.BENCH_MEMORY_CHECKPOINTS ?? `${Math.min(1000, SESSIONS)},${SESSIONS}`
)
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0 && n <= SESSIONS)
  .sort((a, b) => a - b);
if (CHECKPOINTS.length === 0) {
  throw new Error('BENCH_MEMORY_CHECKPOINTS names no session count within BENCH_MEMORY_SESSIONS');
}
const SNAPSHOTS = process.env.BENCH_MEMORY_SNAPSHOTS === '1';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('Run with node --expose-gc (npm run bench:memory does)');

const server = process.env.TEMPORAL_ADDRESS
  ? undefined
  : await startDevServer({ cacheDir: join(here, '..', '.temporal') });
const address = process.env.TEMPORAL_ADDRESS ?? server!.address;
console.log(
  `Temporal at ${address}; ${SESSIONS} sessions x ${SENDS} sends, ${CONCURRENCY} at a time; ` +
    `checkpoints ${CHECKPOINTS.join(', ')}; ${new Date().toISOString()}`,
);

const agent = await createAgent({
  model: scriptedModel(() => 'ok', { keepRequests: 0 }),
  tools: [],
  advanced: {
    hooks: { UserPromptSubmit: [async () => ({ action: 'continue' as const })] },
    logLevel: 'WARN',
    payloadStore: fileStore(mkdtempSync(join(tmpdir(), 'bench-memory-payloads-'))),
    temporal: { address, taskQueue: `bench-memory-${randomUUID()}` },
  },
});

/** Heap and RSS after collecting garbage until the heap stops shrinking, bytes. */
async function settledMemory(): Promise<{ heap: number; rss: number }> {
  let heap = Infinity;
  for (let i = 0; i < 10; i++) {
    // Let timers and promise callbacks of the last sessions run out first.
    await new Promise((r) => setTimeout(r, 200));
    gc!();
    const now = process.memoryUsage().heapUsed;
    if (now >= heap * 0.999) break;
    heap = now;
  }
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

/** The sizes of what this process holds per session. */
function heldSizes(): Record<string, number> {
  const calls = clientCallsOf(agent.client);
  return {
    registrySessions: agent.worker.registry.sessionsHeld,
    pendingCleanups: agent.worker.registry.pendingCleanups.size,
    conversationCache: agent.worker.conversationCache.size,
    cachedWorkflows: cachedWorkflowsOf(agent.worker) ?? -1,
    callsInFlight: calls?.inFlight ?? -1,
    queuedSendSessions: calls?.sessionsWithQueuedSends ?? -1,
  };
}

/** Sessions that failed (a send refused on an overloaded machine, say), and the first error. */
const failures = { count: 0, first: undefined as string | undefined };

/**
 * One session of SENDS sends, closed. A failure is counted and the run goes on: what the
 * benchmark measures is what closed sessions leave behind, failed ones included (a failed
 * session is closed too, when it can be).
 */
async function runSession(): Promise<void> {
  let session: Awaited<ReturnType<typeof agent.createSession>> | undefined;
  try {
    session = await agent.createSession({
      hooks: { UserPromptSubmit: [async () => ({ action: 'continue' as const })] },
    });
    for (let i = 0; i < SENDS; i++) await session.send(`prompt ${i}`);
    await session.close();
  } catch (error) {
    failures.count++;
    failures.first ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    await session?.close().catch(() => undefined);
  }
}

const rows: string[][] = [];
const measured: Array<{ sessions: number; heap: number; rss: number }> = [];
const MB = 1024 * 1024;
let started = 0;
let finished = 0;
const t0 = performance.now();
for (const checkpoint of CHECKPOINTS) {
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < checkpoint) {
        started++;
        await runSession();
        finished++;
        if (finished % 100 === 0) {
          const rate = finished / ((performance.now() - t0) / 1000);
          console.log(
            `  ${finished} sessions (${fmt(rate, 2)}/s), heap ${fmt(process.memoryUsage().heapUsed / MB)} MB`,
          );
        }
      }
    }),
  );
  const memory = await settledMemory();
  measured.push({ sessions: checkpoint, ...memory });
  const sizes = heldSizes();
  console.log(
    `checkpoint ${checkpoint}: ${JSON.stringify(sizes)}; sessions failed: ${failures.count}` +
      (failures.first ? ` (first: ${failures.first})` : ''),
  );
  if (SNAPSHOTS) console.log(`  snapshot ${writeHeapSnapshot()}`);
  const previous = measured.at(-2);
  rows.push([
    String(checkpoint),
    fmt(memory.heap / MB),
    fmt(memory.rss / MB),
    // The first checkpoint also holds the warm-up (compiled code, the first sessions' caches).
    previous ? fmt((memory.heap - previous.heap) / (checkpoint - previous.sessions) / 1024, 2) : '',
    fmt((performance.now() - t0) / 1000, 0),
    Object.values(sizes).join('/'),
  ]);
}

printTable(
  `Memory after GC, ${SENDS} sends a session (${new Date().toISOString()})`,
  [
    'sessions',
    'heap MB',
    'RSS MB',
    'heap KB/session since last',
    'elapsed s',
    'registry/cleanups/cache/workflows/in-flight/queued',
  ],
  rows,
);
const first = measured[0]!;
const last = measured.at(-1)!;
if (last.sessions > first.sessions) {
  const perSession = (last.heap - first.heap) / (last.sessions - first.sessions);
  console.log(
    `\nheap ${fmt(last.heap / first.heap, 3)}x, RSS ${fmt(last.rss / first.rss, 3)}x from ` +
      `${first.sessions} to ${last.sessions} sessions; heap per closed session ` +
      `${fmt(perSession / 1024, 2)} KB (${fmt(perSession / SENDS / 1024, 2)} KB a send)`,
  );
}

if (failures.count > 0) {
  console.log(`${failures.count} of ${finished} sessions failed; the first: ${failures.first}`);
}

await agent.shutdown();
await server?.stop();
