/**
 * Encryption at rest on a real server: one secret planted everywhere a session writes it (a
 * prompt, a tool output, a PreToolUse modifiedInput, a hook's block reason, an error a hook
 * throws, a permission request, a model reply and an offloaded 5 MB tool output); the raw
 * history as the real Temporal CLI dumps it and every file of the payload store must not
 * hold it with encryption on, and must hold it with encryption off (so the check can fail).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createAgent,
  createAgentClient,
  defineTool,
  HookEvent,
  HookError,
  type Agent,
  type AgentOptions,
  type Session,
} from '../../../src/index.js';
import {
  fileStore,
  PayloadDecryptionError,
  type EncryptionKeyRing,
} from '../../../src/payloads/index.js';
import { createHookTestEnv, scriptedModel, toolCall } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const run = promisify(execFile);
const TEMPORAL_CLI = join(process.cwd(), '.temporal', 'venv', 'bin', 'temporal');
const SECRET = `planted-${randomBytes(12).toString('hex')}`;
const BIG_BYTES = 5 * 1024 * 1024;

/** The secret as plain text and in every base64 alignment it can take inside longer data. */
function secretForms(): string[] {
  const forms = [SECRET];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.from('x'.repeat(shift) + SECRET).toString('base64');
    // Drop the characters that mix in the padding before and the unknown bytes after.
    const start = shift === 0 ? 0 : Math.ceil((shift * 4) / 3);
    forms.push(encoded.slice(start, encoded.length - 4));
  }
  return forms;
}
const FORMS = secretForms();
/** What each planted channel writes, as the history holds it without encryption. */
const CHANNELS = [
  `vault lookup for ${SECRET}`, // the prompt
  `vault says rewritten ${SECRET} = ${SECRET}`, // the tool output, of the modified input
  `rewritten ${SECRET}`, // PreToolUse's modifiedInput
  `blocked because of ${SECRET}`, // UserPromptSubmit's block reason
  `monitor saw ${SECRET}`, // the error UserPromptSubmit threw
  `remember ${SECRET}`, // the permission request's tool input
  `the answer is ${SECRET}`, // the model's reply
];

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Every text reachable from `value`: strings, and what base64 strings decode to, recursively. */
function textsOf(value: unknown, into: string[] = [], depth = 0): string[] {
  if (depth > 6) return into;
  if (typeof value === 'string') {
    into.push(value);
    if (value.length >= 8 && value.length % 4 === 0 && BASE64.test(value)) {
      const decoded = Buffer.from(value, 'base64').toString('latin1');
      textsOf(decoded, into, depth + 1);
      // A JSON payload decoded: its strings may be base64 again (a reference's metadata).
      try {
        textsOf(JSON.parse(Buffer.from(value, 'base64').toString('utf8')), into, depth + 1);
      } catch {
        // not JSON
      }
    }
  } else if (Array.isArray(value)) {
    for (const item of value) textsOf(item, into, depth);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      into.push(key);
      textsOf(item, into, depth);
    }
  }
  return into;
}

/** The texts among `texts` that hold the secret in one of its forms, cut around it. */
function hits(texts: string[]): string[] {
  const found: string[] = [];
  for (const text of texts) {
    const form = FORMS.find((f) => text.includes(f));
    if (form === undefined) continue;
    const at = text.indexOf(form);
    found.push(text.slice(Math.max(0, at - 120), at + form.length + 40));
  }
  return found;
}

/** The raw history as `temporal workflow show -o json` prints it. */
async function rawHistory(workflowId: string): Promise<unknown> {
  const { stdout } = await run(
    TEMPORAL_CLI,
    ['workflow', 'show', '--address', temporalAddress(), '-w', workflowId, '-o', 'json'],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as unknown;
}

/** Every file under `dir`, as latin1 text (so any byte sequence is searchable). */
function storeFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.push(readFileSync(path).toString('latin1'));
    }
  };
  walk(dir);
  return files;
}

function newRing(): EncryptionKeyRing {
  return { currentKeyId: 'test-1', keys: { 'test-1': randomBytes(32).toString('base64') } };
}

