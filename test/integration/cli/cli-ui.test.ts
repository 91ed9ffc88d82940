/**
 * `durable-agent ui` as a real child process against the test run's Temporal server: it
 * prints its address with the token of `DURABLE_AGENT_UI_TOKEN`, refuses requests without
 * it, reads an encrypted session with the key ring of `DURABLE_AGENT_ENCRYPTION_KEYS` (and
 * says which key it lacks without it), and stops on SIGTERM with exit 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { TEST_KEY, TEST_KEY_ID, keysVariable, TEST_KEY_RING } from '../../helpers/encryption.js';
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const SECRET = `planted-${randomUUID()}`;
const TOKEN = randomBytes(24).toString('base64url');
const taskQueue = uniqueTaskQueue('cli-ui');
let sessionId: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  const agent = await createAgent({
    model: scriptedModel(() => 'noted'),
    encryption: TEST_KEY_RING,
    advanced: {
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      temporal: { address: temporalAddress(), taskQueue },
    },
  });
  try {
    const session = await agent.createSession({ sessionId: `cli-ui-${randomUUID()}` });
    sessionId = session.id;
    await session.send(`remember ${SECRET}`);
    await session.close();
  } finally {
    await agent.close();
  }
}, 120_000);

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Start `durable-agent ui` and wait for the address it prints. */
async function startUi(keys: string | undefined) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: temporalAddress(),
    DURABLE_AGENT_UI_TOKEN: TOKEN,
    DURABLE_AGENT_ENCRYPTION_KEYS: keys,
  };
  if (keys === undefined) delete env.DURABLE_AGENT_ENCRYPTION_KEYS;
  const child = spawn(
    process.execPath,
    cliNodeArgs(['ui', '--port', '0', '--task-queue', taskQueue]),
    { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  await waitFor(() => /session page: \S+/.test(stdout) || child.exitCode !== null, 60_000, 'ui');
  const loginUrl = /session page: (\S+)/.exec(stdout)?.[1];
  expect(loginUrl, stderr).toBeDefined();
  return { child, loginUrl: loginUrl!, base: new URL(loginUrl!).origin, exited, out: () => stdout };
}

describe('durable-agent ui', () => {
  it('prints its address with the token, refuses a request without it, shows the encrypted session decrypted, and stops on SIGTERM', async () => {
    const ui = await startUi(keysVariable([TEST_KEY_ID, TEST_KEY]));
    expect(ui.loginUrl).toBe(`${ui.base}/?token=${TOKEN}`);
    expect(new URL(ui.base).hostname).toBe('127.0.0.1');
    expect((await fetch(`${ui.base}/sessions/${sessionId}`)).status).toBe(401);
    const page = await fetch(`${ui.base}/sessions/${sessionId}`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    const html = await page.text();
    expect(page.status, html).toBe(200);
    expect(html).toContain(`remember ${SECRET}`);
    const list = await (
      await fetch(`${ui.base}/`, { headers: { Authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(list).toContain(`data-session="${sessionId}"`);
    ui.child.kill('SIGTERM');
    expect(await ui.exited).toBe(0);
  });

  it('without the key ring, the session page says it cannot read the payloads, naming the key id', async () => {
    const ui = await startUi(undefined);
    const page = await fetch(`${ui.base}/sessions/${sessionId}`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    const html = await page.text();
    expect(page.status, html).toBe(422);
    expect(html).toContain('cannot read its payloads');
    expect(html).toContain(TEST_KEY_ID);
    expect(html).not.toContain(SECRET);
    ui.child.kill('SIGTERM');
    expect(await ui.exited).toBe(0);
  });
});
