/**
 * Regression: abort() during a model step closes the provider's HTTP request. How fast it
 * does (the model step heartbeats every 250 ms) is measured by `npm run bench`
 * (bench/hooks.ts, "Model abort latency"), not asserted here.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';

let agent: Agent | undefined;
let requests = 0;
let closed = 0;
/** A provider that never answers: requests stay open until the client closes them. */
const server = createServer((req, res) => {
  requests++;
  req.resume();
  res.on('close', () => closed++);
});
afterAll(async () => {
  await agent?.shutdown();
  server.closeAllConnections();
  server.close();
});

describe('model abort', () => {
  it("abort() during a model step closes the provider's HTTP request and resolves send() as aborted", async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    agent = await createAgent({
      model: 'm',
      apiKey: 'k',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      advanced: {
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-mabort') },
      },
    });
    const session = await agent.createSession();
    const p = session.send('hi');
    await waitFor(() => requests === 1, 10_000, 'the provider request');
    expect(closed).toBe(0);
    const reason = new Error('stop the model');
    expect(await session.abort(reason)).toBe(true);
    const resp = await p;
    expect(resp.status).toBe('aborted');
    expect(resp.abortReason).toBe(reason);
    await waitFor(() => closed === 1, 10_000, 'the provider request to close');
    // Aborted, not retried: no second request reached the provider.
    expect(requests).toBe(1);
    await session.close();
  }, 60_000);
});
