/**
 * Operating a cluster from a shell with scripts/cluster.ts, as the README tells an operator:
 * `restart <service>` on the run's cluster, and `eval "$(... start ...)"` of a second cluster
 * in a `mktemp -d` folder (mode 0700, owned by whoever runs it: root here, while PostgreSQL
 * runs as `postgres`) whose path holds spaces. Each command runs as a real child process.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createAgent, type AgentOptions, type TemporalOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { uniqueTaskQueue } from '../helpers/common.js';
import { tempDir } from '../helpers/temp-dirs.js';
import { freeClusterPort, readClusterState, stopCluster } from '../../scripts/cluster.js';
import { clusterDir, clusterState, clusterTlsOptions } from './cluster-env.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const clusterScript = join(repoRoot, 'scripts', 'cluster.ts');
const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');

/** This process's environment without the TEMPORAL_* settings of the run's cluster. */
function shellEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('TEMPORAL_')),
  );
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function portListens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** One session on the cluster at `temporal`, with a scripted reply; the reply it got. */
async function sessionReply(temporal: TemporalOptions, reply: string): Promise<string> {
  const options: AgentOptions = {
    model: scriptedModel([reply]),
    advanced: {
      temporal: { taskQueue: uniqueTaskQueue('cluster-operate'), envConfig: false, ...temporal },
    },
  };
  const agent = await createAgent(options);
  try {
    const session = await agent.createSession();
    const text = (await session.send('hi')).text();
    await session.close();
    return text;
  } finally {
    await agent.shutdown();
  }
}

/** Whether process `pid` has exited: no such process, or a zombie not yet reaped. */
function exited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // reaped meanwhile
  }
}

describe('scripts/cluster.ts from a shell', () => {
  it('`restart matching` stops the matching service, starts it again on the same ports, and the cluster serves a session after', async () => {
    const before = clusterState();
    const oldPid = before.pids.matching;
    expect(oldPid).toBeDefined();
    const { stderr } = await run(
      tsx,
      [clusterScript, 'restart', 'matching', '--dir', clusterDir()],
      {
        cwd: repoRoot,
      },
    );
    expect(stderr).toMatch(/matching restarted \(pid \d+, was \d+\) and the cluster serves/);
    const after = readClusterState(clusterDir());
    expect(after.pids.matching).toBeDefined();
    expect(after.pids.matching).not.toBe(oldPid);
    expect(after.ports).toEqual(before.ports);
    // The old process is gone: signal 0 to it fails, or it is a zombie its parent (the
    // process that started the cluster, this run's global setup) has not reaped yet.
    expect(exited(oldPid!)).toBe(true);
    expect(
      await sessionReply(
        { address: after.address, tls: clusterTlsOptions() },
        'served after the restart',
      ),
    ).toBe('served after the restart');
  });

  it('`restart` without a known service exits 1 naming the services', async () => {
    const failed = await run(tsx, [clusterScript, 'restart', 'scheduler', '--dir', clusterDir()], {
      cwd: repoRoot,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(
      "restart needs the service to restart, one of history, matching, frontend, worker, got 'scheduler'",
    );
  });

  it('`eval "$(... start --tls --dir "$(mktemp -d)")"` in bash: a 0700 folder with spaces in its path, the exports set, a session runs with them', async () => {
    const port = await freeClusterPort();
    // Bash starts the cluster the way the README says, then prints what the eval set.
    const script = [
      'set -eu',
      `d=$(mktemp -d "$TMPDIR/durable agent 'cluster'.XXXXXX")`,
      'echo "dir=$d"',
      'echo "mode=$(stat -c %a "$d")"',
      `eval "$("$TSX" "$SCRIPT" start --tls --dir "$d" --port ${port})"`,
      'for v in TEMPORAL_ADDRESS TEMPORAL_NAMESPACE TEMPORAL_TLS_SERVER_CA_CERT_PATH \\',
      '  TEMPORAL_TLS_CLIENT_CERT_PATH TEMPORAL_TLS_CLIENT_KEY_PATH TEMPORAL_TLS_SERVER_NAME; do',
      '  echo "$v=$(printenv "$v")"',
      'done',
    ].join('\n');
    let dir: string | undefined;
    try {
      const result = await run('bash', ['-c', script], {
        cwd: repoRoot,
        env: { ...shellEnv(), TMPDIR: '/tmp', TSX: tsx, SCRIPT: clusterScript },
      }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
        dir = /^dir=(.*)$/m.exec(error.stdout ?? '')?.[1];
        throw new Error(`bash failed: ${error.message}\n${error.stderr ?? ''}`, { cause: error });
      });
      const vars = Object.fromEntries(
        result.stdout
          .trim()
          .split('\n')
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      dir = vars.dir;
      expect(dir).toContain("durable agent 'cluster'.");
      expect(vars.mode).toBe('700');
      expect(vars, `start's stderr:\n${result.stderr}`).toMatchObject({
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir!, 'tls', 'ca.pem'),
        TEMPORAL_TLS_CLIENT_CERT_PATH: join(dir!, 'tls', 'client.pem'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: join(dir!, 'tls', 'client.key'),
        TEMPORAL_TLS_SERVER_NAME: 'localhost',
      });
      expect(readFileSync(vars.TEMPORAL_TLS_SERVER_CA_CERT_PATH!, 'utf8')).toContain(
        'BEGIN CERTIFICATE',
      );
      expect(
        await sessionReply(
          {
            address: vars.TEMPORAL_ADDRESS!,
            namespace: vars.TEMPORAL_NAMESPACE!,
            tls: {
              serverCaCertPath: vars.TEMPORAL_TLS_SERVER_CA_CERT_PATH!,
              serverName: vars.TEMPORAL_TLS_SERVER_NAME!,
              clientCertPath: vars.TEMPORAL_TLS_CLIENT_CERT_PATH!,
              clientKeyPath: vars.TEMPORAL_TLS_CLIENT_KEY_PATH!,
            },
          },
          'on the mktemp cluster',
        ),
      ).toBe('on the mktemp cluster');
    } finally {
      if (dir) {
        await stopCluster(dir, { clean: true });
        expect(existsSync(dir)).toBe(false);
      }
    }
  }, 300_000);
  it('`start` under a folder PostgreSQL cannot pass (0700, owned by root) exits 1 naming that folder and `chmod o+x`, and leaves nothing running', async () => {
    const closed = tempDir('cluster-closed'); // mode 0700, owned by this (root) process
    chmodSync(closed, 0o700);
    const dir = join(closed, 'cluster');
    const port = await freeClusterPort();
    const failed = await run(tsx, [clusterScript, 'start', '--dir', dir, '--port', String(port)], {
      cwd: repoRoot,
      env: shellEnv(),
    }).then(
      () => undefined,
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    try {
      expect(failed?.code).toBe(1);
      expect(failed?.stdout).toBe('');
      expect(failed?.stderr).toContain(
        `PostgreSQL (user postgres) cannot reach ${dir}: ${closed} is not searchable by others (mode 700)`,
      );
      expect(failed?.stderr).toContain(`chmod o+x ${closed}`);
      expect(readClusterState(dir).pids).toEqual({});
      expect(await portListens(port - 1801)).toBe(false);
    } finally {
      await stopCluster(dir, { clean: true });
    }
  });
});
