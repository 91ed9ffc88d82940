/**
 * Where the default (in-memory) stream transport reaches, on the real server: a client in a
 * process with no worker of its agent (the worker runs in a child process) would read an
 * empty stream, so reading it throws a ConfigError naming `advanced.stream` and Redis, while
 * the send itself completes; once a worker of the agent runs in the client's process, the
 * same client streams the text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgentClient,
  createAgentWorker,
  type AgentClient,
  type AgentWorker,
} from '../../../src/index.js';
import { crashAgentOptions } from '../../fixtures/crash-agent.js';
import {
  crashEnv,
  killAll,
  startWorkerProcess,
  type WorkerProcess,
} from '../../helpers/processes.js';

const env = crashEnv();
let child: WorkerProcess;
let agent: AgentClient;
let worker: AgentWorker | undefined;

beforeAll(async () => {
  child = await startWorkerProcess(env, 'elsewhere');
  agent = await createAgentClient(crashAgentOptions(env));
}, 120_000);

afterAll(async () => {
  await worker?.shutdown();
  await agent?.close();
  await killAll();
});

/** Every item of `items`, or the error iterating it threw. */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of items) seen.push(item);
  return seen;
}

/** What the error says: it names the option, the Redis transport and its entry point. */
const UNSHARED =
  /no worker of agent '[^']+' runs in this process.*in-memory.*advanced\.stream.*redisStreams\(\{ url \}\).*'durable-agent-sdk\/stream'/;

describe('the in-memory stream transport across processes', () => {
  it('a client with no worker of its agent in its process: textStream(), stream() and session.stream() throw a ConfigError naming advanced.stream and redisStreams; the send completes', async () => {
    const session = await agent.createSession();
    const call = session.send('across');
    for (const read of [
      () => collect(call.textStream()),
      () => collect(call.stream()),
      () => collect(session.stream(call.requestId)),
    ]) {
      const error = await read().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).code).toBe('CONFIG_INVALID');
      expect((error as Error).message).toMatch(UNSHARED);
    }
    const response = await call;
    expect(response.status).toBe('completed');
    expect(response.text()).toBe('echo:across');
    await session.close();
  }, 60_000);

  it("with a worker of the agent in the client's process, the same client streams the text", async () => {
    worker = await createAgentWorker(crashAgentOptions(env));
    // Only this process's worker runs the session now (the child would publish elsewhere).
    await child.kill();
    const session = await agent.createSession();
    const call = session.send('here');
    const pieces = await collect(call.textStream());
    const response = await call;
    expect(response.text()).toBe('echo:here');
    expect(pieces.join('')).toBe('echo:here');
    await session.close();
  }, 60_000);
});
