/**
 * Every permission decision is on the send's stream once, whoever made it: a preset (the
 * workflow decides, no activity runs), a person answering an `ask` from another client (the
 * CLI in its own process, with its `--identity`), or nobody by the deadline. The model is a
 * streaming OpenAI-compatible HTTP endpoint; the worker runs in this process with the
 * in-memory transport, and, in the last part, in another process on Redis Streams.
 */
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  createAgentClient,
  type Agent,
  type AgentClient,
  type AgentOptions,
  type PermissionAskedEvent,
  type Session,
  type StreamedEvent,
} from '../../../src/index.js';
import { redisStreams, type RedisStreamTransport } from '../../../src/stream/redis.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from '../../fixtures/openai-server.js';
import { streamAgentOptions, type StreamWorkerEnv } from '../../fixtures/stream-agent.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { loadRedisClient, startRedis, type RedisServer } from '../../helpers/redis-server.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** `durable-agent <args>` in a process of its own: another client than the test's. */
async function cli(args: string[]): Promise<void> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: temporalAddress(),
  };
  delete env.DEBUG;
  await promisify(execFile)(process.execPath, cliNodeArgs(args), {
    cwd: repoRoot,
    env,
  });
}

/**
 * Every event of `call`'s stream; when a person is asked, `answer` runs (the stream goes on
 * being read meanwhile by the transport, not by us: nothing is lost).
 */
async function streamOf(
  call: { stream(): AsyncIterable<StreamedEvent> },
  answer?: (asked: PermissionAskedEvent) => Promise<void>,
): Promise<StreamedEvent[]> {
  const events: StreamedEvent[] = [];
  for await (const event of call.stream()) {
    events.push(event);
    if (event.type === 'permission-asked' && event.askedOf === 'person') {
      if (!answer) throw new Error(`unexpected ask of a person for ${event.toolName}`);
      await answer(event);
    }
  }
  return events;
}

/** The events that are not text deltas, in one line each. */
function shapeOf(events: StreamedEvent[]): string[] {
  return events
    .filter((e) => e.type !== 'text-delta')
    .map((e) => {
      switch (e.type) {
        case 'permission-asked':
          return `permission-asked:${e.askedOf}:${e.toolName}`;
        case 'permission-decided':
          return `permission-decided:${e.decidedBy}:${e.behavior}:${e.toolName}`;
        case 'tool-start':
          return `tool-start:${e.toolName}`;
        case 'tool-end':
          return `tool-end:${e.status}:${e.toolName}`;
        case 'finish':
          return `finish:${e.status}`;
        default:
          return e.type;
      }
    });
}

const decided = (events: StreamedEvent[]) => events.filter((e) => e.type === 'permission-decided');

/** The answer's pending request is the one the session lists, and `ask` names it. */
async function expectPending(session: Session, asked: PermissionAskedEvent): Promise<void> {
  const pending = await session.pendingPermissions();
  expect(pending.map((p) => p.requestId)).toEqual([asked.permissionRequestId]);
  expect(asked.deadline).toBe(pending[0]!.deadline);
}

