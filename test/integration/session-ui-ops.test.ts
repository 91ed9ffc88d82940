/**
 * The session page (`createSessionUi`) in a real headless Chromium against the test run's
 * Temporal server and a real worker (issue 31, items 5 and 6): a session whose workflow was
 * terminated from outside is shown as terminated, not by the `running` its search attribute
 * kept. Screenshots land in test-artifacts/session-ui-ops/ (printed).
 *
 * Needs Chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgentClient,
  createAgentWorker,
  type AgentClient,
  type AgentOptions,
  type AgentWorker,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { createSessionUi, type SessionUi } from '../../src/ui/index.js';
import { artifactsDir, launchChromium, requireChromium } from '../chromium.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../helpers.js';

const artifacts = artifactsDir('session-ui-ops');
/** Visibility is eventually consistent: how long a listing may take to catch up, ms. */
const LISTED_WAIT_MS = 30_000;

const taskQueue = uniqueTaskQueue('session-ui-ops');
const options: AgentOptions = {
  name: 'ops-agent',
  model: scriptedModel((request) => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    return `reply to ${last?.role === 'user' && typeof last.content === 'string' ? last.content : ''}`;
  }),
  advanced: { temporal: { address: temporalAddress(), taskQueue } },
};

const tag = randomUUID().slice(0, 8);
let worker: AgentWorker;
let agent: AgentClient;
let ui: SessionUi;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  requireChromium();
  worker = await createAgentWorker(options);
  agent = await createAgentClient(options);
  ui = await createSessionUi({ client: agent.temporal, taskQueue, timeoutMs: 5000 });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 1200 } });
  // Signed in once: the cookie serves every tab of the context.
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
  console.log(`session-ui-ops: screenshot ${path}`);
}

/** The ids of the session rows of the list's group `status`. */
function idsIn(page: Page, status: string): Promise<string[]> {
  return page
    .locator(`[data-testid=status-${status}] [data-testid=session-row]`)
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session') ?? ''));
}

describe('the session page and Temporal’s execution status', () => {
  it('a session whose workflow was terminated is shown as terminated, in the list and on its page', async () => {
    const dead = await agent.createSession({ sessionId: `ops-terminated-${tag}` });
    const live = await agent.createSession({ sessionId: `ops-live-${tag}` });
    await dead.send('hello');
    await live.send('hello');
    const page = await context.newPage();
    await page.goto(`${ui.url}/`);
    await waitFor(
      async () => {
        await page.reload();
        return (await idsIn(page, 'idle')).length === 2;
      },
      LISTED_WAIT_MS,
      'both sessions listed as idle',
    );

    await agent.temporal.workflow.getHandle(dead.workflowId).terminate('terminated by the test');
    await waitFor(
      async () => {
        await page.reload();
        return (await idsIn(page, 'terminated')).includes(dead.id);
      },
      LISTED_WAIT_MS,
      'the terminated session listed as terminated',
    );
    for (const open of ['awaiting_approval', 'running', 'idle', 'closed']) {
      expect(await idsIn(page, open), open).not.toContain(dead.id);
    }
    expect(await idsIn(page, 'idle')).toEqual([live.id]);
    await expect(page.getByTestId('status-terminated').locator('h2').innerText()).resolves.toBe(
      'Terminated (1)',
    );
    await screenshot(page, 'list-terminated.png');

    await page.goto(`${ui.url}/sessions/${encodeURIComponent(dead.id)}`);
    await expect(page.getByTestId('session-status').innerText()).resolves.toBe('Terminated');
    await expect(page.locator('.facts').innerText()).resolves.toContain('terminated by the test');
    await screenshot(page, 'session-terminated.png');
    await page.close();
    await live.close();
  });
});
