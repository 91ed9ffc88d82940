/** Regression: a session keeps working with a conversation of several MB (read in pages). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, builtinTools, type Agent } from '../../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const ROUNDS = 3;
const READS_PER_ROUND = 30;
const MAX_OUTPUT_BYTES = 65_536;

const ws = tempDir('edge-big');
// 200 KB: each Read's output is capped at maxToolOutputBytes (64 KiB).
writeFileSync(join(ws, 'big.txt'), ('z'.repeat(99) + '\n').repeat(2000));
const model = scriptedModel((req): ScriptedTurn => {
  if (req.step < ROUNDS && req.promptIndex === 0)
    return {
      toolCalls: Array.from({ length: READS_PER_ROUND }, () => ({
        toolName: 'Read',
        input: { file_path: 'big.txt' },
      })),
    };
  return `end ${req.promptIndex}`;
});
let agent: Agent;
beforeAll(async () => {
  agent = await createAgent({
    model,
    workspaceRoots: [ws],
    tools: builtinTools(),
    advanced: {
      permission: 'bypass-permissions',
      // Room for the whole 6 MB conversation: this test is about reading it in pages.
      maxContextTokens: 10_000_000,
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-big') },
    },
  });
});
afterAll(() => agent?.shutdown());

describe('big conversation', () => {
  it('90 x 64 KiB tool results in one send: the session keeps working', async () => {
    const session = await agent.createSession();
    const first = await session.send('go');
    expect(first.status).toBe('completed');
    expect(first.text()).toBe('end 0');
    expect(first.toolCalls.filter((c) => c.status === 'success')).toHaveLength(
      ROUNDS * READS_PER_ROUND,
    );

    const conversation = await session.conversation();
    const results = conversation.flatMap((m) => (m.role === 'tool' ? m.results : []));
    expect(results).toHaveLength(ROUNDS * READS_PER_ROUND);
    for (const result of results) {
      expect(result.status).toBe('success');
      expect(Buffer.byteLength(result.model)).toBeGreaterThan(MAX_OUTPUT_BYTES - 1024);
    }
    // Far over Temporal's 2 MiB payload limit: only a paged read can return it.
    expect(JSON.stringify(conversation).length).toBeGreaterThan(4 * 1024 * 1024);

    const again = await session.send('again');
    expect(again.text()).toBe('end 1');
    // The model step of the second prompt read the whole conversation.
    const last = model.requests.at(-1);
    expect(last?.promptIndex).toBe(1);
    expect(last?.messages).toHaveLength(conversation.length + 1);
    await session.close();
  }, 180_000);
});