describe('permission decisions on the stream (worker in this process)', () => {
  let server: FakeOpenAI | undefined;
  let agent: Agent | undefined;
  afterEach(async () => {
    await agent?.shutdown();
    await server?.close();
    agent = undefined;
    server = undefined;
  });

  async function agentOn(
    permission: NonNullable<AgentOptions['advanced']>['permission'],
    script: FakeReply[],
    more: Partial<NonNullable<AgentOptions['advanced']>> = {},
  ): Promise<Agent> {
    server = await startFakeOpenAI(script, { apiKey: 'sk-test' });
    agent = await createAgent({
      model: 'gpt-4o-mini',
      apiKey: 'sk-test',
      baseUrl: server.baseUrl,
      workspaceRoots: [tempDir('stream-permission')],
      advanced: {
        permission,
        ...more,
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('stream-permission') },
      },
    });
    return agent;
  }

  it('a preset-allowed call: one permission-decided by the preset, then the tool runs', async () => {
    const made = await agentOn('default', [
      { toolCalls: [{ name: 'Glob', arguments: { pattern: '*.md' } }] },
      { text: 'Nothing to read.', chunkChars: 4 },
    ]);
    const session = await made.createSession();
    const call = session.send('look around');
    const events = await streamOf(call);
    const response = await call;
    expect(shapeOf(events)).toEqual([
      'permission-decided:preset:allow:Glob',
      'tool-start:Glob',
      'tool-end:success:Glob',
      'finish:completed',
    ]);
    expect(decided(events)).toEqual([
      {
        type: 'permission-decided',
        id: expect.any(String),
        toolUseId: response.toolCalls[0]!.toolUseId,
        toolName: 'Glob',
        behavior: 'allow',
        decidedBy: 'preset',
        preset: 'default',
        editedInput: false,
      },
    ]);
    await session.close();
  });

  it('a preset-denied call: one permission-decided deny with its message, and the tool never starts', async () => {
    const made = await agentOn('plan', [
      { toolCalls: [{ name: 'Write', arguments: { file_path: 'a.txt', content: 'x' } }] },
      { text: 'I may not write in plan mode.', chunkChars: 4 },
    ]);
    const session = await made.createSession();
    const call = session.send('write it');
    const events = await streamOf(call);
    const response = await call;
    expect(shapeOf(events)).toEqual(['permission-decided:preset:deny:Write', 'finish:completed']);
    expect(decided(events)).toEqual([
      {
        type: 'permission-decided',
        id: expect.any(String),
        toolUseId: response.toolCalls[0]!.toolUseId,
        toolName: 'Write',
        behavior: 'deny',
        decidedBy: 'preset',
        preset: 'plan',
        message: 'Plan mode: write tools do not run',
        editedInput: false,
      },
    ]);
    // Carried by the next model step: published before that step's text.
    const at = events.findIndex((e) => e.type === 'permission-decided');
    expect(events.findIndex((e) => e.type === 'text-delta')).toBeGreaterThan(at);
    expect(response.toolCalls[0]!.status).toBe('denied');
    await session.close();
  });

  it('an ask approved by a person in another client: asked, then decided by that person (identity, edited input)', async () => {
    const made = await agentOn('default', [
      { toolCalls: [{ name: 'Write', arguments: { file_path: 'b.txt', content: 'model' } }] },
      { text: 'Written.', chunkChars: 4 },
    ]);
    const session = await made.createSession();
    const call = session.send('write b');
    const edited = { file_path: 'b.txt', content: 'edited by alice' };
    let asked: PermissionAskedEvent | undefined;
    const events = await streamOf(call, async (event) => {
      asked = event;
      await expectPending(session, event);
      await cli([
        'approve',
        session.id,
        event.permissionRequestId!,
        '--input',
        JSON.stringify(edited),
        '--identity',
        'alice@ops',
      ]);
    });
    const response = await call;
    const toolUseId = response.toolCalls[0]!.toolUseId;
    expect(shapeOf(events)).toEqual([
      'permission-decided:preset:ask:Write',
      'permission-asked:person:Write',
      'permission-decided:person:allow:Write',
      'tool-start:Write',
      'tool-end:success:Write',
      'finish:completed',
    ]);
    expect(asked).toMatchObject({ toolUseId, kind: 'write', affectedPaths: [expect.any(String)] });
    expect(decided(events)).toEqual([
      expect.objectContaining({ decidedBy: 'preset', preset: 'default', behavior: 'ask' }),
      {
        type: 'permission-decided',
        id: expect.any(String),
        toolUseId,
        toolName: 'Write',
        behavior: 'allow',
        decidedBy: 'person',
        identity: 'alice@ops',
        permissionRequestId: asked!.permissionRequestId,
        editedInput: true,
        // Bound to the call asked about (its digest), and the edited call's own digest.
        bound: true,
        digest: asked!.digest,
        updatedInputDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ]);
    expect(events.find((e) => e.type === 'tool-start')).toMatchObject({ input: edited });
    await session.close();
  }, 60_000);

  it('an ask denied by a person in another client: asked, then decided deny by that person, with the message', async () => {
    const made = await agentOn('default', [
      { toolCalls: [{ name: 'Write', arguments: { file_path: 'c.txt', content: 'model' } }] },
      { text: 'Not written then.', chunkChars: 4 },
    ]);
    const session = await made.createSession();
    const call = session.send('write c');
    const events = await streamOf(call, async (event) => {
      await expectPending(session, event);
      await cli([
        'deny',
        session.id,
        event.permissionRequestId!,
        '--message',
        'not today',
        '--identity',
        'bob@ops',
      ]);
    });
    const response = await call;
    expect(shapeOf(events)).toEqual([
      'permission-decided:preset:ask:Write',
      'permission-asked:person:Write',
      'permission-decided:person:deny:Write',
      'finish:completed',
    ]);
    expect(decided(events)[1]).toMatchObject({
      toolUseId: response.toolCalls[0]!.toolUseId,
      behavior: 'deny',
      decidedBy: 'person',
      identity: 'bob@ops',
      message: 'not today',
      editedInput: false,
    });
    expect(response.toolCalls[0]!.status).toBe('denied');
    await session.close();
  }, 60_000);

  it("the permission function's allow with an edited input: asked once, decided once by the function", async () => {
    const edited = { pattern: '*.txt' };
    const made = await agentOn(
      async () => ({ behavior: 'allow', updatedInput: edited }),
      [
        { toolCalls: [{ name: 'Glob', arguments: { pattern: '*.md' } }] },
        { text: 'Looked.', chunkChars: 4 },
      ],
    );
    const session = await made.createSession();
    const call = session.send('look again');
    const events = await streamOf(call);
    const response = await call;
    expect(shapeOf(events)).toEqual([
      'permission-asked:function:Glob',
      'permission-decided:function:allow:Glob',
      'tool-start:Glob',
      'tool-end:success:Glob',
      'finish:completed',
    ]);
    expect(decided(events)).toEqual([
      {
        type: 'permission-decided',
        id: expect.any(String),
        toolUseId: response.toolCalls[0]!.toolUseId,
        toolName: 'Glob',
        behavior: 'allow',
        decidedBy: 'function',
        editedInput: true,
      },
    ]);
    expect(events.find((e) => e.type === 'tool-start')).toMatchObject({ input: edited });
    await session.close();
  });

  it('an ask nobody answers: decided deny by the deadline, naming the request', async () => {
    const made = await agentOn(
      'default',
      [
        { toolCalls: [{ name: 'Write', arguments: { file_path: 'f.txt', content: 'x' } }] },
        { text: 'Nobody answered.', chunkChars: 4 },
      ],
      { permissionTimeoutMs: 1500 },
    );
    const session = await made.createSession();
    const call = session.send('write f');
    let asked: PermissionAskedEvent | undefined;
    const events = await streamOf(call, async (event) => {
      asked = event;
    });
    expect(shapeOf(events)).toEqual([
      'permission-decided:preset:ask:Write',
      'permission-asked:person:Write',
      'permission-decided:deadline:deny:Write',
      'finish:completed',
    ]);
    expect(decided(events)[1]).toMatchObject({
      decidedBy: 'deadline',
      permissionRequestId: asked!.permissionRequestId,
      message: expect.stringMatching(/^No decision on Write within 1500 ms: denied$/),
    });
    await session.close();
  }, 30_000);

  it('an ask with approval stages: reminded, then escalated, on the stream as they come, then the deadline', async () => {
    const made = await agentOn(
      'default',
      [
        { toolCalls: [{ name: 'Write', arguments: { file_path: 'f.txt', content: 'x' } }] },
        { text: 'Nobody answered.', chunkChars: 4 },
      ],
      {
        permissionTimeoutMs: 4000,
        approvals: { remindAfterMs: 1000, escalateAfterMs: 2000, escalateTo: 'ops' },
      },
    );
    const session = await made.createSession();
    const call = session.send('write f');
    let asked: PermissionAskedEvent | undefined;
    // When the reminder reached this reader: while the call still waits, not with the
    // deadline's decision (the send's next activity).
    let remindedSeenAt: number | undefined;
    const events = await streamOf(
      {
        stream: async function* () {
          for await (const event of call.stream()) {
            if (event.type === 'permission-stage' && event.stage === 'reminded') {
              remindedSeenAt = Date.now();
            }
            yield event;
          }
        },
      },
      async (event) => {
        asked = event;
      },
    );
    expect(remindedSeenAt).toBeLessThan(asked!.deadline!);
    expect(shapeOf(events)).toEqual([
      'permission-decided:preset:ask:Write',
      'permission-asked:person:Write',
      'permission-stage',
      'permission-stage',
      'permission-decided:deadline:deny:Write',
      'finish:completed',
    ]);
    const stages = events.filter((e) => e.type === 'permission-stage');
    expect(stages).toEqual([
      expect.objectContaining({
        stage: 'reminded',
        permissionRequestId: asked!.permissionRequestId,
        digest: asked!.digest,
        nextStageAt: asked!.deadline! - 2000,
      }),
      expect.objectContaining({
        stage: 'escalated',
        escalateTo: 'ops',
        nextStageAt: asked!.deadline,
      }),
    ]);
    await session.close();
  }, 30_000);

  it('a denial with interrupt ends the send: its permission-decided still comes, before finish', async () => {
    const made = await agentOn('default', [
      { toolCalls: [{ name: 'Write', arguments: { file_path: 'd.txt', content: 'model' } }] },
    ]);
    const session = await made.createSession();
    const call = session.send('write d');
    const events = await streamOf(call, async (event) => {
      await session.deny(event.permissionRequestId!, { message: 'stop here', interrupt: true });
    });
    const response = await call;
    expect(response.status).toBe('interrupted');
    expect(shapeOf(events)).toEqual([
      'permission-decided:preset:ask:Write',
      'permission-asked:person:Write',
      'permission-decided:person:deny:Write',
      'finish:interrupted',
    ]);
    expect(decided(events)[1]).toMatchObject({ message: 'stop here', interrupt: true });
    await session.close();
  }, 60_000);
});

