/**
 * `advanced.temporal.versioning`'s default, `'auto'`, on real servers: Worker Deployments on
 * the shared dev server (a session is pinned to its version), unversioned on the time-skipping
 * test server and on a dev server with Worker Deployments disabled (one log line says so), the
 * refusal of an explicit `'deployments'` where the server has none, a client-only agent that
 * would start sessions no worker takes, and `durable-agent dev --versioning` as a real child
 * process of the CLI.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import proto from '@temporalio/proto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createAgent,
  createAgentClient,
  createAgentWorker,
  type AgentLogger,
  type AgentOptions,
} from '../../../src/index.js';
import { createHookTestEnv, scriptedModel } from '../../../src/testing/index.js';
import { startDevServer } from '../../../src/server/dev-server.js';
import { rawClient, temporalAddress, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';
import { runCli, type CliRun } from '../../helpers/cli-process.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const scratch = tempDir('versioning-default');

const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  stops.length = 0;
});

/** A logger that keeps what the SDK says about routing. */
function routingLines(): { logger: AgentLogger; lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string, meta?: Record<string, unknown>) => {
    if (meta?.versioning !== undefined) lines.push(`${level} ${message} ${String(meta.why)}`);
  };
  return {
    lines,
    logger: { debug: keep('DEBUG'), info: keep('INFO'), warn: keep('WARN'), error: keep('ERROR') },
  };
}

function definition(name: string, temporal: Record<string, unknown> = {}): AgentOptions {
  return {
    name,
    version: 'v1',
    model: scriptedModel(() => 'answered'),
    advanced: { temporal: { address: temporalAddress(), ...temporal } },
  };
}

/** The session workflow's versioning info, as Temporal describes it. */
async function versioningInfo(workflowId: string) {
  const raw = await rawClient();
  try {
    const description = await raw.workflow.getHandle(workflowId).describe();
    return description.raw.workflowExecutionInfo?.versioningInfo ?? undefined;
  } finally {
    await raw.connection.close();
  }
}

