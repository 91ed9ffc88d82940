/**
 * The counts the README and docs/**\/*.md give for what a send writes to the session's
 * Temporal history are what a real session writes: three sessions on this run's server
 * (`TEMPORAL_ADDRESS`, test/global-setup.ts) with the scripted model count the events one
 * send adds with no hooks and no tool, with one hook event that has a callback, and with one
 * tool call. Any sentence of a page about a send that gives "N history events" must give the
 * count for the tool calls and hooks it names (test/helpers/doc-claims.ts,
 * `sendEventsClaims`). The defaults and limits the docs state are checked without a server,
 * in test/unit/repo/docs-defaults.test.ts.
 *
 * A send is counted after the session's first: the first hook decision of a session also
 * upserts the DurableAgentLastDecision search attribute (one more event, once).
 *
 * The pages come from the filesystem; DOC_BLOCKS_ONLY (a comma-separated list of pages,
 * e.g. `DOC_BLOCKS_ONLY=docs/testing-hooks.md`) checks some of them only.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HookEvent, type HookMap } from '../../../src/index.js';
import {
  createHookTestEnv,
  scriptedModel,
  scriptedTool,
  toolCall,
  type ScriptedTurn,
} from '../../../src/testing/index.js';
import { claimErrors, sendEventsClaims, type SendEvents } from '../../helpers/doc-claims.js';
import { readDocPages } from '../../helpers/doc-blocks.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

const allow = async () => ({ action: 'continue' as const });

/** What each send adds to the history: the first send, then the second. */
async function eventsPerSend(turns: ScriptedTurn[], hooks: HookMap): Promise<[number, number]> {
  const echo = scriptedTool({ name: 'Echo', results: ['echoed'] });
  const env = await createHookTestEnv({
    address: process.env.TEMPORAL_ADDRESS!,
    agent: { model: scriptedModel(turns), tools: [echo], advanced: { hooks } },
  });
  try {
    const session = await env.createSession();
    const length = async () => (await env.history(session)).events?.length ?? 0;
    const start = await length();
    await session.send('one');
    const afterFirst = await length();
    await session.send('two');
    const afterSecond = await length();
    await session.close();
    return [afterFirst - start, afterSecond - afterFirst];
  } finally {
    await env.teardown();
  }
}

describe('history events per send', () => {
  it('the docs give the counts a real session writes', async () => {
    const [, base] = await eventsPerSend(['one', 'two'], {});
    const [firstWithHook, withHook] = await eventsPerSend(['one', 'two'], {
      [HookEvent.UserPromptSubmit]: [allow],
    });
    const [, withTool] = await eventsPerSend(
      [toolCall('Echo', { text: 'a' }), 'one', toolCall('Echo', { text: 'b' }), 'two'],
      {},
    );
    const measured: SendEvents = {
      base,
      perHookEvent: withHook - base,
      perToolCall: withTool - base,
    };
    // The first decision's search-attribute upsert, once a session.
    expect(firstWithHook).toBe(withHook + 1);

    const pages = readDocPages(repo);
    const source = `measured: ${JSON.stringify(measured)}`;
    const errors = claimErrors(pages, sendEventsClaims(measured, source));
    if (errors.length > 0) throw new Error(`${errors.length} claim(s):\n${errors.join('\n')}`);
  }, 60_000);
});