describe('permission decisions on Redis Streams, the worker in another process', () => {
  let redis: RedisServer;
  let server: FakeOpenAI;
  let worker: ChildProcess | undefined;
  let client: AgentClient;
  let transport: RedisStreamTransport;

  beforeAll(async () => {
    const createClient = await loadRedisClient();
    redis = await startRedis();
    server = await startFakeOpenAI([
      { toolCalls: [{ name: 'Glob', arguments: { pattern: '*.md' } }] },
      { text: 'Nothing here.', chunkChars: 3 },
      { toolCalls: [{ name: 'Write', arguments: { file_path: 'e.txt', content: 'x' } }] },
      { text: 'Written.', chunkChars: 3 },
    ]);
    const env: StreamWorkerEnv = {
      address: temporalAddress(),
      taskQueue: uniqueTaskQueue('stream-permission-redis'),
      baseUrl: server.baseUrl,
      redisUrl: redis.url,
      workspace: tempDir('stream-permission-redis'),
      permission: 'default',
    };
    worker = await startWorker(env);
    transport = redisStreams({ url: redis.url, createClient });
    client = await createAgentClient(streamAgentOptions(env, transport));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await transport?.close();
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGKILL');
      await exited;
    }
    await server?.close();
    await redis?.stop();
  });

  it('the client sees the preset decision and a person’s answer as the worker process publishes them', async () => {
    const session = await client.createSession();
    const allowed = session.send('look');
    const first = await streamOf(allowed);
    expect(shapeOf(first)).toEqual([
      'permission-decided:preset:allow:Glob',
      'tool-start:Glob',
      'tool-end:success:Glob',
      'finish:completed',
    ]);
    const asking = session.send('write e');
    const second = await streamOf(asking, async (event) => {
      await expectPending(session, event);
      await cli(['approve', session.id, event.permissionRequestId!, '--identity', 'carol@ops']);
    });
    expect(shapeOf(second)).toEqual([
      'permission-decided:preset:ask:Write',
      'permission-asked:person:Write',
      'permission-decided:person:allow:Write',
      'tool-start:Write',
      'tool-end:success:Write',
      'finish:completed',
    ]);
    expect(decided(second)[1]).toMatchObject({
      decidedBy: 'person',
      identity: 'carol@ops',
      editedInput: false,
    });
    // Read again from the start, by request id: the same entries.
    const again: StreamedEvent[] = [];
    for await (const event of session.stream(asking.requestId)) again.push(event);
    expect(again).toEqual(second);
    await session.close();
  }, 90_000);
});

/** A stream worker process on `env`, started and polling. */
async function startWorker(env: StreamWorkerEnv): Promise<ChildProcess> {
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