/** An agent whose every channel carries the secret when prompted. */
function plantingAgent(payloadDir: string, encryption: AgentOptions['encryption']): AgentOptions {
  const vault = defineTool({
    name: 'Vault',
    description: 'Look a key up',
    kind: 'readonly',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => `vault says ${q} = ${SECRET}`,
  });
  const note = defineTool({
    name: 'Note',
    description: 'Write a note',
    kind: 'write',
    inputSchema: z.object({ text: z.string() }),
    execute: async ({ text }) => `noted ${text.length} characters`,
  });
  const dump = defineTool({
    name: 'Dump',
    description: 'Print a large file',
    kind: 'readonly',
    inputSchema: z.object({}),
    execute: async () => `${SECRET}\n${'z'.repeat(BIG_BYTES)}\n${SECRET}`,
  });
  let prompt = '';
  const model = scriptedModel((request) => {
    // A send's first step carries its prompt; the steps after a tool call go on with it.
    if (typeof request.prompt === 'string') prompt = request.prompt;
    const afterTool = request.messages.at(-1)?.role === 'tool';
    if (prompt.startsWith('vault')) {
      return afterTool ? `the answer is ${SECRET}` : toolCall('Vault', { q: 'which key' });
    }
    if (prompt.startsWith('note')) {
      return afterTool ? 'noted' : toolCall('Note', { text: `remember ${SECRET}` });
    }
    if (prompt.startsWith('dump')) return afterTool ? 'dumped' : toolCall('Dump', {});
    return `plain reply`;
  });
  return {
    model,
    tools: [vault, note, dump],
    encryption,
    advanced: {
      payloadStore: fileStore(payloadDir),
      permission: 'default',
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('encryption') },
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => {
            const prompt = String(input.userPrompt ?? '');
            if (prompt.startsWith('block')) {
              return { action: 'abort', reason: `blocked because of ${SECRET}` };
            }
            if (prompt.startsWith('throw')) throw new RangeError(`monitor saw ${SECRET}`);
            return { action: 'continue' };
          },
        ],
        [HookEvent.PreToolUse]: [
          async (input) =>
            input.toolName === 'Vault'
              ? { action: 'continue', modifiedInput: { q: `rewritten ${SECRET}` } }
              : { action: 'continue' },
        ],
      },
    },
  };
}

interface Planted {
  session: Session;
  outputRef: string | undefined;
  texts: { vault: string; note: string };
  blocked: unknown;
  thrown: unknown;
  pendingInput: unknown;
}

/** Drive one session through every channel. */
async function plant(agent: Agent): Promise<Planted> {
  const session = await agent.createSession();
  const vault = await session.send(`vault lookup for ${SECRET}`);
  const blocked = await session.send('block this').catch((e: unknown) => e);
  const thrown = await session.send('throw now').catch((e: unknown) => e);
  const noting = session.send('note it');
  let requestId = '';
  let pendingInput: unknown;
  await waitFor(
    async () => {
      const [request] = await session.pendingPermissions();
      requestId = request?.requestId ?? '';
      pendingInput = request?.input;
      return requestId !== '';
    },
    20_000,
    'the permission request',
  );
  await session.approve(requestId);
  const note = await noting;
  const dumped = await session.send('dump it');
  const outputRef = dumped.toolCalls[0]?.outputRef;
  return {
    session,
    outputRef,
    texts: { vault: vault.text(), note: note.text() },
    blocked,
    thrown,
    pendingInput,
  };
}

