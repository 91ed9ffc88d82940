/**
 * The run's cluster (test/cluster/global-setup.ts: mTLS at the frontend) as the cluster tests
 * use it: its folder, its state, and the SDK's TLS settings with its client certificate.
 */
import type { TemporalTlsOptions } from '../../src/index.js';
import { readClusterState, type ClusterState, type ClusterTls } from '../../scripts/cluster.js';

/** The run's cluster folder (DURABLE_AGENT_CLUSTER_DIR). */
export function clusterDir(): string {
  const dir = process.env.DURABLE_AGENT_CLUSTER_DIR;
  if (!dir)
    throw new Error('DURABLE_AGENT_CLUSTER_DIR is not set: run with vitest.cluster.config.ts');
  return dir;
}

/** The run's cluster, as its `cluster.json` records it. */
export function clusterState(): ClusterState {
  return readClusterState(clusterDir());
}

/** The certificate files of the run's cluster. @throws when it runs without TLS. */
export function clusterCertificates(): ClusterTls {
  const { tls } = clusterState();
  if (!tls) throw new Error(`the cluster in ${clusterDir()} runs without TLS: start it with tls`);
  return tls;
}

/**
 * `advanced.temporal.tls` for the run's cluster: its CA, the name on the frontend's
 * certificate, and the client certificate it issued (file paths, so the settings travel to
 * worker processes as JSON).
 */
export function clusterTlsOptions(): TemporalTlsOptions {
  const tls = clusterCertificates();
  return {
    serverCaCertPath: tls.caFile,
    serverName: tls.serverName,
    clientCertPath: tls.clientCertFile,
    clientKeyPath: tls.clientKeyFile,
  };
}
