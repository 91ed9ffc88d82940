/**
 * Sessions started at once on a server without the session search attributes (a cluster or
 * dev server the user started, Temporal Cloud before its set-up): every start that the
 * server refuses for an unknown attribute starts again without them, the concurrent ones
 * included (they were all sent with the attributes before the first refusal came back), and
 * the client logs its WARN line once. Sessions started without them run and close as any
 * other: the workflow upserts no attribute it was not started with. A start the server
 * refuses for another reason (here a workflow id over the server's `limit.maxIDLength`) is an
 * `EngineError` naming the server's answer, with its `ServiceError` as cause.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection, ServiceError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, EngineError, type Agent } from '../../../src/index.js';
import { STATUS_KEY } from '../../../src/common/search-attributes.js';
import { startDevServer, type DevServer } from '../../../src/server/dev-server.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { uniqueTaskQueue } from '../../helpers/common.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const SESSIONS = 20;
/** The server's longest id (`limit.maxIDLength`): a session id past it is refused at start. */
const MAX_ID_LENGTH = 120;

let server: DevServer;
let connection: Connection;
let agent: Agent | undefined;
const warnings: string[] = [];

beforeAll(async () => {
  server = await startDevServer({
    cacheDir: join(repoRoot, '.temporal'),
    searchAttributes: false,
    dynamicConfig: { 'limit.maxIDLength': String(MAX_ID_LENGTH) },
    log: () => undefined,
  });
  connection = await Connection.connect({ address: server.address });
  agent = await createAgent({
    model: scriptedModel((request) => `noted:${String(request.prompt)}`),
    advanced: {
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (message: string) => void warnings.push(message),
        error: () => undefined,
      },
      temporal: { address: server.address, taskQueue: uniqueTaskQueue('sa-concurrent') },
    },
  });
}, 120_000);

afterAll(async () => {
  await agent?.close();
  await connection?.close();
  await server?.stop();
});

describe('a server without the session search attributes, sessions started at once', () => {
  it(`starts all ${SESSIONS}, each answers a send and closes, and warns once`, async () => {
    const ids = Array.from({ length: SESSIONS }, (_, i) => `sa-concurrent-${i}-${randomUUID()}`);
    const started = await Promise.allSettled(
      ids.map((sessionId) => agent!.createSession({ sessionId })),
    );
    const refused = started.flatMap((s) => (s.status === 'rejected' ? [s.reason as Error] : []));
    expect(refused.map((e) => `${(e as { code?: string }).code}: ${e.message}`)).toEqual([]);
    const sessions = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));

    const answers = await Promise.all(
      sessions.map(async (session, i) => (await session.send(`hello ${i}`)).text()),
    );
    expect(answers).toEqual(ids.map((_, i) => `noted:hello ${i}`));
    await Promise.all(sessions.map((session) => session.close()));

    const client = new Client({ connection });
    for (const session of sessions) {
      const described = await client.workflow.getHandle(session.workflowId).describe();
      expect(described.status.name).toBe('COMPLETED');
      expect(described.typedSearchAttributes.get(STATUS_KEY)).toBeUndefined();
    }
    expect(warnings.filter((line) => line.includes('no session search attributes'))).toHaveLength(
      1,
    );
  }, 240_000);

  it('a start the server refuses otherwise fails with ENGINE_ERROR naming its answer', async () => {
    const sessionId = `too-long-${'x'.repeat(MAX_ID_LENGTH)}`;
    const error = (await agent!.createSession({ sessionId }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: 'ENGINE_ERROR' });
    expect(error.message).toMatch(
      new RegExp(
        `^Session '${sessionId}' was not started: the Temporal server refused its workflow's ` +
          `start \\(INVALID_ARGUMENT: .*length.*\\)\\.$`,
        'i',
      ),
    );
    expect(error.cause).toBeInstanceOf(ServiceError);
    // Nothing was started under that id.
    const client = new Client({ connection });
    const described = await client.workflow
      .getHandle(`session-${sessionId}`)
      .describe()
      .catch((e: unknown) => e);
    expect(described).toBeInstanceOf(Error);
  }, 120_000);
});
