/**
 * A server started without the session search attributes (as one started by hand is): the
 * sessions still work; the client finds out at its first start, logs one WARN line naming
 * the command that registers them, and starts that session and the later ones without
 * them. `durable-agent sessions --status` says what is missing. Once the command of the WARN
 * line has run (Temporal's own CLI), a new client's sessions carry them.
 */
import { cliNodeArgs } from '../../helpers/cli-process.js';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../../src/index.js';
import { STATUS_KEY } from '../../../src/common/search-attributes.js';
import { startDevServer, type DevServer } from '../../../src/server/dev-server.js';
import { ensureTemporalCli } from '../../../src/server/temporal-cli.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { uniqueTaskQueue, waitFor } from '../../helpers/common.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

let server: DevServer;
let connection: Connection;
let client: Client;
let agent: Agent | undefined;
const warnings: string[] = [];
const replies: string[] = [];
const workflowIds: string[] = [];

/** A logger that keeps the WARN lines (and drops the rest). */
const logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => void warnings.push(message),
  error: () => undefined,
};

const agentOptions = () => ({
  model: scriptedModel(() => 'noted'),
  advanced: {
    logger,
    temporal: { address: server.address, taskQueue: uniqueTaskQueue('sa-missing') },
  },
});

/** Run a session to its end; keep its reply and workflow id. */
async function runSession(on: Agent): Promise<string> {
  const session = await on.createSession({ sessionId: `sa-missing-${randomUUID()}` });
  const result = await session.send('hello');
  replies.push(result.text());
  await session.close();
  workflowIds.push(session.workflowId);
  return session.workflowId;
}

/** The `durable-agent` CLI (a child process) against the test's server. */
async function durableAgent(args: string[]): Promise<{ code: number; stderr: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
  };
  delete env.DEBUG;
  try {
    await promisify(execFile)(process.execPath, cliNodeArgs(args), {
      cwd: repoRoot,
      env,
    });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

/** The session search attributes a workflow holds. */
async function statusOf(workflowId: string): Promise<unknown> {
  const described = await client.workflow.getHandle(workflowId).describe();
  return described.typedSearchAttributes.get(STATUS_KEY);
}

beforeAll(async () => {
  server = await startDevServer({
    cacheDir: join(repoRoot, '.temporal'),
    searchAttributes: false,
    log: () => undefined,
  });
  connection = await Connection.connect({ address: server.address });
  client = new Client({ connection });
  agent = await createAgent(agentOptions());
  await runSession(agent);
  await runSession(agent);
}, 120_000);

afterAll(async () => {
  await agent?.close();
  await connection?.close();
  await server?.stop();
});

describe('a server without the session search attributes', () => {
  it('runs the sessions without them', async () => {
    expect(replies).toEqual(['noted', 'noted']);
    for (const workflowId of workflowIds) expect(await statusOf(workflowId)).toBeUndefined();
  });

  it('logs one WARN line, naming the command that registers them', () => {
    expect(warnings.filter((line) => line.includes('search attributes'))).toEqual([
      "Namespace 'default' has no session search attributes: sessions run without them " +
        '(not findable by status or agent). Register them once with: ' +
        [
          ['DurableAgentName', 'Keyword'],
          ['DurableAgentVersion', 'Keyword'],
          ['DurableAgentStatus', 'Keyword'],
          ['DurableAgentPendingApprovals', 'Int'],
          ['DurableAgentLastDecision', 'Keyword'],
          ['DurableAgentSpentTokens', 'Int'],
          ['DurableAgentSpendUsd', 'Double'],
        ]
          .map(
            ([name, type]) =>
              `temporal operator search-attribute create --namespace default --name ${name} --type ${type}`,
          )
          .join(' && '),
    ]);
  });

  it('durable-agent sessions --status says they are missing and how to register them', async () => {
    const run = await durableAgent(['sessions', '--status', 'idle']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Namespace 'default' has no session search attributes");
    expect(run.stderr).toContain('temporal operator search-attribute create --namespace default');
  });

  it("after the WARN line's command, a new client's sessions carry them", async () => {
    const command = warnings[0]!.slice(warnings[0]!.indexOf('temporal operator'));
    const { temporalPath } = await ensureTemporalCli({ cacheDir: join(repoRoot, '.temporal') });
    for (const part of command.split(' && ')) {
      const args = part.split(' ').slice(1);
      await promisify(execFile)(temporalPath!, [...args, '--address', server.address]);
    }
    await waitFor(
      async () => {
        const listed = await connection.operatorService.listSearchAttributes({
          namespace: 'default',
        });
        return Object.hasOwn(listed.customAttributes ?? {}, STATUS_KEY.name);
      },
      20_000,
      'the attributes registered',
    );
    await agent!.close();
    agent = await createAgent(agentOptions());
    const warned = warnings.length;
    const workflowId = await runSession(agent);
    expect(await statusOf(workflowId)).toBe('closed');
    expect(warnings.length).toBe(warned);
  });
});
