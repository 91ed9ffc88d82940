/**
 * Sessions found where operators look, on a dev server the package starts (its own here,
 * with the Web UI): the session search attributes registered at start, set by the client
 * and kept up to date by the workflow. Temporal's own CLI (`temporal workflow list --query`)
 * finds a session awaiting approval by status and agent, and not the others; its status goes
 * back after the approval and is `closed` at the end; a send that asks nobody upserts nothing,
 * unless `turnStatus` makes the status follow every turn; `durable-agent sessions --status
 * --agent` filters the same way. And the session page of Temporal's Web UI, in a real
 * headless Chromium, shows the activity summaries and the current details while the
 * approval waits (screenshot in test-artifacts/search-attributes/, printed).
 *
 * Needs Chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`): `.ci/run` installs it.
 */
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { type Browser } from 'playwright-core';
import { artifactsDir, launchChromium, requireChromium } from '../../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type Session } from '../../../src/index.js';
import { startDevServer, type DevServer } from '../../../src/server/dev-server.js';
import { ensureTemporalCli } from '../../../src/server/temporal-cli.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** Screenshots of this test (git ignores test-artifacts/). */
const artifacts = artifactsDir('search-attributes');
const UI_WAIT_MS = 30_000;
/** Visibility is eventually consistent: how long a listing may lag behind an upsert. */
const LIST_WAIT_MS = 20_000;

const workspace = tempDir('search-attributes');
/** The agent under test and another one, on the same server. */
const agentName = `sa-${randomUUID().slice(0, 8)}`;
const otherName = `sa-other-${randomUUID().slice(0, 8)}`;

/** `read` reads NOTES.md; `write` writes it (a person is asked); anything else is a reply. */
const model = () =>
  scriptedModel((request) => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
    if (request.step > 0) return `done: ${text}`;
    if (text === 'read') return toolCall('Read', { file_path: 'NOTES.md' });
    if (text === 'write') return toolCall('Write', { file_path: 'NOTES.md', content: 'new' });
    return `reply to ${text}`;
  });

let server: DevServer;
let connection: Connection;
let client: Client;
let browser: Browser | undefined;
let agent: Agent;
let other: Agent;
/** Of `agent`: waits for approval of its Write. */
let waiting: Session;
/** Of `agent`: open, no turn running (its status: `running`, the default). */
let idle: Session;
/** With `turnStatus`: the status follows the turns. */
let turnAgent: Agent;
/** Of `turnAgent`: between sends (its status: `idle`). */
let turnIdle: Session;
/** Of `other`: waits for approval too. */
let otherWaiting: Session;
let waitingSend: Promise<unknown>;
let otherSend: Promise<unknown>;

/** Temporal's own CLI against the test's server. */
async function temporal(args: string[]): Promise<string> {
  const { temporalPath } = await ensureTemporalCli({ cacheDir: join(repoRoot, '.temporal') });
  const run = await promisify(execFile)(temporalPath!, [...args, '--address', server.address]);
  return run.stdout;
}

/** The workflow ids `temporal workflow list --query <query>` prints. */
async function listedByCli(query: string): Promise<string[]> {
  const out = await temporal(['workflow', 'list', '--query', query, '--output', 'json']);
  const rows =
    out.trim() === '' ? [] : (JSON.parse(out) as Array<{ execution: { workflowId: string } }>);
  return rows.map((row) => row.execution.workflowId).sort();
}

