/**
 * The run's cluster requires mTLS at its frontend (test/cluster/global-setup.ts; a CA and
 * certificates scripts/cluster.ts makes with openssl). The SDK, its worker processes and
 * `durable-agent` connect with the cluster's CA and client certificate; without the client
 * certificate, with one from another CA, or without TLS they are refused, and the errors
 * say what to set.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Connection, type TLSConfig } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAgent,
  createAgentClient,
  createAgentWorker,
  TemporalConnectionError,
  type AgentOptions,
  type TemporalOptions,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { crashAgentOptions } from '../fixtures/crash-agent.js';
import { uniqueTaskQueue, waitFor } from '../helpers/common.js';
import { count, crashEnv, killAll, startWorkerProcess } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp-dirs.js';
import { clientTlsConfig, connectToCluster, makeCertificates } from '../../scripts/cluster.js';
import { clusterCertificates, clusterState, clusterTlsOptions } from './cluster-env.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

afterEach(async () => {
  await killAll();
});

/** The SDK's options for the cluster: its address, these TLS settings, no TEMPORAL_* env. */
function options(temporal: TemporalOptions, reply = 'over mtls'): AgentOptions {
  return {
    model: scriptedModel([reply]),
    advanced: {
      temporal: {
        address: clusterState().address,
        taskQueue: uniqueTaskQueue('cluster-tls'),
        envConfig: false,
        ...temporal,
      },
    },
  };
}

/** The CA and the server name, no client certificate. */
function caOnly() {
  const { caFile, serverName } = clusterCertificates();
  return { serverCaCertPath: caFile, serverName };
}

/** The error of a start that should fail (whatever it made is closed again). */
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

/**
 * The error of the first call over a client connection with these TLS settings. (A connection
 * made with `Connection.connect` fails with only "Failed to connect before the deadline", and
 * a worker's `NativeConnection` with "connection closed": the first call's error carries the
 * TLS alert.)
 */
async function firstCallError(tls: TLSConfig): Promise<Error & { code?: number }> {
  const cluster = clusterState();
  // No retry interceptor: one attempt, whose error is the alert.
  const connection = Connection.lazy({ address: cluster.address, tls, interceptors: [] });
  try {
    await connection.workflowService.describeNamespace({ namespace: cluster.namespace });
  } catch (error) {
    return error as Error & { code?: number };
  } finally {
    await connection.close();
  }
  throw new Error('the call succeeded without a valid client certificate');
}

