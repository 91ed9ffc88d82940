/**
 * A run rolls over (continue-as-new) long before Temporal's Update limits: the server refuses
 * the 2,001st Update of a run by default (the suite's own server the 501st,
 * `history.maxTotalUpdates`), and one session here takes 50 sends more than that limit, so a
 * session that did not roll over would be refused there.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import {
  rawClient,
  serverMaxUpdatesPerRun,
  temporalAddress,
  uniqueTaskQueue,
} from '../../helpers/common.js';

/** Past the server's Updates of one run. */
const SENDS = serverMaxUpdatesPerRun() + 50;
const agents: Agent[] = [];
afterAll(async () => {
  await Promise.all(agents.map((a) => a.shutdown()));
});

describe(`a session of ${SENDS} sends with no hooks`, () => {
  it('answers every send, in order, none refused, over runs of at most a few hundred Updates', async () => {
    const agent = await createAgent({
      model: scriptedModel((request) =>
        typeof request.prompt === 'string' ? `echo:${request.prompt}` : 'echo',
      ),
      advanced: { temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('updates') } },
    });
    agents.push(agent);
    const session = await agent.createSession();
    const texts: string[] = [];
    const latencies: number[] = [];
    for (let i = 1; i <= SENDS; i++) {
      const t0 = performance.now();
      const response = await session.send(`p${i}`);
      latencies.push(performance.now() - t0);
      expect(response.status).toBe('completed');
      texts.push(response.text());
    }
    expect(texts).toEqual(Array.from({ length: SENDS }, (_, i) => `echo:p${i + 1}`));
    expect((await session.describe()).promptsHandled).toBe(SENDS);
    // One run per 200 Updates (the ready Update and the sends), at most.
    const client = await rawClient();
    let runs = 0;
    for await (const _ of client.workflow.list({ query: `WorkflowId = '${session.workflowId}'` }))
      runs++;
    await client.connection.close();
    expect(runs).toBeGreaterThanOrEqual(Math.ceil((SENDS + 1) / 200));
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    // Timing is reported, not asserted here (a shared machine): bench/hotpath.ts measures it.
    console.log(
      `sends 10-20 median ${median(latencies.slice(9, 20)).toFixed(1)} ms, ` +
        `sends ${SENDS - 10}-${SENDS} median ${median(latencies.slice(SENDS - 11)).toFixed(1)} ms, ${runs} runs`,
    );
    await session.close();
  }, 900_000);
});
