/**
 * `durable-agent audit-export` / `audit-verify` on an encrypted session that delegates to a
 * sub-agent: the CLI reads it with `DURABLE_AGENT_ENCRYPTION_KEYS`, the log holds no plaintext
 * of the session (reasons and texts as digests), the `Task` entry names the sub-agent's
 * session, whose own log exports and verifies too; without the keys the export is refused.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type Session } from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { runCli } from '../../helpers/cli-process.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { TEST_KEY, TEST_KEY_ID, TEST_KEY_RING, keysVariable } from '../../helpers/encryption.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('audit-encrypted');
const keyFile = join(workspace, 'audit-key.pem');
const pubFile = join(workspace, 'audit-key.pub.pem');
const keys = { DURABLE_AGENT_ENCRYPTION_KEYS: keysVariable([TEST_KEY_ID, TEST_KEY]) };
// Words that must not reach the log in the clear.
const SECRET_REASON = 'reason-plaintext-7f3a';
const SECRET_ANSWER = 'answer-plaintext-91c2';

let agent: Agent;
let session: Session;

beforeAll(async () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(pubFile, publicKey.export({ type: 'spki', format: 'pem' }));
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (request.agentPath === 'main/helper') return `helper says ${SECRET_ANSWER}`;
    if (last?.role === 'tool') return `parent got: ${String(last.results[0]?.model)}`;
    return toolCall('Task', {
      description: 'ask the helper',
      prompt: 'Say something',
      subagent_type: 'helper',
    });
  });
  agent = await createAgent({
    name: 'audit-encrypted',
    model,
    encryption: TEST_KEY_RING,
    advanced: {
      hooks: {
        [HookEvent.PreToolUse]: [async () => ({ action: 'continue', reason: SECRET_REASON })],
      },
      subagents: {
        agents: { helper: { description: 'Helps', prompt: 'You help.', tools: [] } },
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('audit-encrypted') },
    },
  });
  session = await agent.createSession({ sessionId: `audit-enc-${randomUUID()}` });
  const response = await session.send('delegate');
  expect(response.text()).toContain(SECRET_ANSWER);
}, 120_000);

afterAll(async () => {
  await agent?.shutdown();
});

const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('an encrypted session with a sub-agent', () => {
  it('exports with the keys, holds no plaintext, and verifies against the server', async () => {
    const logFile = join(workspace, 'parent.jsonl');
    const exported = await runCli(
      ['audit-export', session.id, '--key', keyFile, '--out', logFile],
      { env: keys },
    );
    expect(exported.code, exported.stderr).toBe(0);
    const text = readFileSync(logFile, 'utf8');
    expect(text).not.toContain(SECRET_REASON);
    expect(text).not.toContain(SECRET_ANSWER);
    const lines = linesOf(logFile);
    expect(lines[0]).toMatchObject({ covers: { encrypted: true, content: false } });
    // The callback's reason is there as its digest.
    expect(text).toMatch(/"reasonSha256":"[0-9a-f]{64}"/);
    const task = lines.find((l) => l.kind === 'tool' && l.toolName === 'Task') as
      { child?: { sessionId: string } } | undefined;
    expect(task?.child?.sessionId).toBeTruthy();

    const verified = await runCli(
      ['audit-verify', logFile, '--pub', pubFile, '--session', session.id],
      { env: keys },
    );
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);

    // The sub-agent's session: its own log, verified as well.
    const childLog = join(workspace, 'child.jsonl');
    const child = await runCli(
      ['audit-export', task!.child!.sessionId, '--key', keyFile, '--out', childLog],
      { env: keys },
    );
    expect(child.code, child.stderr).toBe(0);
    expect(linesOf(childLog)[1]).toMatchObject({ kind: 'session', subagent: expect.anything() });
    expect(readFileSync(childLog, 'utf8')).not.toContain(SECRET_ANSWER);
    const childVerified = await runCli(
      ['audit-verify', childLog, '--pub', pubFile, '--session', task!.child!.sessionId],
      { env: keys },
    );
    expect(childVerified.code, childVerified.stdout + childVerified.stderr).toBe(0);
  }, 120_000);

  it('without the keys, the export is refused, naming what is missing', async () => {
    const refused = await runCli(
      ['audit-export', session.id, '--key', keyFile, '--out', join(workspace, 'no.jsonl')],
      { env: { DURABLE_AGENT_ENCRYPTION_KEYS: undefined } },
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/DURABLE_AGENT_ENCRYPTION_KEYS|encrypt/i);
  }, 60_000);
});