describe('with encryption on', () => {
  const payloadDir = tempDir('enc-on');
  const ring = newRing();
  let agent: Agent;
  let planted: Planted;

  beforeAll(async () => {
    // A key function, as a KMS lookup would be.
    agent = await createAgent(plantingAgent(payloadDir, async () => ring));
    planted = await plant(agent);
  }, 120_000);
  afterAll(() => agent?.shutdown());

  it('leaves the secret nowhere in the raw history, every payload and metadata value base64-decoded', async () => {
    const history = await rawHistory(planted.session.workflowId);
    const texts = textsOf(history);
    // The dump is the real thing: events, payloads and their metadata are there to search.
    expect(texts.includes('binary/encrypted'), 'sealed payloads in the dump').toBe(true);
    expect(texts.length).toBeGreaterThan(100);
    expect(hits(texts)).toEqual([]);
  });

  it('leaves the secret nowhere in the payload store files, which exist', () => {
    const files = storeFiles(payloadDir);
    // The full 5 MB output kept under outputRef is there, sealed.
    expect(files.filter((f) => f.length > BIG_BYTES).length).toBeGreaterThanOrEqual(1);
    expect(hits(files)).toEqual([]);
  });

  it('reads the session back through the public API: replies, errors, the ask, the full output, conversation, description and timeline', async () => {
    const { session } = planted;
    expect(planted.texts.vault).toBe(`the answer is ${SECRET}`);
    expect(planted.texts.note).toBe('noted');
    expect(planted.blocked).toBeInstanceOf(HookError);
    expect(planted.blocked).toMatchObject({
      code: 'HOOK_ABORTED',
      message: `blocked because of ${SECRET}`,
    });
    expect(planted.thrown).toMatchObject({ name: 'RangeError', message: `monitor saw ${SECRET}` });
    expect(planted.pendingInput).toEqual({ text: `remember ${SECRET}` });
    expect(planted.outputRef).toMatch(/^sha256:[0-9a-f]{64}$/);
    const full = await session.readPayload(planted.outputRef!);
    expect(full.length).toBe(BIG_BYTES + 2 * SECRET.length + 2);
    expect(full.startsWith(SECRET)).toBe(true);
    const conversation = JSON.stringify(await session.conversation());
    expect(conversation).toContain(`vault lookup for ${SECRET}`);
    expect(conversation).toContain(`rewritten ${SECRET}`);
    expect(await session.describe()).toMatchObject({ status: 'open', busy: false });
    const timeline = await session.timeline();
    expect(timeline.map((entry) => entry.event)).toContain(HookEvent.PreToolUse);
    const reasons = timeline.map((entry) => JSON.stringify(entry));
    expect(reasons.some((text) => text.includes(`blocked because of ${SECRET}`))).toBe(true);
  });

  it('refuses a client without the key, naming the key id, instead of handing back ciphertext', async () => {
    const options = plantingAgent(payloadDir, undefined);
    const client = await createAgentClient({
      ...options,
      advanced: { ...options.advanced, temporal: { address: temporalAddress() } },
    });
    try {
      const found = await client.session(planted.session.id).catch((e: unknown) => e);
      expect(found).toBeInstanceOf(PayloadDecryptionError);
      expect(found).toMatchObject({ code: 'PAYLOAD_UNDECRYPTABLE', keyId: 'test-1' });
      expect((found as Error).message).toContain("key id 'test-1'");
    } finally {
      await client.close();
    }
  });
});

describe('with encryption off', () => {
  const payloadDir = tempDir('enc-off');
  let agent: Agent;
  let planted: Planted;

  beforeAll(async () => {
    agent = await createAgent(plantingAgent(payloadDir, undefined));
    planted = await plant(agent);
  }, 120_000);
  afterAll(() => agent?.shutdown());

  it('the same search finds the secret in the raw history, from every channel, and in the payload store (the check can fail)', async () => {
    expect(planted.texts.vault).toBe(`the answer is ${SECRET}`);
    const texts = textsOf(await rawHistory(planted.session.workflowId));
    for (const planted of CHANNELS) {
      expect(
        texts.some((text) => text.includes(planted)),
        `history holds '${planted}'`,
      ).toBe(true);
    }
    const files = storeFiles(payloadDir);
    expect(files.some((f) => f.length > BIG_BYTES && f.includes(SECRET))).toBe(true);
  });
});

describe('the hook test env with encryption on', () => {
  it('reads its timeline from the sealed history and replays it at teardown', async () => {
    const env = await createHookTestEnv({
      address: temporalAddress(),
      agent: {
        model: scriptedModel(() => 'ok'),
        encryption: newRing(),
        advanced: {
          hooks: {
            [HookEvent.UserPromptSubmit]: [
              async () => ({ action: 'abort', reason: `blocked because of ${SECRET}` }),
            ],
          },
        },
      },
    });
    try {
      const session = await env.createSession();
      await expect(session.send('x')).rejects.toMatchObject({ code: 'HOOK_ABORTED' });
      const timeline = await env.timeline(session);
      const row = timeline.dispatches.find((d) => d.event === HookEvent.UserPromptSubmit);
      expect(row?.reason).toBe(`blocked because of ${SECRET}`);
      expect(hits(textsOf(await rawHistory(session.workflowId)))).toEqual([]);
    } finally {
      await env.teardown();
    }
  });
});
