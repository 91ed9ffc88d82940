/**
 * `durable-agent inspect`, `replay` and `golden` on an encrypted session, as child processes
 * against the test run's server: with the key ring of `DURABLE_AGENT_ENCRYPTION_KEYS` they
 * read it (also after a rotation, the old key kept); with the key missing, or a wrong key
 * under the right id, they fail with one line naming the key id, never garbage.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent } from '../../../src/index.js';
import { fetchSessionHistory, writeHistoryFile } from '../../../src/history/files.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { decodeHistoryPayloads } from '../../../src/history/decode.js';
import { encryptionCodec, isEncryptedPayload } from '../../../src/payloads/encryption.js';
import {
  TEST_KEY,
  TEST_KEY_ID,
  TEST_KEY_RING,
  keysVariable,
  newKey,
} from '../../helpers/encryption.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';
import { runCli, type CliRun } from '../../helpers/cli-process.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const scratch = tempDir('cli-encryption');
/** Planted in the prompt: the CLI shows it only when it decrypts. */
const SECRET = `planted-${randomUUID()}`;
const REASON = `refused prompt: please refuse ${SECRET}`;

const cli = (args: string[], keys: string | undefined) =>
  runCli(args, { env: { DURABLE_AGENT_ENCRYPTION_KEYS: keys } });

/** One line on stderr naming the key id, nothing on stdout, no stack, no plaintext. */
function expectKeyError(run: CliRun, code: number, keyId: string): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stdout).toBe('');
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^durable-agent: /);
  expect(lines[0]).toContain(`key id '${keyId}'`);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stderr).not.toContain(SECRET);
}

const right = keysVariable([TEST_KEY_ID, TEST_KEY]);
const rotated = keysVariable(['test-2026-07', newKey()], [TEST_KEY_ID, TEST_KEY]);
const missing = keysVariable(['test-2026-07', newKey()]);
const wrong = keysVariable([TEST_KEY_ID, newKey()]);

let agent: Agent;
let sessionId: string;
let historyFile: string;
/** An agent module with the session's hook policy, for `golden`. */
let agentModule: string;

beforeAll(async () => {
  agent = await createAgent({
    model: scriptedModel(() => 'ok'),
    encryption: TEST_KEY_RING,
    advanced: {
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) =>
            String(input.userPrompt).includes('refuse')
              ? { action: 'abort', reason: `refused prompt: ${String(input.userPrompt)}` }
              : { action: 'continue' },
        ],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('cli-enc') },
    },
  });
  const session = await agent.createSession({ sessionId: `cli-enc-${randomUUID()}` });
  sessionId = session.id;
  await session.send('hello');
  await session.send(`please refuse ${SECRET}`).catch(() => undefined);
  await session.close();
  // Session lookups describe the workflow, whose memo is encrypted too: a client with the key.
  const connection = await Connection.connect({ address: temporalAddress() });
  const client = new Client({
    connection,
    dataConverter: { payloadCodecs: [encryptionCodec(TEST_KEY_RING)] },
  });
  try {
    const recorded = await fetchSessionHistory(client, sessionId);
    historyFile = join(scratch, 'encrypted-history.json');
    writeHistoryFile(historyFile, recorded);
    // The premise: every payload of the history is sealed, none carries the prompt.
    const seen: Payload[] = [];
    // Two parts Temporal never passes through a codec: search attributes (the server indexes
    // them; the session's hold agent name, version, status, a count and a decision kind) and
    // the patch markers' details (the patch id). Neither holds content; every other payload
    // must be sealed.
    const withoutSearchAttributes = structuredClone(recorded.history);
    for (const event of withoutSearchAttributes.events ?? []) {
      if (event.workflowExecutionStartedEventAttributes) {
        event.workflowExecutionStartedEventAttributes.searchAttributes = null;
      }
      if (event.upsertWorkflowSearchAttributesEventAttributes) {
        event.upsertWorkflowSearchAttributesEventAttributes.searchAttributes = null;
      }
      if (event.markerRecordedEventAttributes?.markerName === 'core_patch') {
        event.markerRecordedEventAttributes.details = null;
      }
    }
    await decodeHistoryPayloads(withoutSearchAttributes, [
      {
        encode: async (payloads) => payloads,
        decode: async (payloads) => (seen.push(...payloads), payloads),
      },
    ]);
    expect(seen.length).toBeGreaterThan(5);
    for (const payload of seen) {
      expect(isEncryptedPayload(payload)).toBe(true);
      expect(Buffer.from(payload.data ?? []).includes(SECRET)).toBe(false);
    }
  } finally {
    await connection.close();
  }
  agentModule = join(scratch, 'agent.ts');
  writeFileSync(
    agentModule,
    `import { HookEvent } from ${JSON.stringify(join(repoRoot, 'src/index.ts'))};\n` +
      'export default { model: "unused", advanced: { hooks: { [HookEvent.UserPromptSubmit]: [' +
      "async (i) => i.userPrompt.includes('refuse') ? { action: 'abort', reason: `refused prompt: ${i.userPrompt}` } : { action: 'continue' }" +
      '] } } };\n',
  );
});

