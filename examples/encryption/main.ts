/**
 * An agent whose session history is encrypted with a key from the environment, what that
 * history holds, and a codec server (the one the Temporal Web UI and CLI call) opening it.
 */
import { randomBytes } from 'node:crypto';
import { createAgent } from 'durable-agent-sdk';
import { createCodecServer, keyRingFromEnv } from 'durable-agent-sdk/codec-server';
import { scriptedModel } from 'durable-agent-sdk/testing';

const ring = keyRingFromEnv();
if (!ring || !process.env.TEMPORAL_ADDRESS) {
  console.error(
    'Set TEMPORAL_ADDRESS (e.g. 127.0.0.1:7233) and DURABLE_AGENT_ENCRYPTION_KEYS, e.g.\n' +
      `  export DURABLE_AGENT_ENCRYPTION_KEYS=k1:$(node -e "console.log(crypto.randomBytes(32).toString('base64'))")`,
  );
  process.exit(2);
}

const secret = 'card 4111-1111-1111-1111';
const agent = await createAgent({
  name: 'encryption-example',
  // Scripted, so no API key is needed; with a provider: model: 'gpt-4o-mini'.
  model: scriptedModel(['Noted. I will not repeat it.']),
  // Every payload in history (prompts, replies, tool and hook data) is sealed with the
  // current key of DURABLE_AGENT_ENCRYPTION_KEYS; workers and clients all need the ring.
  encryption: 'env',
  advanced: { temporal: { taskQueue: process.env.EXAMPLE_TASK_QUEUE || 'encryption-example' } },
});

type JsonPayload = { metadata: Record<string, string>; data: string };
const toJson = (payload: { metadata: Record<string, Uint8Array>; data: Uint8Array }) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(payload.data).toString('base64'),
});

/**
 * Every payload of a history, as Temporal's remote codec protocol sends them; search
 * attributes left out (the server indexes them, so no codec ever touches them), and so are
 * workflow patch markers, which Temporal writes itself: a patch's id, in the clear.
 */
function payloadsOf(value: unknown, found: JsonPayload[] = []): JsonPayload[] {
  if (value && typeof value === 'object') {
    const v = value as {
      metadata?: Record<string, Uint8Array>;
      data?: unknown;
      markerName?: unknown;
    };
    if (v.markerName === 'core_patch') return found;
    if (v.metadata && v.data instanceof Uint8Array) {
      found.push(toJson(v as { metadata: Record<string, Uint8Array>; data: Uint8Array }));
    } else {
      for (const [key, child] of Object.entries(value)) {
        if (key !== 'searchAttributes') payloadsOf(child, found);
      }
    }
  }
  return found;
}

const codecToken = randomBytes(24).toString('base64url');
const codec = await createCodecServer({ keys: ring, token: codecToken });
try {
  const session = await agent.createSession();
  console.log(`session ${session.id}`);
  const response = await session.send(`Remember my ${secret}.`);
  console.log(`reply: ${response.text()}`);
  await session.close();

  // The history as the server stores it, with no codec: what the Web UI shows without one.
  const history = await agent.client.temporal.workflow
    .getHandle(`session-${session.id}`)
    .fetchHistory();
  const sealed = payloadsOf(history);
  const encodings = new Set(
    sealed.map((p) => Buffer.from(p.metadata.encoding ?? '', 'base64').toString()),
  );
  const inClear = sealed.some((p) => Buffer.from(p.data, 'base64').includes(secret));
  console.log(
    `history: ${sealed.length} payloads, encodings ${[...encodings].join(', ')}; ` +
      `the secret in the clear: ${inClear ? 'yes' : 'no'}`,
  );

  // What the Web UI does with a codec endpoint: POST the payloads to /decode.
  const decoded = await fetch(`${codec.url}/decode`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${codecToken}` },
    body: JSON.stringify({ payloads: sealed }),
  });
  const opened = ((await decoded.json()) as { payloads: JsonPayload[] }).payloads;
  const index = opened.findIndex((p) => Buffer.from(p.data, 'base64').includes(secret));
  console.log(`the codec server decoded ${opened.length} payloads; the prompt is #${index}`);
  console.log(`sealed prompt payload: ${JSON.stringify(sealed[index])}`);
  console.log(`read it: npx durable-agent inspect ${session.id} --json`);
} finally {
  await codec.close();
  await agent.close();
}
