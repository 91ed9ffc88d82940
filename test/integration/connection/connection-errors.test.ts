/**
 * Connection mistakes reach the user as one TemporalConnectionError naming the address, the
 * namespace and what to check, not as the transport's own error (issue 13, item 6): a
 * closed loopback port and a namespace the shared server does not have, for the client,
 * the worker and the CLI.
 */
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  createAgent,
  createAgentClient,
  createAgentWorker,
  TemporalConnectionError,
  type AgentOptions,
} from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function options(address: string, namespace?: string): AgentOptions {
  return {
    model: scriptedModel(['unused']),
    advanced: {
      temporal: {
        address,
        taskQueue: uniqueTaskQueue('conn'),
        ...(namespace !== undefined ? { namespace } : {}),
      },
    },
  };
}

async function failure(
  start: () => Promise<{ shutdown?: () => Promise<unknown>; close?: () => Promise<unknown> }>,
): Promise<unknown> {
  return start().then(
    async (made) => {
      await (made.shutdown ?? made.close)?.call(made);
      throw new Error('expected the start to fail, but it succeeded');
    },
    (e: unknown) => e,
  );
}

function expectUnreachable(error: unknown, address: string): void {
  expect(error).toBeInstanceOf(TemporalConnectionError);
  const e = error as TemporalConnectionError;
  expect(e.code).toBe('TEMPORAL_UNREACHABLE');
  expect(e.address).toBe(address);
  expect(e.namespace).toBe('default');
  expect(e.reason).toBe('connection refused (nothing listens on that port)');
  expect(e.message).toContain(`Cannot reach Temporal at ${address} (namespace 'default')`);
  expect(e.message).toContain('advanced.temporal.address or TEMPORAL_ADDRESS');
  expect(e.message).not.toMatch(/tonic|transport::Error|deadline/);
}

function expectNoNamespace(error: unknown, namespace: string): void {
  expect(error).toBeInstanceOf(TemporalConnectionError);
  const e = error as TemporalConnectionError;
  expect(e.code).toBe('NAMESPACE_NOT_FOUND');
  expect(e.namespace).toBe(namespace);
  expect(e.address).toBe(temporalAddress());
  expect(e.message).toContain(
    `Namespace '${namespace}' not found on the Temporal server at ${temporalAddress()}`,
  );
  expect(e.message).toContain('advanced.temporal.namespace or TEMPORAL_NAMESPACE');
  // Neither protobuf bytes nor the core's status dump.
  expect(e.message).not.toMatch(/\\x|Status \{|MetadataMap/);
}

describe('a closed loopback port', () => {
  it('createAgent (its worker connects first) rejects with TEMPORAL_UNREACHABLE at once', async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    const started = performance.now();
    expectUnreachable(await failure(() => createAgent(options(address))), address);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('createAgentWorker rejects with TEMPORAL_UNREACHABLE', async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    expectUnreachable(await failure(() => createAgentWorker(options(address))), address);
  });

  it("createAgentClient rejects with TEMPORAL_UNREACHABLE before the client's 10 s connect deadline", async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    const started = performance.now();
    expectUnreachable(await failure(() => createAgentClient(options(address))), address);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('an address with a scheme', () => {
  for (const [name, create] of [
    ['createAgent', createAgent],
    ['createAgentWorker', createAgentWorker],
    ['createAgentClient', createAgentClient],
  ] as const) {
    it(`${name} rejects with TEMPORAL_UNREACHABLE saying to drop the scheme`, async () => {
      const address = `http://${temporalAddress()}`;
      const error = await failure(() => create(options(address)));
      expect(error).toBeInstanceOf(TemporalConnectionError);
      expect(error).toMatchObject({ code: 'TEMPORAL_UNREACHABLE', address });
      expect((error as Error).message).toContain(`drop the scheme: '${temporalAddress()}'`);
    });
  }
});

describe('a namespace the server does not have', () => {
  const namespace = `no-such-namespace-${process.pid}`;

  it('createAgent rejects with NAMESPACE_NOT_FOUND naming the namespace and the address', async () => {
    expectNoNamespace(
      await failure(() => createAgent(options(temporalAddress(), namespace))),
      namespace,
    );
  });

  it('createAgentWorker rejects with NAMESPACE_NOT_FOUND', async () => {
    expectNoNamespace(
      await failure(() => createAgentWorker(options(temporalAddress(), namespace))),
      namespace,
    );
  });

  it('createAgentClient rejects with NAMESPACE_NOT_FOUND', async () => {
    expectNoNamespace(
      await failure(() => createAgentClient(options(temporalAddress(), namespace))),
      namespace,
    );
  });

  it('the CLI says it in one line naming the namespace and the flag, exit 1', async () => {
    const child = spawn(process.execPath, cliNodeArgs(['sessions', '--namespace', namespace]), {
      cwd: repoRoot,
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), DEBUG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, stderr).toBe(1);
    expect(stdout).toBe('');
    const lines = stderr.split('\n').filter((line) => line !== '');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toBe(
      `durable-agent: namespace '${namespace}' not found at ${temporalAddress()}: pass ` +
        `--namespace NAME (or TEMPORAL_NAMESPACE), or create it with \`temporal operator ` +
        `namespace create --namespace ${namespace} --address ${temporalAddress()}\``,
    );
  });
});
