/**
 * The session page (`createSessionUi`, what `durable-agent ui` serves) in a real headless
 * Chromium, against the test run's Temporal server and a real worker: the list by status,
 * a session's turns with its dispatches, each callback's decision and the diffs of what
 * hooks and people changed, approving a pending Write from the inbox (the tool runs once),
 * denying another with a message, a second answer to a decided request and to an expired
 * one, a malformed edited input, a worker restart, a wrong token and an unknown session. Screenshots land in
 * test-artifacts/session-ui/ (printed).
 *
 * Needs Chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`): `.ci/run` installs it.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { artifactsDir, launchChromium, requireChromium } from '../../helpers/chromium.js';
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
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

/** Screenshots of this test (git ignores test-artifacts/). */
const artifacts = artifactsDir('session-ui');
const UI_WAIT_MS = 30_000;
/** Written into a prompt: the page must show it as text, never run it. */
const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';

/** Runs of the Write tool, by file path: its side effect, counted. */
const writes = new Map<string, string[]>();
const write = defineTool({
  name: 'Write',
  description: 'Write a file',
  kind: 'write',
  inputSchema: z.object({ file_path: z.string(), content: z.string() }),
  affectedPaths: (input) => [input.file_path],
  execute: async ({ file_path, content }) => {
    writes.set(file_path, [...(writes.get(file_path) ?? []), content]);
    return `wrote ${file_path}: ${content}`;
  },
});

/** `write <path>` asks for a Write of <path> (a secret in its content); anything else is answered. */
const model = scriptedModel((request) => {
  const last = request.messages.filter((m) => m.role === 'user').at(-1);
  const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
  if (text.startsWith('write ') && request.step === 0) {
    return toolCall('Write', { file_path: text.slice(6), content: 'token sk_live_123 inside' });
  }
  return `reply to ${text}`;
});

const taskQueue = uniqueTaskQueue('session-ui');
const options: AgentOptions = {
  model,
  tools: [write],
  advanced: {
    hooks: {
      [HookEvent.PreToolUse]: [
        async () => ({ action: 'continue', reason: 'audited' }),
        async (input) => ({
          action: 'continue',
          reason: 'stamped the content',
          modifiedInput: { content: `[checked] ${String(input.toolInput?.content)}` },
        }),
      ],
      [HookEvent.PostToolUse]: [
        async (input) => ({
          action: 'continue',
          reason: 'redacted 1 secret',
          modifiedOutput: String(input.toolOutput).replace('sk_live_123', '***'),
        }),
      ],
    },
    temporal: { address: temporalAddress(), taskQueue },
  },
};

const tag = randomUUID().slice(0, 8);
let worker: AgentWorker | undefined;
let agent: AgentClient;
let ui: SessionUi;
let browser: Browser;
/** Signed in: the token given once in the address, then the cookie. */
let context: BrowserContext;

interface Asking {
  session: Session;
  response: Promise<SendResponse>;
  path: string;
}
let approved: Asking;
let denied: Asking;
let restarted: Asking;
let idle: Session;
let closed: Session;

async function ask(name: string): Promise<Asking> {
  const session = await agent.createSession({ sessionId: `ui-${name}-${tag}` });
  const path = `${name}-${tag}.md`;
  const response = session.send(`write ${path}`);
  await waitFor(async () => (await session.pendingPermissions()).length === 1, 30_000, 'the ask');
  return { session, response, path };
}

beforeAll(async () => {
  requireChromium();
  worker = await createAgentWorker(options);
  agent = await createAgentClient(options);
  [approved, denied, restarted] = await Promise.all([ask('approve'), ask('deny'), ask('restart')]);
  idle = await agent.createSession({ sessionId: `ui-idle-${tag}` });
  await idle.send(`hello ${XSS}`);
  closed = await agent.createSession({ sessionId: `ui-closed-${tag}` });
  await closed.send('bye');
  await closed.close();
  ui = await createSessionUi({
    client: agent.temporal,
    taskQueue,
    identity: 'ui:test-default',
    timeoutMs: 5000,
  });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 1600 } });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  for (const s of [approved, denied, restarted]) await s?.session.close().catch(() => undefined);
  await idle?.close().catch(() => undefined);
  await agent?.close();
  await worker?.shutdown();
});

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(artifacts, name);
  await page.screenshot({ path, fullPage: true });
  console.log(`session-ui: screenshot ${path}`);
}

