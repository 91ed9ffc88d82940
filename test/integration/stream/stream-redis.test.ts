/**
 * The cross-process transport: Redis Streams on a real `redis-server` the test starts, and
 * a worker in another process than the client, its model a streaming OpenAI-compatible
 * HTTP endpoint. Needs node-redis (`redis` v5, or REDIS_CLIENT_MODULE naming a copy).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgentClient,
  EngineError,
  type AgentClient,
  type StreamedEvent,
} from '../../../src/index.js';
import { redisStreams, type RedisStreamTransport } from '../../../src/stream/redis.js';
import type { StreamEvent } from '../../../src/stream/events.js';
import type { StreamEntry } from '../../../src/stream/transport.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../fixtures/openai-server.js';
import { streamAgentOptions, type StreamWorkerEnv } from '../../fixtures/stream-agent.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { loadRedisClient, startRedis, type RedisServer } from '../../helpers/redis-server.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const createClient = await loadRedisClient();
const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
}, 20_000);
afterAll(async () => {
  await redis?.stop();
});

const delta = (text: string): StreamEvent => ({ type: 'text-delta', text, step: 0 });

async function take(
  transport: RedisStreamTransport,
  key: { sessionId: string; requestId: string },
  count: number,
  after?: string,
): Promise<StreamEntry[]> {
  const out: StreamEntry[] = [];
  for await (const entry of transport.read(key, after === undefined ? {} : { after })) {
    out.push(entry);
    if (out.length === count) break;
  }
  return out;
}

describe('redisStreams', () => {
  const transportOf = (options: { maxLenPerStream?: number } = {}) =>
    redisStreams({ url: redis.url, createClient: createClient, ...options });

  it('gives a reader every entry in order; one resumed after an id gets the rest', async () => {
    const transport = transportOf();
    try {
      const key = { sessionId: 's', requestId: 'order' };
      for (let i = 0; i < 20; i++) transport.append(key, delta(String(i)));
      await transport.flush(5000);
      const head = await take(transport, key, 7);
      const rest = await take(transport, key, 13, head.at(-1)!.id);
      const texts = [...head, ...rest].map((e) => (e.event as { text: string }).text);
      expect(texts).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
      expect(head.at(-1)!.id).toMatch(/^\d+-\d+$/);
    } finally {
      await transport.close();
    }
  });

  it('wakes a blocked reader when a writer in another connection appends', async () => {
    const reader = transportOf();
    const writer = transportOf();
    try {
      const key = { sessionId: 's', requestId: 'wake' };
      const reading = take(reader, key, 2);
      writer.append(key, delta('a'));
      writer.append(key, delta('b'));
      const entries = await reading;
      expect(entries.map((e) => (e.event as { text: string }).text)).toEqual(['a', 'b']);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('keeps about maxLenPerStream entries per stream, and sets an expiry on it', async () => {
    const transport = transportOf({ maxLenPerStream: 100 });
    const probe = createClient({ url: redis.url });
    await probe.connect();
    try {
      const key = { sessionId: 's', requestId: 'bounded' };
      for (let i = 0; i < 5000; i++) transport.append(key, delta('x'));
      await transport.flush(10_000);
      const name = 'durable-agent:stream:s/bounded';
      const length = Number(await probe.sendCommand(['XLEN', name]));
      // MAXLEN ~ trims whole macro nodes (100 entries by default): at most 100 + a node.
      expect(length).toBeGreaterThanOrEqual(100);
      expect(length).toBeLessThanOrEqual(300);
      const ttl = Number(await probe.sendCommand(['PTTL', name]));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(600_000);
    } finally {
      probe.destroy();
      await transport.close();
    }
  });

  it('ends a blocked read when its signal aborts', async () => {
    const transport = transportOf();
    try {
      const stop = new AbortController();
      const key = { sessionId: 's', requestId: 'abort' };
      const seen: StreamEntry[] = [];
      let first!: () => void;
      const gotFirst = new Promise<void>((resolve) => (first = resolve));
      transport.append(key, delta('one'));
      const reading = (async () => {
        for await (const entry of transport.read(key, { signal: stop.signal })) {
          seen.push(entry);
          first();
        }
      })();
      await gotFirst;
      stop.abort();
      await reading;
      expect(seen).toHaveLength(1);
    } finally {
      await transport.close();
    }
  });

  it('a read whose server goes away rejects with an EngineError naming the stream', async () => {
    const lost = await startRedis();
    const transport = redisStreams({ url: lost.url, createClient: createClient });
    try {
      const key = { sessionId: 's', requestId: 'lost' };
      transport.append(key, delta('one'));
      let first!: () => void;
      const gotFirst = new Promise<void>((resolve) => (first = resolve));
      // Settled into a value at once: the rejection comes while the server stops.
      const outcome = (async () => {
        for await (const _ of transport.read(key)) first();
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      await gotFirst;
      await lost.stop();
      const error = await outcome;
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'ENGINE_ERROR' });
      expect((error as Error).message).toMatch(/redisStreams: reading \S+lost failed/);
    } finally {
      await transport.close().catch(() => undefined);
    }
  });

  it('refuses a bad url and an after that is not a stream id, naming them', async () => {
    expect(() => redisStreams({ url: 'http://x' })).toThrow(
      /redis:\/\/ or rediss:\/\/ URL.*http:\/\/x/,
    );
    const transport = transportOf();
    try {
      await expect(take(transport, { sessionId: 's', requestId: 'x' }, 1, '12')).rejects.toThrow(
        /'after' must be an entry id.*'12'/,
      );
    } finally {
      await transport.close();
    }
  });
});

/** A worker process on `env`, started and polling. */
async function startStreamWorker(env: StreamWorkerEnv): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(fixtures, 'stream-worker-process.ts')],
    {
      env: { ...process.env, STREAM_WORKER_ENV: JSON.stringify(env) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/^ready$/m.test(output)) resolve();
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited (${code}):\n${output}`)));
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('a worker in another process, on Redis Streams', () => {
  let server: FakeOpenAI;
  const workers: ChildProcess[] = [];
  let env: StreamWorkerEnv;
  let client: AgentClient;
  let transport: RedisStreamTransport;
  const answer = 'Across processes, every piece arrives once and in order.';
  const afterCrash = 'The new worker answers from the start.';

  beforeAll(async () => {
    server = await startFakeOpenAI([
      { text: answer, chunkChars: 3, chunkDelayMs: 20 },
      { text: answer, chunkChars: 2, chunkDelayMs: 20 },
      // Killed with its worker: 200 pieces 100 ms apart would take 20 s.
      { text: 'w'.repeat(200), chunkChars: 1, chunkDelayMs: 100 },
      { text: afterCrash, chunkChars: 5 },
    ]);
    env = {
      address: temporalAddress(),
      taskQueue: uniqueTaskQueue('stream-redis'),
      baseUrl: server.baseUrl,
      redisUrl: redis.url,
      workspace: tempDir('stream-redis'),
    };
    workers.push(await startStreamWorker(env));
    transport = redisStreams({ url: redis.url, createClient: createClient });
    client = await createAgentClient(streamAgentOptions(env, transport));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await transport?.close();
    await Promise.all(workers.map(kill));
    await server?.close();
  });

  it("the client gets the worker's deltas in order, and they join to the recorded message", async () => {
    const session = await client.createSession();
    const call = session.send('tell me');
    const deltas: string[] = [];
    for await (const piece of call.textStream()) deltas.push(piece);
    const response = await call;
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.join('')).toBe(answer);
    expect(response.text()).toBe(answer);
    const assistant = (await session.conversation()).filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.text)).toEqual([answer]);
    await session.close();
  });

  it('a reader that reconnects with the last id it saw gets the rest: nothing lost or doubled', async () => {
    const session = await client.createSession();
    const call = session.send('again');
    let settled = false;
    void call.finally(() => (settled = true));
    // One reader drops off mid-stream, while the model still streams, and comes back.
    const head: StreamedEvent[] = [];
    for await (const event of session.stream(call.requestId)) {
      head.push(event);
      if (head.filter((e) => e.type === 'text-delta').length === 5) break;
    }
    expect(settled).toBe(false);
    const rest: StreamedEvent[] = [];
    for await (const event of session.stream(call.requestId, { after: head.at(-1)!.id })) {
      rest.push(event);
    }
    const response = await call;
    const whole: StreamedEvent[] = [];
    for await (const event of session.stream(call.requestId)) whole.push(event);
    expect([...head, ...rest]).toEqual(whole);
    expect(rest.at(-1)).toMatchObject({ type: 'finish', status: 'completed', text: answer });
    const text = [...head, ...rest]
      .filter((e) => e.type === 'text-delta')
      .map((e) => e.text)
      .join('');
    expect(text).toBe(response.text());
    await session.close();
  });

  it('a worker killed mid-stream: the step runs on another worker, the stream shows a restart, then its deltas', async () => {
    const session = await client.createSession();
    const call = session.send('crash');
    const events: StreamedEvent[] = [];
    let killed = false;
    for await (const event of call.stream()) {
      events.push(event);
      if (!killed && events.filter((e) => e.type === 'text-delta').length === 5) {
        killed = true;
        await kill(workers[0]!);
        workers.push(await startStreamWorker({ ...env }));
      }
    }
    const response = await call;
    const restart = events.findIndex((e) => e.type === 'restart');
    expect(restart).toBeGreaterThan(0);
    expect(events[restart]).toMatchObject({ type: 'restart', step: 0, attempt: 2 });
    const before = events.slice(0, restart).filter((e) => e.type === 'text-delta');
    const after = events.slice(restart).filter((e) => e.type === 'text-delta');
    // The killed attempt's pieces (5 or a few more in flight), then the new attempt's.
    expect(before.length).toBeGreaterThanOrEqual(5);
    expect(before.map((e) => e.text).join('')).toMatch(/^w+$/);
    expect(after.map((e) => e.text).join('')).toBe(afterCrash);
    expect(events.at(-1)).toMatchObject({ type: 'finish', status: 'completed', text: afterCrash });
    expect(response.text()).toBe(afterCrash);
    const assistant = (await session.conversation()).filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.text)).toEqual([afterCrash]);
    await session.close();
  }, 120_000);
});
