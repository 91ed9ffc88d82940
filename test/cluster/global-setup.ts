/**
 * One real Temporal cluster for the cluster tests (vitest.cluster.config.ts): PostgreSQL and
 * the four services as processes (scripts/cluster.ts), mTLS at the frontend (a CA and
 * certificates the script makes in `<dir>/tls`), in a folder of its own that is removed at
 * the end. Its address goes to TEMPORAL_ADDRESS (so test/global-setup.ts, which runs next,
 * starts no dev server) and its folder to DURABLE_AGENT_CLUSTER_DIR (for the tests that kill
 * and restart its services, and that read its certificates: test/cluster/cluster-env.ts).
 * Nothing sets TEMPORAL_TLS_*: each test passes the TLS settings it means.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeClusterPort, startCluster, stopCluster } from '../../scripts/cluster.js';

export default async function setup() {
  if (process.env.TEMPORAL_ADDRESS) {
    throw new Error(
      'the cluster tests start their own cluster: unset TEMPORAL_ADDRESS (it names another server)',
    );
  }
  // Mode 0700: when the tests run as root, startCluster opens it (o+x) to PostgreSQL's user.
  const dir = mkdtempSync(join(tmpdir(), 'durable-agent-cluster-'));
  const started = Date.now();
  try {
    const state = await startCluster({
      dir,
      tls: true,
      frontendPort: await freeClusterPort(),
      log: (line) => console.log(`[cluster] ${line}`),
    });
    console.log(`[cluster] up at ${state.address} (mTLS) in ${Date.now() - started} ms`);
    process.env.TEMPORAL_ADDRESS = state.address;
    process.env.DURABLE_AGENT_CLUSTER_DIR = dir;
  } catch (error) {
    await stopCluster(dir, { clean: true }).catch(() => undefined);
    throw error;
  }
  return async () => {
    await stopCluster(dir, { clean: true });
  };
}