describe("versioning 'auto' (the default) on a server with Worker Deployments", () => {
  it('routes by Worker Deployments: the worker polls as <name>.<version> and a session is pinned there', async () => {
    const name = `auto-${randomUUID().slice(0, 8)}`;
    const { logger, lines } = routingLines();
    const agent = await createAgent({
      ...definition(name),
      advanced: { logger, logLevel: 'INFO', temporal: { address: temporalAddress() } },
    });
    stops.push(() => agent.shutdown());
    expect(agent.worker.versioning).toBe('deployments');
    // One line, from the worker (the in-process client takes its answer).
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^INFO worker of agent '${name}' version 'v1': routing by Worker Deployments namespace 'default' at \\S+ has Worker Deployments$`,
      ),
    );

    const session = await agent.createSession();
    expect((await session.send('hello')).text()).toBe('answered');
    const info = await versioningInfo(session.workflowId);
    expect(info?.versioningOverride?.pinned?.version).toMatchObject({
      deploymentName: name,
      buildId: 'v1',
    });
    expect(info?.behavior).toBe(
      proto.temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED,
    );
    await session.close();
  }, 60_000);

  it('refuses at once a client-only agent that does not pin while every worker of its queue is versioned', async () => {
    const name = `auto-off-${randomUUID().slice(0, 8)}`;
    const worker = await createAgentWorker(definition(name));
    stops.push(() => worker.shutdown());
    expect(worker.versioning).toBe('deployments');
    const client = await createAgentClient(definition(name, { versioning: 'off' }));
    stops.push(() => client.close());
    // Temporal lists a worker once it polled.
    const raw = await rawClient();
    stops.push(() => raw.connection.close());
    await waitFor(
      async () => {
        const { pollers } = await raw.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: worker.taskQueue },
          taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        });
        return (pollers ?? []).length > 0;
      },
      20_000,
      'the worker listed on its task queue',
    );
    const started = Date.now();
    const error = await client.createSession().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(
      `Every worker of task queue '${worker.taskQueue}' polls as a Worker Deployment version ('${name}.v1')`,
    );
    expect((error as Error).message).toContain("advanced.temporal.versioning 'off' came to 'off'");
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 60_000);
});

describe("versioning 'auto' on the time-skipping test server", () => {
  it('comes to unversioned, says so at INFO, and a session runs', async () => {
    const { logger, lines } = routingLines();
    const env = await createHookTestEnv({
      agent: { model: scriptedModel(() => 'answered'), advanced: { logger, logLevel: 'INFO' } },
    });
    stops.push(() => env.teardown());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^INFO worker of agent 'default' version '[0-9a-f]{16}': unversioned .* the server at \S+ has no Worker Deployments \(Worker Versioning not yet supported in test server\)$/,
    );
    const session = await env.createSession();
    expect((await session.send('hello')).text()).toBe('answered');
    await session.close();
  }, 60_000);

  it("refuses an explicit 'deployments' with a ConfigError naming the server setting", async () => {
    const error = await createHookTestEnv({
      agent: {
        model: scriptedModel(() => 'answered'),
        advanced: { temporal: { versioning: 'deployments' } },
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(
      "advanced.temporal.versioning 'deployments' (worker of agent 'default'",
    );
    expect((error as Error).message).toContain('has no Worker Deployments');
    expect((error as Error).message).toContain('system.enableDeploymentVersions=true');
    expect((error as Error).message).toContain("createHookTestEnv({ server: 'dev' })");
  }, 60_000);
});

describe('a dev server with Worker Deployments disabled (system.enableDeploymentVersions=false)', () => {
  it("comes to unversioned for 'auto' (one WARN line each for worker and client) and refuses 'deployments'", async () => {
    const server = await startDevServer({
      dynamicConfig: { 'system.enableDeploymentVersions': 'false' },
      searchAttributes: false,
    });
    stops.push(() => server.stop());
    const name = `disabled-${randomUUID().slice(0, 8)}`;
    const { logger, lines } = routingLines();
    const on = (versioning?: 'deployments'): AgentOptions => ({
      ...definition(name),
      advanced: {
        logger,
        temporal: { address: server.address, ...(versioning ? { versioning } : {}) },
      },
    });
    const refused = await createAgentWorker(on('deployments')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toContain(
      "namespace 'default' at " +
        `${server.address} has Worker Deployments disabled (Worker Deployment Versions are disabled on this namespace.)`,
    );
    expect((refused as Error).message).toContain('system.enableDeploymentVersions=true');

    const worker = await createAgentWorker(on());
    stops.push(() => worker.shutdown());
    expect(worker.versioning).toBe('off');
    const client = await createAgentClient(on());
    stops.push(() => client.close());
    expect(lines.map((l) => l.split(':')[0])).toEqual([
      `WARN worker of agent '${name}' version 'v1'`,
      `WARN client of agent '${name}' version 'v1'`,
    ]);
    const session = await client.createSession();
    expect((await session.send('hello')).text()).toBe('answered');
    await session.close();
  }, 90_000);
});

/** The CLI from source as a child process, with this process's server address (or none). */
const cli = (args: string[], onStdout?: (text: string) => void) =>
  runCli(args, { env: { TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS }, onStdout });

describe('durable-agent dev --versioning', () => {
  const modulePath = join(scratch, 'versioning-agent.mts');
  writeFileSync(
    modulePath,
    [
      `import { scriptedModel } from '${pathToFileURL(join(repoRoot, 'src', 'testing', 'index.ts')).href}';`,
      "export default { name: 'cli-versioning', version: 'v7', model: scriptedModel(() => 'hi') };",
      '',
    ].join('\n'),
  );

  /** Run `dev` until it prints its routing line, then stop it with SIGINT. */
  async function routingOf(flags: string[]): Promise<{ run: CliRun; routing: string }> {
    let routing: string | undefined;
    const dev = cli(['dev', modulePath, ...flags], (text) => {
      routing ??= /^Routing: .*$/m.exec(text)?.[0];
    });
    try {
      await waitFor(() => routing !== undefined || dev.child.exitCode !== null, 60_000, 'routing');
    } finally {
      dev.child.kill('SIGINT');
    }
    const run = await dev;
    expect(run.code, run.stderr).toBe(0);
    return { run, routing: routing! };
  }

  it("routes by Worker Deployments by default ('auto' on the embedded server)", async () => {
    const { routing } = await routingOf([]);
    expect(routing).toBe(
      "Routing: Worker Deployment version 'cli-versioning.v7' (sessions pinned)",
    );
  }, 90_000);

  it('runs unversioned with --versioning off', async () => {
    const { routing } = await routingOf(['--versioning', 'off']);
    expect(routing).toBe('Routing: unversioned (versioning off)');
  }, 90_000);

  it('refuses a bad value before starting anything: exit 2, one line naming it', async () => {
    const run = await cli(['dev', modulePath, '--versioning', 'pinned']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      "durable-agent: --versioning must be one of auto, deployments, off, got 'pinned'\n",
    );
  }, 30_000);
});