/** A new page of the signed-in context at `path`. */
async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  const response = await page.goto(`${ui.url}${path}`);
  expect(response?.status(), await page.content()).toBe(200);
  return page;
}

function sessionPath(session: Session): string {
  return `/sessions/${encodeURIComponent(session.id)}`;
}

describe('the session page in Chromium', () => {
  it('a missing or wrong token is refused with 401; the right one once in the address signs in with an HttpOnly cookie', async () => {
    expect((await fetch(`${ui.url}/`)).status).toBe(401);
    expect(
      (await fetch(`${ui.url}/`, { headers: { Authorization: 'Bearer not-the-token-at-all' } }))
        .status,
    ).toBe(401);
    expect(
      (await fetch(`${ui.url}/`, { headers: { Authorization: `Bearer ${ui.token}` } })).status,
    ).toBe(200);

    const stranger = await browser.newContext();
    const refused = await stranger.newPage();
    const answer = await refused.goto(`${ui.url}/?token=wrong-token-of-someone-else`);
    expect(answer?.status()).toBe(401);
    await expect(refused.getByTestId('error').innerText()).resolves.toMatch(/token/);
    await screenshot(refused, 'wrong-token.png');
    await stranger.close();

    const page = await context.newPage();
    const signedIn = await page.goto(ui.loginUrl);
    expect(signedIn?.status()).toBe(200);
    expect(new URL(page.url()).search).toBe(''); // the token left the address
    const cookies = await context.cookies(ui.url);
    expect(cookies.map((c) => [c.value, c.httpOnly, c.sameSite])).toEqual([
      [ui.token, true, 'Strict'],
    ]);
    await page.close();
  });

  it('lists the sessions by status: awaiting approval, idle, closed', async () => {
    const page = await open('/');
    const ids = async (status: string) =>
      page
        .getByTestId(`status-${status}`)
        .getByTestId('session-row')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')).sort());
    expect(await ids('awaiting_approval')).toEqual(
      [approved.session.id, denied.session.id, restarted.session.id].sort(),
    );
    expect(await ids('idle')).toEqual([idle.id]);
    expect(await ids('closed')).toEqual([closed.id]);
    await expect(page.getByTestId('status-awaiting_approval').innerText()).resolves.toContain(
      `waiting: Write ${approved.path}`,
    );
    await screenshot(page, 'list.png');
    await page.close();
  });

  it("a session's turn shows its dispatches, each callback's decision and reason, and the input diff; model text stays text", async () => {
    const page = await open(sessionPath(approved.session));
    const turn = page.getByTestId('turn');
    await expect(turn.getByTestId('prompt').innerText()).resolves.toBe(`write ${approved.path}`);
    const pre = turn.locator('[data-testid=dispatch][data-event=PreToolUse]');
    expect(await pre.getAttribute('data-decision')).toBe('continue');
    await expect(
      pre.getByTestId('callback').evaluateAll((items) => items.map((i) => i.textContent)),
    ).resolves.toEqual([
      expect.stringMatching(/^#1 continue audited/),
      expect.stringMatching(/^#2 continue stamped the content/),
    ]);
    const diff = await pre.getByTestId('diff').innerText();
    expect(diff).toContain('content');
    expect(diff).toContain('- "token sk_live_123 inside"');
    expect(diff).toContain('+ "[checked] token sk_live_123 inside"');
    await expect(page.getByTestId('ask').getAttribute('data-outcome')).resolves.toBe('waiting');
    await expect(page.getByTestId('request').count()).resolves.toBe(1);
    await screenshot(page, 'session-waiting.png');
    await page.close();

    const text = await open(sessionPath(idle));
    await expect(text.getByTestId('prompt').innerText()).resolves.toBe(`hello ${XSS}`);
    expect(await text.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    await text.close();
  });

  it('approving the Write from the inbox with an edited input: the tool runs once with it, the session shows who approved, the diffs and the result', async () => {
    const inbox = await open('/inbox');
    // A second tab on the inbox, answered later: by then the request is decided.
    const stale = await open('/inbox');
    await inbox.getByTestId('name').fill('alice');
    const card = inbox.locator(`[data-testid=request][data-tool=Write]`, {
      hasText: approved.path,
    });
    await card
      .getByTestId('approve-input')
      .fill(
        JSON.stringify({ file_path: approved.path, content: 'edited by alice, key sk_live_123' }),
      );
    await screenshot(inbox, 'inbox.png');
    await card.getByTestId('approve').click();
    await inbox.waitForURL(/\/sessions\//, { timeout: UI_WAIT_MS });
    await expect(inbox.getByTestId('notice').innerText()).resolves.toMatch(
      /^Approved request \S+ as ui:alice/,
    );

    const result = await approved.response;
    expect(result.toolCalls.map((c) => c.status)).toEqual(['success']);
    // What the person approved runs, as they wrote it (the hooks' edit was in what they were shown).
    expect(writes.get(approved.path)).toEqual(['edited by alice, key sk_live_123']);

    await inbox.goto(`${ui.url}${sessionPath(approved.session)}`);
    const call = inbox.locator('[data-testid=tool-call][data-tool=Write]');
    await expect(call.getByTestId('result').getAttribute('data-status')).resolves.toBe('success');
    await expect(call.getByTestId('ask').getAttribute('data-outcome')).resolves.toBe('approved');
    await expect(call.getByTestId('decided-by').innerText()).resolves.toBe('ui:alice');
    await expect(call.getByTestId('ask').getByTestId('diff').innerText()).resolves.toContain(
      '+ "edited by alice, key sk_live_123"',
    );
    const post = call.locator('[data-testid=dispatch][data-event=PostToolUse]');
    await expect(post.getByTestId('reason').innerText()).resolves.toBe('redacted 1 secret');
    await expect(post.getByTestId('diff').innerText()).resolves.toContain('+ wrote');
    await expect(post.getByTestId('diff').innerText()).resolves.toContain('***');
    await expect(inbox.getByTestId('answer').innerText()).resolves.toContain('reply to');
    await screenshot(inbox, 'session-approved.png');

    // The stale tab: answering the decided request says so, and nothing runs again.
    await stale
      .locator('[data-testid=request]', { hasText: approved.path })
      .getByTestId('approve')
      .click();
    await stale.waitForLoadState();
    await expect(stale.getByTestId('error').innerText()).resolves.toMatch(
      new RegExp(`^request \\S+ \\(Write ${approved.path}\\) was already approved by ui:alice at `),
    );
    await screenshot(stale, 'already-decided.png');
    expect(writes.get(approved.path)).toHaveLength(1);
    await Promise.all([inbox.close(), stale.close()]);
  });

  it('denying with a message: the tool never runs and the session shows the denial and who denied', async () => {
    const page = await open(sessionPath(denied.session));
    await page.getByTestId('name').fill('bob');
    await page.getByTestId('deny-message').fill('not in this repository');
    await page.getByTestId('deny').click();
    await page.waitForURL(/notice=denied/, { timeout: UI_WAIT_MS });
    const result = await denied.response;
    expect(result.toolCalls.map((c) => c.status)).toEqual(['denied']);
    expect(writes.has(denied.path)).toBe(false);
    await page.reload();
    const ask = page.getByTestId('ask');
    await expect(ask.getAttribute('data-outcome')).resolves.toBe('denied');
    await expect(ask.getByTestId('denial').innerText()).resolves.toBe('not in this repository');
    await expect(ask.getByTestId('decided-by').innerText()).resolves.toBe('ui:bob');
    await screenshot(page, 'session-denied.png');
    await page.close();
  });

  it('answering a request that expired at its deadline says so, and the tool never runs', async () => {
    // A definition of its own (its deadline is part of it): its own worker and task queue.
    const expiring: AgentOptions = {
      ...options,
      advanced: {
        ...options.advanced,
        permissionTimeoutMs: 3000,
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('session-ui-expiry') },
      },
    };
    const expiryWorker = await createAgentWorker(expiring);
    const expiryClient = await createAgentClient(expiring);
    try {
      const session = await expiryClient.createSession({ sessionId: `ui-expire-${tag}` });
      const path = `expire-${tag}.md`;
      const response = session.send(`write ${path}`);
      await waitFor(async () => (await session.pendingPermissions()).length === 1, 30_000);
      const page = await open(sessionPath(session));
      expect((await response).toolCalls.map((c) => c.status)).toEqual(['denied']);
      await page.getByTestId('approve').click();
      await page.waitForLoadState();
      await expect(page.getByTestId('error').innerText()).resolves.toMatch(
        new RegExp(
          `^request \\S+ \\(Write ${path}\\) expired at its deadline \\S+Z with no answer: denied$`,
        ),
      );
      await screenshot(page, 'expired.png');
      expect(writes.has(path)).toBe(false);
      await page.close();
      await session.close();
    } finally {
      await expiryClient.close();
      await expiryWorker.shutdown();
    }
  });

  it('a malformed edited input is refused naming what was wrong, and nothing is sent', async () => {
    const page = await open(sessionPath(restarted.session));
    const input = page.getByTestId('approve-input');
    await input.fill('{"file_path": ');
    await page.getByTestId('approve').click();
    await page.waitForLoadState();
    await expect(page.getByTestId('error').innerText()).resolves.toMatch(
      /^the edited input is not valid JSON: .+; nothing was sent$/,
    );
    await screenshot(page, 'bad-input.png');
    await page.goBack();
    await page.reload();
    await page.getByTestId('approve-input').fill('["a list"]');
    await page.getByTestId('approve').click();
    await page.waitForLoadState();
    await expect(page.getByTestId('error').innerText()).resolves.toMatch(
      /must be a JSON object .*got an array; nothing was sent/,
    );
    expect(await restarted.session.pendingPermissions()).toHaveLength(1);
    await page.close();
  });

  it('after a worker restart the page still renders and an approval still runs the tool once', async () => {
    await worker!.shutdown();
    worker = undefined;
    // No worker: the history still renders; the request cannot be answered now.
    const page = await open(sessionPath(restarted.session));
    await expect(page.getByTestId('prompt').innerText()).resolves.toBe(`write ${restarted.path}`);
    await expect(page.getByTestId('request').innerText()).resolves.toMatch(/worker/);
    await expect(page.getByTestId('approve').count()).resolves.toBe(0);
    await screenshot(page, 'no-worker.png');

    worker = await createAgentWorker(options);
    await waitFor(
      async () => {
        await page.reload();
        return (await page.getByTestId('approve').count()) === 1;
      },
      60_000,
      'the new worker to list the request',
    );
    await page.getByTestId('name').fill(''); // no name: the page's own identity
    await page.getByTestId('approve').click();
    await page.waitForURL(/notice=approved/, { timeout: UI_WAIT_MS });
    const result = await restarted.response;
    expect(result.toolCalls.map((c) => c.status)).toEqual(['success']);
    expect(writes.get(restarted.path)).toEqual(['[checked] token sk_live_123 inside']);
    await page.reload();
    await expect(page.getByTestId('decided-by').innerText()).resolves.toBe('ui:test-default');
    await screenshot(page, 'after-restart.png');
    await page.close();
  });

  it('an unknown session is a 404 page naming it', async () => {
    const page = await context.newPage();
    const response = await page.goto(`${ui.url}/sessions/no-such-${tag}`);
    expect(response?.status()).toBe(404);
    await expect(page.getByTestId('error').innerText()).resolves.toBe(
      `no session 'no-such-${tag}' in namespace 'default'`,
    );
    await screenshot(page, 'not-found.png');
    await page.close();
  });
});