afterAll(async () => {
  await agent?.close();
});

describe('sessions, with an encrypted session on the server', () => {
  it('lists it without any key (a summary reads no payload), next to the others', async () => {
    const run = await cli(['sessions', '--limit', '1000', '--json'], undefined);
    expect(run.code, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as { sessionId: string; status: string }[];
    expect(rows.find((row) => row.sessionId === sessionId)?.status).toBe('COMPLETED');
  });
});

describe('inspect an encrypted session', () => {
  it('with the key, shows the timeline with the decrypted hook reason carrying the prompt', async () => {
    const run = await cli(['inspect', sessionId, '--json'], right);
    expect(run.code, run.stderr).toBe(0);
    const timeline = JSON.parse(run.stdout) as {
      sessionId?: string;
      dispatches: { event: string; decision: string; reason?: string }[];
    };
    expect(timeline.sessionId).toBe(sessionId);
    expect(timeline.dispatches).toContainEqual(
      expect.objectContaining({ event: 'UserPromptSubmit', decision: 'abort', reason: REASON }),
    );
  });

  it('after a rotation (a new current key, the old one kept) still reads it, from a history file too', async () => {
    for (const target of [sessionId, historyFile]) {
      const run = await cli(['inspect', target, '--json'], rotated);
      expect(run.code, run.stderr).toBe(0);
      const { dispatches } = JSON.parse(run.stdout) as { dispatches: { reason?: string }[] };
      expect(dispatches.map((d) => d.reason)).toContain(REASON);
    }
  });

  it('with its key missing from the ring, fails with one line naming the key id', async () => {
    expectKeyError(await cli(['inspect', sessionId], missing), 1, TEST_KEY_ID);
  });

  it('with no key ring set at all, fails with one line naming the key id and the variable', async () => {
    const run = await cli(['inspect', historyFile], undefined);
    expectKeyError(run, 1, TEST_KEY_ID);
    expect(run.stderr).toContain('DURABLE_AGENT_ENCRYPTION_KEYS');
  });

  it('with a wrong key under the right id, fails with one line naming the key id', async () => {
    const run = await cli(['inspect', sessionId], wrong);
    expectKeyError(run, 1, TEST_KEY_ID);
    expect(run.stderr).toMatch(/does not open/);
  });
});

describe('replay an encrypted session', () => {
  it('with the key (rotated ring), replays it deterministically', async () => {
    const run = await cli(['replay', sessionId], rotated);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('deterministic: yes');
  });

  it('with its key missing, or wrong, fails with one line naming the key id', async () => {
    expectKeyError(await cli(['replay', historyFile], missing), 1, TEST_KEY_ID);
    expectKeyError(await cli(['replay', sessionId], wrong), 1, TEST_KEY_ID);
  });
});

describe('golden on an encrypted session history', () => {
  it('with the key, checks its decrypted dispatches against the module: none changed', async () => {
    const run = await cli(['golden', agentModule, historyFile], rotated);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/encrypted-history\.json: 2 decisions, none changed/);
  });

  it('with its key missing, or wrong, exits 2 with one line naming the key id', async () => {
    expectKeyError(await cli(['golden', agentModule, historyFile], missing), 2, TEST_KEY_ID);
    expectKeyError(await cli(['golden', agentModule, historyFile], wrong), 2, TEST_KEY_ID);
  });
});
