/** Regression: abort() closes the provider's HTTP request quickly (model heartbeat 250 ms). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers.js';

let agent: Agent | undefined;
let requestedAt: number | undefined;
let closedAt: number | undefined;
/** A provider that never answers: requests stay open until the client closes them. */
const server = createServer((req, res) => {
  requestedAt ??= Date.now();
  req.resume();
  res.on('close', () => (closedAt ??= Date.now()));
});
afterAll(async () => {
  await agent?.shutdown();
  server.closeAllConnections();
  server.close();
});

describe('model abort latency', () => {
  it('the provider HTTP request is closed within 1.5 s of abort()', async () => {
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
    await waitFor(() => requestedAt !== undefined, 10_000, 'the provider request');
    const t0 = Date.now();
    await session.abort();
    const resp = await p;
    await waitFor(() => closedAt !== undefined, 10_000, 'the provider request to close');
    await session.close();
    expect(resp.status).toBe('aborted');
    expect(closedAt! - t0).toBeLessThan(1500);
  }, 60_000);
});
