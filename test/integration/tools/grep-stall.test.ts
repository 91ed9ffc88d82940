/**
 * Issue 15, item 6: a Grep whose regular expression backtracks catastrophically does not
 * stall its worker. While one session's Grep is stuck in `(a+)+$`, another session's abort
 * still reaches its hook callback, and the Grep ends at the tool's budget with a clear
 * error. Real Temporal server; the agent's worker runs in this process, so a blocked event
 * loop would stop the abort as well as the callback. Checked as an order (each abort reaches
 * its callback while the Grep is still running), not a latency: `npm run bench:grep`
 * measures the abort latency beside an idle worker and one running the old, blocking Grep.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  builtinTools,
  createAgent,
  defineTool,
  Grep,
  HookEvent,
  type Agent,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { runTool } from '../../../src/tools/run-tool.js';
import { gate, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';
import { makeContext } from '../../unit/tools/fixtures.js';

const TOOL_BUDGET_MS = 8_000;
const ABORTS = 3;

const ws = tempDir('edge-grep-stall');
// `(a+)+$` never finishes on this line: 2^40 ways to split the a's before it fails at the b.
writeFileSync(join(ws, 'evil.txt'), `${'a'.repeat(40)}b\n`);

let agent: Agent | undefined;
afterAll(() => agent?.shutdown());

describe('a catastrophic Grep does not stall the worker', () => {
  it("another session's abort reaches its callback while the Grep runs; the Grep stops at its budget", async () => {
    // Grep itself, observed: whether a call is running.
    let grepRunning = false;
    const observedGrep = defineTool({
      ...Grep,
      execute: async (input, context) => {
        grepRunning = true;
        try {
          return await Grep.execute(input, context);
        } finally {
          grepRunning = false;
        }
      },
    });
    const entered: Array<ReturnType<typeof gate>> = [];
    /** Per abort that reached its callback: whether the Grep was running at that moment. */
    const grepRanAtAbort: boolean[] = [];
    agent = await createAgent({
      model: scriptedModel((request) => {
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return `grep said: ${last.results[0]?.model}`;
        return request.prompt === 'grep'
          ? { toolCalls: [{ toolName: 'Grep', input: { pattern: '(a+)+$' } }] }
          : 'ok';
      }),
      workspaceRoots: [ws],
      tools: [...builtinTools().filter((t) => t.name !== 'Grep'), observedGrep],
      advanced: {
        permission: 'bypass-permissions',
        toolTimeoutMs: TOOL_BUDGET_MS,
        hooks: {
          [HookEvent.UserPromptSubmit]: [
            async (input) => {
              if (input.userPrompt !== 'wait') return { action: 'continue' };
              const signal = input.abortSignal!;
              entered.at(-1)!.open();
              await new Promise((resolve) =>
                signal.addEventListener('abort', resolve, { once: true }),
              );
              grepRanAtAbort.push(grepRunning);
              return { action: 'continue' };
            },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-grep-stall') },
      },
    });
    // A search thread ready in this process, so the Grep below is in its regex at once.
    await runTool(Grep, { pattern: 'b$' }, makeContext([ws]));

    const grepping = await agent.createSession();
    const other = await agent.createSession();
    const grepStarted = performance.now();
    const grepDone = grepping.send('grep');
    await waitFor(() => grepRunning, 15_000, 'the Grep call to start');

    for (let i = 0; i < ABORTS; i++) {
      entered.push(gate());
      const pending = other.send('wait');
      await entered.at(-1)!.opened;
      await other.abort(new Error('abort during grep'));
      await waitFor(() => grepRanAtAbort.length === i + 1, 15_000, 'the callback to see its abort');
      expect((await pending).status).toBe('aborted');
    }
    // Each callback saw its abort while the Grep was still stuck in its regex.
    expect(grepRanAtAbort).toEqual(Array.from({ length: ABORTS }, () => true));

    const response = await grepDone;
    const grepMs = performance.now() - grepStarted;
    expect(response.toolCalls.map((c) => c.status)).toEqual(['error']);
    expect(response.text()).toContain(
      `grep said: Grep stopped at its time budget of ${TOOL_BUDGET_MS} ms, while searching evil.txt`,
    );
    expect(grepMs).toBeGreaterThanOrEqual(TOOL_BUDGET_MS);
    await Promise.all([grepping.close(), other.close()]);
  }, 90_000);
});
