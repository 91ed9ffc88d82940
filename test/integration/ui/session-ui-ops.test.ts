/**
 * The session page (`createSessionUi`) in a real headless Chromium against the test run's
 * Temporal server and a real worker (issue 31, items 5 and 6): a session whose workflow was
 * terminated from outside is shown as terminated, not by the `running` its search attribute
 * kept; the inbox says which agent asks, for which prompt, the deadline as "in 23 h" beside
 * its time, and marks the input key a PreToolUse hook added; two tabs with different names
 * each answer as the name their form shows, whatever the other typed since. Screenshots land
 * in test-artifacts/session-ui-ops/ (printed).
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
  HookEvent,
  type AgentClient,
  type AgentOptions,
  type AgentWorker,
  type SendResponse,
  type Session,
} from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { createSessionUi, type SessionUi } from '../../../src/ui/index.js';
import { artifactsDir, launchChromium, requireChromium } from '../../helpers/chromium.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const artifacts = artifactsDir('session-ui-ops');
/** Visibility is eventually consistent: how long a listing may take to catch up, ms. */
const LISTED_WAIT_MS = 30_000;

/** Runs of the Write tool, by file path. */
const writes = new Map<string, unknown[]>();
const write = defineTool({
  name: 'Write',
  description: 'Write a file',
  kind: 'write',
  inputSchema: z.object({
    file_path: z.string(),
    content: z.string(),
    backup: z.boolean().optional(),
  }),
  affectedPaths: (input) => [input.file_path],
  execute: async (input) => {
    writes.set(input.file_path, [...(writes.get(input.file_path) ?? []), input]);
    return `wrote ${input.file_path}`;
  },
});

const taskQueue = uniqueTaskQueue('session-ui-ops');
const options: AgentOptions = {
  name: 'ops-agent',
  /** `write <path>` asks for a Write of <path>; anything else is answered. */
  model: scriptedModel((request) => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
    if (text.startsWith('write ') && request.step === 0) {
      return toolCall('Write', { file_path: text.slice(6), content: 'notes' });
    }
    return `reply to ${text}`;
  }),
  tools: [write],
  advanced: {
    hooks: {
      [HookEvent.PreToolUse]: [
        async () => ({ action: 'continue', reason: 'audited' }),
        // Adds a key the model never gave: the person must see that it is the hook's.
        async () => ({ action: 'continue', reason: 'backups on', modifiedInput: { backup: true } }),
      ],
    },
    temporal: { address: temporalAddress(), taskQueue },
  },
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
  ui = await createSessionUi({
    client: agent.temporal,
    taskQueue,
    identity: 'ui:ops-default',
    timeoutMs: 5000,
  });
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

/** A session whose prompt `write <path>` waits for a person's answer. */
async function ask(
  name: string,
): Promise<{ session: Session; response: Promise<SendResponse>; path: string }> {
  const session = await agent.createSession({ sessionId: `ops-${name}-${tag}` });
  const path = `${name}-${tag}.md`;
  const response = session.send(`write ${path}`);
  await waitFor(async () => (await session.pendingPermissions()).length === 1, 30_000, 'the ask');
  return { session, response, path };
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

describe('the inbox and who answers', () => {
  it('the inbox says which agent asks, for which prompt, the deadline as "in 23 h" beside its time, and marks the key a hook added', async () => {
    const asking = await ask('inbox');
    const [pending] = await asking.session.pendingPermissions();
    expect(pending!.input).toEqual({ file_path: asking.path, content: 'notes', backup: true });
    const page = await context.newPage();
    await page.goto(`${ui.url}/inbox`);
    const card = page.locator('[data-testid=request]', { hasText: asking.path });
    await expect(card.getByTestId('request-agent').innerText()).resolves.toBe('ops-agent');
    await expect(card.getByTestId('request-prompt').innerText()).resolves.toBe(
      `write ${asking.path}`,
    );
    // The default permission timeout is 24 h: a whole day is not left any more.
    await expect(card.getByTestId('deadline-relative').innerText()).resolves.toBe('in 23 h');
    const deadline = new Date(pending!.deadline).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await expect(
      card.locator('p', { has: page.getByTestId('deadline-relative') }).innerText(),
    ).resolves.toContain(`deadline ${deadline} (in 23 h)`);
    await expect(
      card
        .getByTestId('hook-added')
        .evaluateAll((keys) => keys.map((k) => k.getAttribute('data-key'))),
    ).resolves.toEqual(['backup']);
    await expect(card.locator('.hook-added').innerText()).resolves.toBe(
      'added by a PreToolUse hook, not the model: backup (callback #2)',
    );
    await screenshot(page, 'inbox-context.png');

    await card.getByTestId('deny-message').fill('not now');
    await card.getByTestId('deny').click();
    await page.waitForURL(/notice=denied/, { timeout: LISTED_WAIT_MS });
    expect((await asking.response).toolCalls.map((c) => c.status)).toEqual(['denied']);
    await page.close();
    await asking.session.close();
  });

  it("two tabs with different names: approving from tab A records A's name after tab B changed the stored one", async () => {
    const asking = await ask('tabs');
    const tabA = await context.newPage();
    await tabA.goto(`${ui.url}/inbox`);
    const cardOf = (tab: Page) => tab.locator('[data-testid=request]', { hasText: asking.path });
    await tabA.getByTestId('name').fill('alice');
    await expect(cardOf(tabA).getByTestId('answer-as').innerText()).resolves.toBe('ui:alice');

    const tabB = await context.newPage();
    await tabB.goto(`${ui.url}/inbox`);
    await tabB.getByTestId('name').fill('bob');
    await expect(cardOf(tabB).getByTestId('answer-as').innerText()).resolves.toBe('ui:bob');

    // Tab A goes on to the session's page after tab B typed its name: its own name stays.
    await cardOf(tabA).getByRole('link', { name: asking.session.id }).click();
    await tabA.waitForURL(/\/sessions\//, { timeout: LISTED_WAIT_MS });
    await expect(tabA.getByTestId('name').inputValue()).resolves.toBe('alice');
    await expect(tabA.getByTestId('answer-as').innerText()).resolves.toBe('ui:alice');
    await screenshot(tabA, 'tab-a-before-approving.png');
    await tabA.getByTestId('approve').click();
    await tabA.waitForURL(/notice=approved/, { timeout: LISTED_WAIT_MS });
    await expect(tabA.getByTestId('notice').innerText()).resolves.toMatch(
      /^Approved request \S+ as ui:alice:/,
    );
    expect((await asking.response).toolCalls.map((c) => c.status)).toEqual(['success']);
    await tabA.reload();
    await expect(tabA.getByTestId('decided-by').innerText()).resolves.toBe('ui:alice');
    await screenshot(tabA, 'tab-a-approved.png');

    // Tab B keeps its own name across a reload too.
    await tabB.reload();
    await expect(tabB.getByTestId('name').inputValue()).resolves.toBe('bob');
    await Promise.all([tabA.close(), tabB.close()]);
    await asking.session.close();
  });
});