/** Run `durable-agent` from the sources, with no TEMPORAL_* settings but its flags. */
async function cli(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('TEMPORAL_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: repoRoot,
    env: { ...env, DEBUG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

describe('a cluster with mTLS at the frontend', () => {
  it('accepts a client that shows the certificate the cluster issued', async () => {
    const cluster = clusterState();
    const connection = await connectToCluster(cluster);
    try {
      const described = await connection.workflowService.describeNamespace({
        namespace: cluster.namespace,
      });
      expect(described.namespaceInfo?.name).toBe(cluster.namespace);
    } finally {
      await connection.close();
    }
  });

  it('refuses a client without a client certificate: the TLS alert says a certificate is required', async () => {
    const tls = clusterCertificates();
    const error = await firstCallError({
      serverNameOverride: tls.serverName,
      serverRootCACertificate: readFileSync(tls.caFile),
    });
    expect(error).toMatchObject({ code: 14 }); // UNAVAILABLE
    expect(error.message).toMatch(/alert certificate required/);
  });

  it('refuses a client certificate signed by another CA: the TLS alert says unknown CA', async () => {
    const tls = clusterCertificates();
    const other = await makeCertificates(tempDir('other-ca'));
    const error = await firstCallError({
      serverNameOverride: tls.serverName,
      serverRootCACertificate: readFileSync(tls.caFile),
      clientCertPair: clientTlsConfig(other).clientCertPair!,
    });
    expect(error).toMatchObject({ code: 14 });
    expect(error.message).toMatch(/alert unknown ca/);
  });

  it('the temporal CLI without the client certificate exits non-zero, saying the server requires mTLS', async () => {
    const cluster = clusterState();
    const cli = process.env.TEMPORAL_CLI_PATH;
    expect(cli, 'TEMPORAL_CLI_PATH (set by the global setup)').toBeTruthy();
    const failed = await run(cli!, [
      'operator',
      'namespace',
      'describe',
      '--namespace',
      cluster.namespace,
      '--address',
      cluster.address,
      '--tls-ca-path',
      cluster.tls!.caFile,
      '--tls-server-name',
      cluster.tls!.serverName,
      '--command-timeout',
      '10s',
    ]).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toContain(
      'TLS handshake failed: server requires mTLS, no valid client certificate was provided',
    );
  });
});

describe('the SDK on the mTLS cluster', () => {
  it('createAgent with advanced.temporal.tls (the CA, the server name, the client certificate) runs a session', async () => {
    const agent = await createAgent(options({ tls: clusterTlsOptions() }));
    try {
      const session = await agent.createSession();
      expect((await session.send('hi')).text()).toBe('over mtls');
      expect(await session.close()).toMatchObject({ closedNow: true });
    } finally {
      await agent.shutdown();
    }
  });

  it('a worker process configured only by TEMPORAL_TLS_* (envconfig) serves a client configured by options', async () => {
    const tls = clusterCertificates();
    const env = crashEnv({ address: clusterState().address });
    await startWorkerProcess(env, 'E', {
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.caFile,
      TEMPORAL_TLS_SERVER_NAME: tls.serverName,
      TEMPORAL_TLS_CLIENT_CERT_PATH: tls.clientCertFile,
      TEMPORAL_TLS_CLIENT_KEY_PATH: tls.clientKeyFile,
    });
    const client = await createAgentClient(crashAgentOptions({ ...env, tls: clusterTlsOptions() }));
    try {
      const session = await client.createSession();
      expect((await session.send('by env')).text()).toBe('echo:by env');
      await session.close();
    } finally {
      await client.close();
    }
    expect(count(env, 'E UserPromptSubmit:start by env')).toBe(1);
    expect(count(env, 'E SessionEnd:end')).toBe(1);
  });

  it('createAgent with the CA but no client certificate fails with TEMPORAL_UNREACHABLE, naming the client certificate options', async () => {
    const error = await startFailure(() => createAgent(options({ tls: caOnly() })));
    expect(error.code).toBe('TEMPORAL_UNREACHABLE');
    expect(error.reason).toBe(
      'the server requires a client certificate (mTLS) and the connection has none: set ' +
        'advanced.temporal.tls.clientCertPath and clientKeyPath (or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)',
    );
    expect(error.message).toContain(`Cannot connect to Temporal at ${clusterState().address}`);
  });

  it('the worker (native connection) and the client without the client certificate are refused with the same reason, before the 10 s connect deadline', async () => {
    for (const start of [createAgentWorker, createAgentClient]) {
      const started = Date.now();
      const error = await startFailure(() => start(options({ tls: caOnly() })));
      // Temporal's client waits out its whole connect deadline (10 s) before it fails; the
      // SDK's own TLS handshake, 1 s into a pending connect, finds the alert sooner.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(error.code).toBe('TEMPORAL_UNREACHABLE');
      expect(error.reason).toMatch(
        /^the server requires a client certificate \(mTLS\) and the connection has none: set advanced\.temporal\.tls\.clientCertPath and clientKeyPath/,
      );
    }
  });

  it('a client certificate from another CA is refused, saying the server refused the client certificate', async () => {
    const other = await makeCertificates(tempDir('other-ca'));
    const error = await startFailure(() =>
      createAgentClient(
        options({
          tls: {
            ...caOnly(),
            clientCertPath: other.clientCertFile,
            clientKeyPath: other.clientKeyFile,
          },
        }),
      ),
    );
    expect(error.code).toBe('TEMPORAL_UNREACHABLE');
    expect(error.reason).toMatch(/^the server refused the client certificate \(.*UNKNOWN_CA.*\)/);
  });

  it("the SDK's client and worker (plain gRPC) are refused with TEMPORAL_UNREACHABLE, saying to turn TLS on", async () => {
    const cluster = clusterState();
    const plain = {
      model: scriptedModel(() => 'never'),
      advanced: {
        temporal: {
          address: cluster.address,
          taskQueue: uniqueTaskQueue('tls'),
          envConfig: false,
        },
      },
    };
    for (const attempt of [() => createAgentClient(plain), () => createAgentWorker(plain)]) {
      const error = await attempt().then(
        async (made) => {
          await ('close' in made ? made.close() : made.shutdown());
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'TEMPORAL_UNREACHABLE' });
      expect((error as Error).message).toContain(cluster.address);
      expect((error as TemporalConnectionError).reason).toMatch(
        /^the server speaks TLS, and the connection does not use it: set advanced\.temporal\.tls/,
      );
    }
  });
});

describe('durable-agent on the mTLS cluster', () => {
  it('`sessions` with --tls-ca-path, --tls-server-name, --tls-cert-path and --tls-key-path lists a session made over mTLS', async () => {
    const agent = await createAgent(options({ tls: clusterTlsOptions() }));
    let sessionId: string;
    try {
      const session = await agent.createSession();
      sessionId = session.id;
      await session.send('listed');
      await session.close();
    } finally {
      await agent.shutdown();
    }
    const tls = clusterCertificates();
    const flags = [
      '--address',
      clusterState().address,
      '--tls-ca-path',
      tls.caFile,
      '--tls-server-name',
      tls.serverName,
      '--tls-cert-path',
      tls.clientCertFile,
      '--tls-key-path',
      tls.clientKeyFile,
    ];
    // Visibility records a closed session a moment after it closes.
    let listed: Array<{ sessionId: string; status: string }> = [];
    await waitFor(
      async () => {
        const result = await cli(['sessions', '--limit', '10', '--json', ...flags]);
        expect(result.code, result.stderr).toBe(0);
        listed = JSON.parse(result.stdout) as typeof listed;
        return listed.some((row) => row.sessionId === sessionId && row.status === 'COMPLETED');
      },
      30_000,
      'the session in the listing',
    );
    expect(listed.find((row) => row.sessionId === sessionId)?.status).toBe('COMPLETED');
  });

  it('`sessions` with the CA but no client certificate exits 1 with one line naming --tls-cert-path', async () => {
    const address = clusterState().address;
    const tls = clusterCertificates();
    const refused = await cli([
      'sessions',
      '--address',
      address,
      '--tls-ca-path',
      tls.caFile,
      '--tls-server-name',
      tls.serverName,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `durable-agent: cannot connect to Temporal at ${address}: the server requires a ` +
        'client certificate (mTLS) and the connection has none: set --tls-cert-path and ' +
        '--tls-key-path (or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)\n',
    );
  });
});