/** The workflow ids the client's listing finds for `query`. */
async function listed(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

/** Wait until the listing for `query` is exactly `ids`. */
async function waitListed(query: string, ids: string[], what: string): Promise<void> {
  const want = [...ids].sort();
  let seen: string[] = [];
  try {
    await waitFor(
      async () => {
        seen = await listed(query);
        return JSON.stringify(seen) === JSON.stringify(want);
      },
      LIST_WAIT_MS,
      what,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message} (last listing: ${JSON.stringify(seen)})`);
  }
}

/** Send `write`, and wait until its Write waits for a person. */
async function untilAsked(session: Session): Promise<{ sent: Promise<unknown> }> {
  const sent = session.send('write');
  // Settled later by the test; kept from being an unhandled rejection meanwhile.
  sent.catch(() => undefined);
  await waitFor(
    async () => (await session.pendingPermissions()).length === 1,
    20_000,
    `the ask of session ${session.id}`,
  );
  return { sent };
}

/** The `durable-agent` CLI (a child process) against the test's server. */
async function durableAgent(args: string[]): Promise<string> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
  };
  delete env.DEBUG;
  const run = await promisify(execFile)(process.execPath, cliNodeArgs(args), {
    cwd: repoRoot,
    env,
  });
  return run.stdout;
}

beforeAll(async () => {
  writeFileSync(join(workspace, 'NOTES.md'), 'old notes\n');
  server = await startDevServer({
    cacheDir: join(repoRoot, '.temporal'),
    ui: true,
    log: () => undefined,
  });
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  const options = (name: string, turnStatus?: boolean) => ({
    name,
    model: model(),
    workspaceRoots: [workspace],
    advanced: {
      // An audit hook, so the timeline has hook dispatches with their summaries.
      hooks: { [HookEvent.PreToolUse]: [async () => ({ action: 'continue' as const })] },
      temporal: {
        address: server.address,
        taskQueue: uniqueTaskQueue(name),
        ...(turnStatus === undefined ? {} : { turnStatus }),
      },
    },
  });
  agent = await createAgent(options(agentName));
  other = await createAgent(options(otherName));
  turnAgent = await createAgent(options(`${agentName}-turns`, true));
  turnIdle = await turnAgent.createSession({ sessionId: `sa-turns-${randomUUID()}` });
  await turnIdle.send('hello');
  waiting = await agent.createSession({ sessionId: `sa-waiting-${randomUUID()}` });
  await waiting.send('read');
  ({ sent: waitingSend } = await untilAsked(waiting));
  idle = await agent.createSession({ sessionId: `sa-idle-${randomUUID()}` });
  await idle.send('hello');
  otherWaiting = await other.createSession({ sessionId: `sa-other-${randomUUID()}` });
  ({ sent: otherSend } = await untilAsked(otherWaiting));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await other?.close();
  await turnAgent?.close();
  await connection?.close();
  await server?.stop();
});

const awaitingOfAgent = () =>
  `DurableAgentStatus='awaiting_approval' AND DurableAgentName='${agentName}'`;

describe('session search attributes', () => {
  it('temporal workflow list --query finds the session awaiting approval by status and agent, not the others', async () => {
    await waitListed(awaitingOfAgent(), [waiting.workflowId], 'the waiting session listed');
    // Both other sessions are listed under their own attributes, so they are indexed too.
    await waitListed(
      `DurableAgentStatus='running' AND DurableAgentName='${agentName}'`,
      [idle.workflowId],
      'the open session listed',
    );
    await waitListed(
      `DurableAgentStatus='idle' AND DurableAgentName='${agentName}-turns'`,
      [turnIdle.workflowId],
      'the session between turns listed (turnStatus)',
    );
    await waitListed(
      `DurableAgentStatus='awaiting_approval' AND DurableAgentName='${otherName}'`,
      [otherWaiting.workflowId],
      "the other agent's waiting session listed",
    );
    expect(await listedByCli(awaitingOfAgent())).toEqual([waiting.workflowId]);
    expect(
      await listedByCli(`DurableAgentPendingApprovals=1 AND DurableAgentName='${agentName}'`),
    ).toEqual([waiting.workflowId]);
  });

  it('durable-agent sessions --status awaiting_approval --agent NAME lists only that session', async () => {
    const out = await durableAgent([
      'sessions',
      '--status',
      'awaiting_approval',
      '--agent',
      agentName,
      '--json',
    ]);
    const rows = JSON.parse(out) as Array<{ sessionId: string; agentStatus?: string }>;
    expect(rows.map((row) => row.sessionId)).toEqual([waiting.id]);
    expect(rows[0]?.agentStatus).toBe('awaiting_approval');
  });

  it("the Web UI's session page shows the activity summaries and the current details", async () => {
    requireChromium();
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1600, height: 1400 } });
    const page = await context.newPage();
    /** Wait for `texts` on the page, then keep a screenshot named `name`. */
    const shows = async (texts: string[], name: string, inFrame = false) => {
      try {
        for (const text of texts) {
          const root = inFrame ? page.locator('iframe').first().contentFrame() : page;
          await root.getByText(text).first().waitFor({ state: 'visible', timeout: UI_WAIT_MS });
        }
      } finally {
        // Kept either way: on a failure it shows what the page said instead.
        const path = join(artifacts, name);
        await page.screenshot({ path, fullPage: true });
        console.log(`search-attributes: screenshot ${path}`);
      }
    };
    await page.goto(`${server.uiUrl}/namespaces/default/workflows/${waiting.workflowId}`);
    // The timeline: each activity and timer with its summary.
    await shows(
      [
        'dispatchHook • PreToolUse Read, 1 callback',
        'executeTool • tool Read NOTES.md',
        'dispatchHook • PreToolUse Write, 1 callback',
        'approval deadline: Write NOTES.md',
      ],
      'timeline.png',
    );
    // The current details, from the session's worker.
    await page.getByText('User Metadata', { exact: true }).click({ timeout: UI_WAIT_MS });
    // The UI renders them (markdown) in a sandboxed frame of their own.
    await shows(['waiting for approval: Write NOTES.md, asked'], 'current-details.png', true);
    // The search attributes.
    await page.getByText('Search Attributes', { exact: true }).click({ timeout: UI_WAIT_MS });
    await shows(['DurableAgentStatus', 'awaiting_approval', agentName], 'search-attributes.png');
    const text = await page.locator('body').innerText();
    expect(text).toContain('DurableAgentPendingApprovals');
    await context.close();
  });

  it('after the approval the status goes back, the decision is the answer, and closed at the end', async () => {
    const [pending] = await waiting.pendingPermissions();
    await waiting.approve(pending!.requestId);
    await waitingSend;
    await waitListed(
      `DurableAgentStatus='running' AND DurableAgentPendingApprovals=0 AND ` +
        `DurableAgentLastDecision='allow' AND WorkflowId='${waiting.workflowId}'`,
      [waiting.workflowId],
      'the approved session running again',
    );
    expect(await listedByCli(awaitingOfAgent())).toEqual([]);
    await waiting.close();
    await waitListed(
      `DurableAgentStatus='closed' AND DurableAgentName='${agentName}'`,
      [waiting.workflowId],
      'the session closed',
    );
    const [otherPending] = await otherWaiting.pendingPermissions();
    await otherWaiting.deny(otherPending!.requestId, { message: 'no' });
    await otherSend;
    await waitListed(
      `DurableAgentLastDecision='deny' AND DurableAgentName='${otherName}'`,
      [otherWaiting.workflowId],
      'the denied session',
    );
  });

  it('a session that continued as new keeps its attributes in the new run', async () => {
    const rolling = await createAgent({
      name: `${agentName}-rolling`,
      model: scriptedModel(() => 'noted'),
      advanced: {
        continueAsNewAfterPrompts: 1,
        temporal: { address: server.address, taskQueue: uniqueTaskQueue('sa-roll') },
      },
    });
    try {
      const session = await rolling.createSession({ sessionId: `sa-roll-${randomUUID()}` });
      const handle = client.workflow.getHandle(session.workflowId);
      const firstRun = (await handle.describe()).runId;
      await session.send('one');
      await session.send('two');
      const described = await handle.describe();
      expect(described.runId).not.toBe(firstRun);
      await waitListed(
        // Every run is listed: the current one by its status, the earlier ones as they ended.
        `DurableAgentStatus='running' AND DurableAgentName='${agentName}-rolling' AND ` +
          `ExecutionStatus='Running' AND RunId='${described.runId}'`,
        [session.workflowId],
        'the rolled-over session listed',
      );
      await session.close();
    } finally {
      await rolling.close();
    }
  });

  /** The upsert events in the history of `session`'s current run. */
  const upserts = async (session: Session) =>
    (await client.workflow.getHandle(session.workflowId).fetchHistory()).events!.filter(
      (event) => event.upsertWorkflowSearchAttributesEventAttributes,
    ).length;

  it('a send that asks nobody and decides nothing new adds no upsert to the history', async () => {
    const before = await upserts(idle);
    await idle.send('again');
    await idle.send('and again');
    expect((await upserts(idle)) - before).toBe(0);
  });

  it('with turnStatus, a send that changes nothing but running and idle adds two upserts', async () => {
    const before = await upserts(turnIdle);
    await turnIdle.send('again');
    await turnIdle.send('and again');
    expect((await upserts(turnIdle)) - before).toBe(4);
  });
});
