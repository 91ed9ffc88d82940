/**
 * `durable-agent audit-export` and `audit-verify` on a real session (issue 37, parts 3 and
 * 4): a session with hooks, a Read that runs, a Write a person approves with the CLI
 * (`--identity`), exported by the CLI and verified by it against the server and a history
 * file; then Temporal resets the workflow to the workflow task after the first prompt, and
 * the log no longer matches the history: verify names the first entry the reset dropped.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal as proto } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type Session } from '../../../src/index.js';
import { writeHistoryFile } from '../../../src/history/files.js';
import { runCli } from '../../helpers/cli-process.js';
import { pendingAsk, rawClient, temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { readWriteModel } from '../../helpers/read-write-model.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('audit');
const keyFile = join(workspace, 'audit-key.pem');
const pubFile = join(workspace, 'audit-key.pub.pem');
const logFile = join(workspace, 'audit.jsonl');
const historyFile = join(workspace, 'history.json');

interface Entry {
  seq: number;
  kind: string;
  [field: string]: unknown;
}

let agent: Agent;
let session: Session;
let entries: Entry[];
let exportRun: Awaited<ReturnType<typeof runCli>>;

beforeAll(async () => {
  writeFileSync(join(workspace, 'secrets.env'), 'API_KEY=sk-test-123\n');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(pubFile, publicKey.export({ type: 'spki', format: 'pem' }));
  agent = await createAgent({
    model: readWriteModel(),
    workspaceRoots: [workspace],
    advanced: {
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => ({ action: 'continue', reason: `audit: logged ${input.toolName}` }),
        ],
      },
      // Default permission: Read runs, Write asks a person.
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('audit') },
    },
  });
  session = await agent.createSession({ sessionId: `audit-${randomUUID()}` });
  await session.send('read secrets');
  const response = session.send('write approved');
  const requestId = await pendingAsk(session, 20_000, 'the ask of the Write');
  const approved = await runCli(['approve', session.id, requestId, '--identity', 'alice@ops']);
  expect(approved.code, approved.stderr).toBe(0);
  await response;
  await session.send('hello');
  exportRun = await runCli(['audit-export', session.id, '--key', keyFile, '--out', logFile]);
  entries = readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .slice(1, -1)
    .map((line) => JSON.parse(line) as Entry);
}, 120_000);

afterAll(async () => {
  await agent?.shutdown();
});

describe('audit-export', () => {
  it('writes every decision: hook reasons, the approval with who and when, tool digests', () => {
    expect(exportRun.code, exportRun.stderr).toBe(0);
    expect(exportRun.stderr).toContain(`entries of session ${session.id} (1 run)`);
    const dispatch = entries.find((e) => e.kind === 'dispatch' && e.toolName === 'Write');
    expect(dispatch).toMatchObject({
      event: 'PreToolUse',
      decision: 'continue',
      callbacks: [{ index: 0, action: 'continue', reason: 'audit: logged Write' }],
    });
    const approval = entries.find((e) => e.kind === 'approval');
    expect(approval).toMatchObject({ toolName: 'Write', outcome: 'approved', by: 'alice@ops' });
    expect(approval!.answeredAt as number).toBeGreaterThanOrEqual(approval!.askedAt as number);
    const tools = entries.filter((e) => e.kind === 'tool');
    expect(tools.map((t) => [t.toolName, t.status])).toEqual([
      ['Read', 'success'],
      ['Write', 'success'],
    ]);
    expect(tools[0]!.outputSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(tools[0]).not.toHaveProperty('output');
    // read secrets and write approved: a step with the call, one after it; hello: one.
    expect(entries.filter((e) => e.kind === 'model-step')).toHaveLength(5);
    expect(entries.filter((e) => e.kind === 'prompt')).toHaveLength(3);
  });
});

describe('audit-verify', () => {
  it('holds offline, against the server and against a history file', async () => {
    const offline = await runCli(['audit-verify', logFile, '--pub', pubFile]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toContain(`ok: ${entries.length} entries, chain and signature hold`);
    const server = await runCli([
      'audit-verify',
      logFile,
      '--pub',
      pubFile,
      '--session',
      session.id,
    ]);
    expect(server.code, server.stderr).toBe(0);
    expect(server.stdout).toContain('entry for entry');
    const client = await rawClient();
    writeHistoryFile(
      historyFile,
      await client.workflow.getHandle(session.workflowId).fetchHistory(),
    );
    await client.connection.close();
    const file = await runCli([
      'audit-verify',
      logFile,
      '--pub',
      pubFile,
      '--history',
      historyFile,
    ]);
    expect(file.code, file.stderr).toBe(0);
  });

  it('--query: exports the sessions a visibility query lists, verified against the server', async () => {
    const queried = join(workspace, 'query.jsonl');
    const exported = await runCli([
      'audit-export',
      '--query',
      `WorkflowId = '${session.workflowId}'`,
      '--key',
      keyFile,
      '--out',
      queried,
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    const body = (text: string) =>
      text
        .trim()
        .split('\n')
        .slice(1, -1)
        .map((line) => {
          const { prevHash: _p, hash: _h, ...entry } = JSON.parse(line) as Entry;
          return entry;
        });
    expect(body(readFileSync(queried, 'utf8'))).toEqual(body(readFileSync(logFile, 'utf8')));
    const verified = await runCli([
      'audit-verify',
      queried,
      '--pub',
      pubFile,
      '--session',
      session.id,
    ]);
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('exits 2 naming the line of a malformed log, and for a key that is not Ed25519', async () => {
    const broken = join(workspace, 'broken.jsonl');
    const lines = readFileSync(logFile, 'utf8').split('\n');
    lines[2] = lines[2]!.slice(0, -3);
    writeFileSync(broken, lines.join('\n'));
    const malformed = await runCli(['audit-verify', broken, '--pub', pubFile]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain(`${broken}: line 3: not JSON`);
    const rsa = join(workspace, 'rsa.pem');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    writeFileSync(rsa, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const wrongKey = await runCli(['audit-export', session.id, '--key', rsa]);
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toContain('an rsa key; audit logs are signed with Ed25519');
  });

  it('after a reset of the workflow, names the first entry the history no longer has', async () => {
    const client = await rawClient();
    const handle = client.workflow.getHandle(session.workflowId);
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    // The workflow task that completed the first prompt's send: the reset keeps it.
    const prompts = entries.filter((e) => e.kind === 'prompt');
    const firstDone = events.findIndex(
      (e) =>
        e.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId === prompts[0]!.requestId,
    );
    expect(firstDone).toBeGreaterThan(0);
    const resetTo = events
      .slice(firstDone)
      .find((e) => e.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    await client.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: session.workflowId },
      workflowTaskFinishEventId: resetTo!.eventId,
      reason: 'audit test: history edited',
      requestId: randomUUID(),
      resetReapplyType: proto.api.enums.v1.ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
      resetReapplyExcludeTypes: [
        proto.api.enums.v1.ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL,
        proto.api.enums.v1.ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE,
      ],
    });
    await client.connection.close();
    // The second prompt's entries came after the reset point: its prompt entry is the first.
    const dropped = entries.findIndex(
      (e) => e.kind === 'prompt' && e !== entries.find((p) => p.kind === 'prompt'),
    );
    const verify = await runCli([
      'audit-verify',
      logFile,
      '--pub',
      pubFile,
      '--session',
      session.id,
    ]);
    expect(verify.code, verify.stdout).toBe(1);
    expect(verify.stderr).toContain(
      `does not match the history (session ${session.id}): entry seq ${dropped} (prompt, line ${dropped + 2}) is not in the history`,
    );
  });
});
