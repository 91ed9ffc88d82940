/**
 * The session page answers a sub-agent's ask through its parent (issue 34, point 5), in a
 * real headless Chromium against the test run's Temporal server and a real worker: the
 * inbox lists the sub-agent's Write once, under the parent, with its path `main/writer`; the
 * parent's page shows it and approves it as the name typed on the page; the sub-agent's
 * history records who approved. Screenshots land in test-artifacts/subagent-inbox/ (printed).
 *
 * Needs Chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgentClient,
  createAgentWorker,
  defineTool,
  type AgentClient,
  type AgentOptions,
  type AgentWorker,
} from '../../../src/index.js';
import type { PendingPermission } from '../../../src/common/permission.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { createSessionUi, type SessionUi } from '../../../src/ui/index.js';
import { artifactsDir, launchChromium, requireChromium } from '../../helpers/chromium.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const artifacts = artifactsDir('subagent-inbox');
/** Visibility is eventually consistent: how long a listing may take to catch up, ms. */
const LISTED_WAIT_MS = 30_000;

/** Runs of the Write tool. */
const writes: unknown[] = [];
const write = defineTool({
  name: 'Write',
  description: 'Write a file',
  kind: 'write',
  inputSchema: z.object({ file_path: z.string(), content: z.string() }),
  affectedPaths: (input) => [input.file_path],
  execute: async (input) => {
    writes.push(input);
    return `wrote ${input.file_path}`;
  },
});

const taskQueue = uniqueTaskQueue('subagent-inbox');
const options: AgentOptions = {
  name: 'inbox-agent',
  // The top session delegates to `writer`, whose Write asks a person (the default preset).
  model: scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (request.agentPath === 'main/writer') {
      if (last?.role !== 'tool') return toolCall('Write', { file_path: 'notes.md', content: 'hi' });
      return `writer got: ${last.results[0]?.status}`;
    }
    if (last?.role === 'tool') return `parent got: ${last.results[0]?.model}`;
    return toolCall('Task', {
      description: 'notes',
      prompt: 'Write notes',
      subagent_type: 'writer',
    });
  }),
  tools: [write],
  advanced: {
    subagents: {
      agents: { writer: { description: 'Writes notes', prompt: 'You write.', tools: ['Write'] } },
    },
    temporal: { address: temporalAddress(), taskQueue },
  },
};

let worker: AgentWorker;
let agent: AgentClient;
let ui: SessionUi;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  requireChromium();
  worker = await createAgentWorker(options);
  agent = await createAgentClient(options);
  ui = await createSessionUi({
    client: agent.temporal,
    taskQueue,
    identity: 'ui:inbox-default',
    timeoutMs: 5000,
  });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 1200 } });
  const login = await context.newPage();
  expect((await login.goto(ui.loginUrl))?.status()).toBe(200);
  await login.close();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await agent?.close();
  await worker?.shutdown();
});

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(artifacts, name);
  await page.screenshot({ path, fullPage: true });
  console.log(`subagent-inbox: screenshot ${path}`);
}

describe("a sub-agent's ask on the session page", () => {
  it('the inbox lists it once under the parent with its path; the parent page approves it as ui:alice', async () => {
    const session = await agent.createSession({ sessionId: `inbox-${randomUUID().slice(0, 8)}` });
    const response = session.send('write the notes');
    let pending: PendingPermission[] = [];
    await waitFor(
      async () => (pending = await session.pendingPermissions()).length === 1,
      30_000,
      "the sub-agent's ask",
    );
    const ask = pending[0]!;
    const cardsOf = (page: Page) =>
      page.locator(`[data-testid=request][data-request="${ask.requestId}"]`);
    const parentAction = `/sessions/${encodeURIComponent(session.id)}/requests/`;

    // The inbox: once both sessions are listed, the ask shows once, answered through the parent.
    const page = await context.newPage();
    await waitFor(
      async () => {
        await page.goto(`${ui.url}/inbox`);
        const cards = cardsOf(page);
        if ((await cards.count()) !== 1) return false;
        const action = await cards.locator('form.approve').getAttribute('action');
        return action?.startsWith(parentAction) ?? false;
      },
      LISTED_WAIT_MS,
      'the ask in the inbox, under the parent',
    );
    await expect(cardsOf(page).getByTestId('request-path').innerText()).resolves.toBe(
      'main/writer',
    );
    await expect(cardsOf(page).getByTestId('request-agent').innerText()).resolves.toBe(
      'inbox-agent',
    );
    // The sub-agent's call is not the parent's (their tool-use ids may be alike): no prompt
    // of the parent is shown for it.
    await expect(cardsOf(page).getByTestId('request-prompt').count()).resolves.toBe(0);
    await screenshot(page, 'inbox-subagent.png');

    // The parent's page shows it and answers it.
    await page.goto(`${ui.url}/sessions/${encodeURIComponent(session.id)}`);
    const card = cardsOf(page);
    await expect(card.getByTestId('request-path').innerText()).resolves.toBe('main/writer');
    await page.getByTestId('name').fill('alice');
    await expect(card.getByTestId('answer-as').innerText()).resolves.toBe('ui:alice');
    await card.getByTestId('approve').click();
    await page.waitForURL(/notice=approved/, { timeout: LISTED_WAIT_MS });
    await screenshot(page, 'parent-approved.png');

    const result = await response;
    expect(result.text()).toBe('parent got: writer got: success');
    expect(writes).toEqual([{ file_path: 'notes.md', content: 'hi' }]);
    const history = await agent.temporal.workflow
      .getHandle(sessionWorkflowId(ask.sessionId!))
      .fetchHistory();
    expect(timelineFromHistory(history).toolCalls[0]).toMatchObject({
      toolName: 'Write',
      permission: { ask: { outcome: 'approved', by: 'ui:alice', requestId: ask.requestId } },
    });
    await page.close();
    await session.close();
  }, 120_000);
});
