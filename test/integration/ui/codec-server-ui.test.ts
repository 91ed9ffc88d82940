/**
 * The codec server behind the real Temporal Web UI, in a real headless Chromium: a dev server
 * of the test's own runs its UI with `--ui-codec-endpoint` set to the codec server; an
 * encrypted session is run with a planted secret in its prompt; on the session's page the UI
 * shows the prompt decrypted when the codec server accepts the bearer token, and only
 * ciphertext when it refuses it (401). Screenshots of both land in test-artifacts/ (printed).
 *
 * The token: the Web UI sends `Authorization: Bearer <the signed-in user's access token>`
 * only with "Pass access token" on, to an https endpoint, after an OIDC login, none of which
 * a dev server has. The test's browser adds the header to the requests for the codec server
 * (Playwright's request routing, after the page made them), standing in for that; the CORS
 * preflight, the origin check and the UI's handling of the answers stay the browser's own.
 *
 * Needs Chromium (`/usr/bin/chromium`, or `CHROMIUM_PATH`): `.ci/run` installs it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { type Browser, type Locator, type Page, type Response } from 'playwright-core';
import { artifactsDir, launchChromium, requireChromium } from '../../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodecServer, type CodecServer } from '../../../src/codec-server/index.js';
import { createAgent, HookEvent } from '../../../src/index.js';
import { encryptionCodec } from '../../../src/payloads/encryption.js';
import { freePort, startDevServer, type DevServer } from '../../../src/server/dev-server.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { TEST_KEY_RING } from '../../helpers/encryption.js';
import { uniqueTaskQueue } from '../../helpers/common.js';

/** Screenshots of this test (git ignores test-artifacts/). */
const artifacts = artifactsDir('codec-server-ui');
/** The Temporal payload encoding of sealed payloads, base64 as the UI shows raw payloads. */
const ENCRYPTED_ENCODING_BASE64 = Buffer.from('binary/encrypted').toString('base64');
const UI_WAIT_MS = 30_000;

const SECRET = `planted-${randomUUID()}`;
const TOKEN = randomBytes(24).toString('base64url');

let uiOrigin: string;
let codec: CodecServer;
let server: DevServer;
let browser: Browser;
let workflowId: string;

beforeAll(async () => {
  requireChromium();
  // The UI's port first: the codec server must allow its origin before the UI exists.
  const uiPort = await freePort();
  uiOrigin = `http://127.0.0.1:${uiPort}`;
  codec = await createCodecServer({
    keys: TEST_KEY_RING,
    token: TOKEN,
    corsOrigins: [uiOrigin],
    namespaces: ['default'],
  });
  server = await startDevServer({
    ui: true,
    uiPort,
    uiCodecEndpoint: codec.url,
    log: () => undefined,
  });

  const agent = await createAgent({
    model: scriptedModel(() => 'noted'),
    encryption: TEST_KEY_RING,
    advanced: {
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      temporal: { address: server.address, taskQueue: uniqueTaskQueue('codec-ui') },
    },
  });
  try {
    const session = await agent.createSession({ sessionId: `codec-ui-${randomUUID()}` });
    workflowId = session.workflowId;
    await session.send(`remember ${SECRET}`);
    await session.close();
  } finally {
    await agent.close();
  }
  // The premise: the server holds no plaintext of the prompt.
  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({
      connection,
      dataConverter: { payloadCodecs: [encryptionCodec(TEST_KEY_RING)] },
    });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const bytes = proto.temporal.api.history.v1.History.encode(history).finish();
    expect(Buffer.from(bytes).includes(SECRET)).toBe(false);
  } finally {
    await connection.close();
  }
  // Playwright gives each launch a fresh temporary profile (--user-data-dir).
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await codec?.close();
});

/**
 * Open the session's Event History in a fresh browser context whose requests to the codec
 * server carry `Bearer <token>`, and expand the `send` Update (the prompt's event).
 * @returns the page and the codec server's answers to it.
 */
async function openSendEvent(token: string): Promise<{ page: Page; answers: Response[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 2400 } });
  await context.route(`${codec.url}/**`, (route) =>
    route.continue({
      headers: { ...route.request().headers(), authorization: `Bearer ${token}` },
    }),
  );
  const page = await context.newPage();
  const answers: Response[] = [];
  page.on('response', (response) => {
    if (response.url().startsWith(codec.url)) answers.push(response);
  });
  await page.goto(`${server.uiUrl}/namespaces/default/workflows/${workflowId}`);
  await page.getByTestId('history-tab').click({ timeout: UI_WAIT_MS });
  const send = page
    .getByTestId('event-summary-row')
    .filter({ hasText: 'Update Accepted' })
    .filter({ hasText: /\bsend\b/ });
  await send.getByRole('button', { name: 'Expand details' }).click({ timeout: UI_WAIT_MS });
  return { page, answers };
}

/** Save a screenshot of the page with `shown` scrolled into view. */
async function screenshot(page: Page, shown: Locator, name: string): Promise<void> {
  const path = join(artifacts, name);
  await shown.scrollIntoViewIfNeeded();
  await page.screenshot({ path });
  console.log(`codec-server-ui: screenshot ${path}`);
}

describe('the Web UI through the codec server', () => {
  it('with the bearer token, shows the encrypted prompt decrypted on the session page', async () => {
    const { page, answers } = await openSendEvent(TOKEN);
    const prompt = page.getByText(SECRET).first();
    await prompt.waitFor({ state: 'visible', timeout: UI_WAIT_MS });
    await screenshot(page, prompt, 'decrypted.png');
    const decoded = answers.filter((a) => new URL(a.url()).pathname === '/decode');
    expect(decoded.length).toBeGreaterThan(0);
    for (const answer of decoded) {
      expect(answer.status()).toBe(200);
      expect(answer.headers()['access-control-allow-origin']).toBe(uiOrigin);
    }
    await page.context().close();
  });

  it('with a wrong token, gets 401 and shows only ciphertext', async () => {
    const { page, answers } = await openSendEvent(randomBytes(24).toString('base64url'));
    // The UI says the codec server failed, and falls back to the payloads as stored: the
    // expanded event shows their encoding, base64.
    await page
      .getByText('Codec Server could not connect')
      .filter({ visible: true })
      .first()
      .waitFor({ state: 'visible', timeout: UI_WAIT_MS });
    const sealed = page
      .getByTestId('event-summary-row')
      .locator('xpath=following-sibling::*[1]')
      .getByText(ENCRYPTED_ENCODING_BASE64)
      .first();
    await sealed.waitFor({ state: 'visible', timeout: UI_WAIT_MS });
    await screenshot(page, sealed, 'refused.png');
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.map((a) => a.status())).toEqual(answers.map(() => 401));
    expect(await page.locator('body').innerText()).not.toContain(SECRET);
    expect(await page.content()).not.toContain(SECRET);
    await page.context().close();
  });
});
