/**
 * Secured connections (issue 16, item 1) against a real TLS endpoint: a TLS-terminating
 * HTTP/2 proxy (test/helpers/tls-proxy.ts, certificates made by openssl) in front of the shared dev
 * server. A session runs over TLS with the CA option and over mTLS with the client
 * certificate; without the certificate, with a plain connection to TLS, and with TLS to the
 * plain server, the start fails with a TemporalConnectionError whose reason says what to
 * set; an API key reaches the server as `authorization: Bearer <key>`.
 */
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  createAgentClient,
  createAgentWorker,
  TemporalConnectionError,
  type AgentOptions,
  type TemporalOptions,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import {
  makeCertificates,
  startTlsProxy,
  type TestCertificates,
  type TlsProxy,
} from '../../helpers/tls-proxy.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Run `durable-agent` from the sources. */
async function cli(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, cliNodeArgs(args), {
    cwd: repoRoot,
    env: { ...process.env, DEBUG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

let certs: TestCertificates;
let tlsProxy: TlsProxy;
let mtlsProxy: TlsProxy;

beforeAll(async () => {
  certs = makeCertificates();
  tlsProxy = await startTlsProxy({
    upstream: temporalAddress(),
    certPath: certs.serverCertPath,
    keyPath: certs.serverKeyPath,
    caPath: certs.caPath,
  });
  // Its certificate names only temporal.test: connecting by IP needs the server name option.
  mtlsProxy = await startTlsProxy({
    upstream: temporalAddress(),
    certPath: certs.namedCertPath,
    keyPath: certs.namedKeyPath,
    caPath: certs.caPath,
    requestCert: true,
  });
});

afterAll(async () => {
  await tlsProxy?.close();
  await mtlsProxy?.close();
  certs?.remove();
});

function options(temporal: TemporalOptions, reply = 'over tls'): AgentOptions {
  return {
    model: scriptedModel([reply]),
    advanced: { temporal: { taskQueue: uniqueTaskQueue('tls'), envConfig: false, ...temporal } },
  };
}

async function startFailure(
  start: () => Promise<{ shutdown?: () => Promise<unknown>; close?: () => Promise<unknown> }>,
): Promise<TemporalConnectionError> {
  const error = await start().then(
    async (made) => {
      await (made.shutdown ?? made.close)?.call(made);
      throw new Error('expected the start to fail, but it succeeded');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TemporalConnectionError);
  return error as TemporalConnectionError;
}

describe('connections over TLS', () => {
  it('runs a session over TLS with the server CA option', async () => {
    const before = tlsProxy.requests.length;
    const agent = await createAgent(
      options({ address: tlsProxy.address, tls: { serverCaCertPath: certs.caPath } }),
    );
    try {
      const session = await agent.createSession();
      const response = await session.send('hi');
      expect(response.text()).toBe('over tls');
      await session.close();
    } finally {
      await agent.shutdown();
    }
    // The worker's and the client's calls went through the proxy.
    const paths = tlsProxy.requests.slice(before).map((h) => h[':path']);
    expect(paths).toContain(
      '/temporal.api.workflowservice.v1.WorkflowService/PollWorkflowTaskQueue',
    );
    expect(paths).toContain(
      '/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution',
    );
  });

  it('runs a session over mTLS with the client certificate and the server name option', async () => {
    const agent = await createAgent(
      options(
        {
          address: mtlsProxy.address,
          tls: {
            serverCaCertPath: certs.caPath,
            serverName: 'temporal.test',
            clientCertPath: certs.clientCertPath,
            clientKeyPath: certs.clientKeyPath,
          },
        },
        'over mtls',
      ),
    );
    try {
      const session = await agent.createSession();
      expect((await session.send('hi')).text()).toBe('over mtls');
      await session.close();
    } finally {
      await agent.shutdown();
    }
    expect(mtlsProxy.clientNames).toContain('durable-agent-test-client');
  });

  it('refuses a worker without the client certificate, saying mTLS needs one', async () => {
    const error = await startFailure(() =>
      createAgentWorker(
        options({
          address: mtlsProxy.address,
          tls: { serverCaCertPath: certs.caPath, serverName: 'temporal.test' },
        }),
      ),
    );
    expect(error.reason).toBe(
      'the server requires a client certificate (mTLS) and the connection has none: set ' +
        'advanced.temporal.tls.clientCertPath and clientKeyPath (or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)',
    );
    expect(error.message).toContain(`Cannot connect to Temporal at ${mtlsProxy.address}`);
  });

  it('refuses a client without the client certificate, saying mTLS needs one', async () => {
    const error = await startFailure(() =>
      createAgentClient(
        options({
          address: mtlsProxy.address,
          tls: { serverCaCertPath: certs.caPath, serverName: 'temporal.test' },
        }),
      ),
    );
    expect(error.reason).toMatch(/^the server requires a client certificate \(mTLS\)/);
  });

  it('refuses a client certificate from another CA, saying the server refused it', async () => {
    const error = await startFailure(() =>
      createAgentWorker(
        options({
          address: mtlsProxy.address,
          tls: {
            serverCaCertPath: certs.caPath,
            serverName: 'temporal.test',
            clientCertPath: certs.strangerCertPath,
            clientKeyPath: certs.strangerKeyPath,
          },
        }),
      ),
    );
    // Node's TLS server (the proxy) drops the connection without an alert; Temporal's Go
    // server sends one (bad certificate), which the same check reports as a refusal too.
    expect(error.reason).toBe(
      'the server closed the connection right after the TLS handshake: it refused the client ' +
        'certificate? Check that advanced.temporal.tls.clientCertPath and clientKeyPath (or ' +
        'TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH) names a certificate ' +
        'signed by a CA the server trusts',
    );
  });

  it('says to set the server CA when the server certificate is not from a trusted CA', async () => {
    const error = await startFailure(() =>
      createAgentWorker(options({ address: tlsProxy.address, tls: true })),
    );
    expect(error.reason).toMatch(
      /^the server's certificate is not signed by a CA the connection trusts \(.+\): set advanced\.temporal\.tls\.serverCaCertPath/,
    );
  });

  it('says to set the server name when the certificate is for another name', async () => {
    const error = await startFailure(() =>
      createAgentWorker(
        options({
          address: mtlsProxy.address,
          tls: {
            serverCaCertPath: certs.caPath,
            clientCertPath: certs.clientCertPath,
            clientKeyPath: certs.clientKeyPath,
          },
        }),
      ),
    );
    expect(error.reason).toMatch(
      /^the server's certificate is not for '127\.0\.0\.1' .*: set advanced\.temporal\.tls\.serverName/,
    );
  });

  it('says to turn TLS on when a plain connection reaches a TLS server (worker and client)', async () => {
    for (const start of [createAgentWorker, createAgentClient]) {
      const error = await startFailure(() => start(options({ address: tlsProxy.address })));
      expect(error.reason).toMatch(
        /^the server speaks TLS, and the connection does not use it: set advanced\.temporal\.tls/,
      );
    }
  });

  it('says the server does not speak TLS when TLS reaches the plain dev server', async () => {
    const error = await startFailure(() =>
      createAgentWorker(
        options({ address: temporalAddress(), tls: { serverCaCertPath: certs.caPath } }),
      ),
    );
    expect(error.reason).toMatch(
      /^the server does not speak TLS \(a plain server\?\), and the connection uses TLS: unset advanced\.temporal\.tls/,
    );
  });

  it('sends the API key as authorization: Bearer metadata, with the other metadata', async () => {
    const before = tlsProxy.requests.length;
    const temporal: TemporalOptions = {
      address: tlsProxy.address,
      apiKey: 'test-api-key',
      metadata: { 'x-team': 'agents' },
      tls: { serverCaCertPath: certs.caPath },
    };
    const worker = await createAgentWorker(options(temporal));
    const client = await createAgentClient(options(temporal));
    try {
      await client.listSessions({ limit: 1 });
    } finally {
      await client.close();
      await worker.shutdown();
    }
    const seen = tlsProxy.requests.slice(before);
    const polls = seen.filter((h) => String(h[':path']).endsWith('/PollWorkflowTaskQueue'));
    const lists = seen.filter((h) => String(h[':path']).endsWith('/ListWorkflowExecutions'));
    expect(polls.length).toBeGreaterThan(0);
    expect(lists.length).toBe(1);
    for (const headers of [...polls, ...lists]) {
      expect(headers.authorization).toBe('Bearer test-api-key');
      expect(headers['x-team']).toBe('agents');
    }
  });

  it("durable-agent lists sessions over mTLS with the temporal CLI's flags, and says what to set without them", async () => {
    const ok = await cli([
      'sessions',
      '--limit',
      '1',
      '--address',
      mtlsProxy.address,
      '--tls-ca-path',
      certs.caPath,
      '--tls-server-name',
      'temporal.test',
      '--tls-cert-path',
      certs.clientCertPath,
      '--tls-key-path',
      certs.clientKeyPath,
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^(SESSION|no sessions)/);
    const refused = await cli([
      'sessions',
      '--address',
      mtlsProxy.address,
      '--tls-ca-path',
      certs.caPath,
      '--tls-server-name',
      'temporal.test',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `durable-agent: cannot connect to Temporal at ${mtlsProxy.address}: the server requires a ` +
        'client certificate (mTLS) and the connection has none: set --tls-cert-path and ' +
        '--tls-key-path (or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)',
    );
  });
});
