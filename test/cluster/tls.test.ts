/**
 * A cluster whose frontend requires mTLS (scripts/cluster.ts --tls: a CA and certificates the
 * script makes with openssl), started here for this file next to the run's plain cluster.
 * What a client without the cluster's client certificate gets.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Connection, type TLSConfig } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient, createAgentWorker } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { uniqueTaskQueue } from '../helpers.js';
import {
  clientTlsConfig,
  connectToCluster,
  freeClusterPort,
  makeCertificates,
  startCluster,
  stopCluster,
  type ClusterState,
} from '../../scripts/cluster.js';

const run = promisify(execFile);
let cluster: ClusterState;
let dir: string;

beforeAll(async () => {
  // Beside the run's cluster (outside the run's private temporary folder, which PostgreSQL,
  // running as user postgres under root, could not enter).
  const parent = dirname(process.env.DURABLE_AGENT_CLUSTER_DIR ?? '/tmp/x');
  dir = mkdtempSync(join(parent, 'durable-agent-cluster-tls-'));
  chmodSync(dir, 0o755);
  cluster = await startCluster({ dir, tls: true, frontendPort: await freeClusterPort() });
});

afterAll(async () => {
  await stopCluster(dir, { clean: true });
});

/**
 * The error of the first call over a client connection with these TLS settings. (A connection
 * made with `Connection.connect` fails with only "Failed to connect before the deadline", and
 * a worker's `NativeConnection` with "connection closed": the first call's error carries the
 * TLS alert.)
 */
async function firstCallError(tls: TLSConfig): Promise<Error & { code?: number }> {
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

describe('a cluster with mTLS at the frontend', () => {
  it('accepts a client that shows the certificate the cluster issued', async () => {
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
    const error = await firstCallError({
      serverNameOverride: cluster.tls!.serverName,
      serverRootCACertificate: readFileSync(cluster.tls!.caFile),
    });
    expect(error).toMatchObject({ code: 14 }); // UNAVAILABLE
    expect(error.message).toMatch(/alert certificate required/);
  });

  it('refuses a client certificate signed by another CA: the TLS alert says unknown CA', async () => {
    const other = await makeCertificates(mkdtempSync(join(dir, 'other-ca-')));
    const error = await firstCallError({
      serverNameOverride: cluster.tls!.serverName,
      serverRootCACertificate: readFileSync(cluster.tls!.caFile),
      clientCertPair: clientTlsConfig(other).clientCertPair!,
    });
    expect(error).toMatchObject({ code: 14 });
    expect(error.message).toMatch(/alert unknown ca/);
  });

  it('the temporal CLI without the client certificate exits non-zero, saying the server requires mTLS', async () => {
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

  it("the SDK's client and worker (plain gRPC) are refused with TEMPORAL_UNREACHABLE, saying it connects without TLS", async () => {
    const options = {
      model: scriptedModel(() => 'never'),
      advanced: { temporal: { address: cluster.address, taskQueue: uniqueTaskQueue('tls') } },
    };
    for (const attempt of [() => createAgentClient(options), () => createAgentWorker(options)]) {
      const error = await attempt().then(
        async (made) => {
          await ('close' in made ? made.close() : made.shutdown());
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'TEMPORAL_UNREACHABLE' });
      expect((error as Error).message).toContain(cluster.address);
      expect((error as Error).message).toMatch(/without TLS/);
    }
  });
});
