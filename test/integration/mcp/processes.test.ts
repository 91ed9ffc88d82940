/**
 * MCP tools under the one gate with the worker in a process of its own, the client in the
 * test, and real MCP servers (test/fixtures/mcp-log-server.ts, which writes down every call
 * that reaches it), over stdio (a server process per worker) and over Streamable HTTP (a
 * server process the test starts): a denied tool never reaches the server; an ask approved
 * from the CLI runs the tool once; a PostToolUse redaction is what the model reads; an abort
 * reaches the server as MCP's cancellation; a worker killed mid-call is taken over and the
 * call is not run again. Over stdio: a server killed between calls is started again by the
 * next; a secret of the worker's environment never reaches the server's. The agent is
 * test/fixtures/mcp-agent.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient, type AgentClient } from '../../../src/index.js';
import { MCP_WORKER_SECRET, mcpAgentOptions, type McpAgentEnv } from '../../fixtures/mcp-agent.js';
import { runCli } from '../../helpers/cli-process.js';
import { pendingAsk, waitFor } from '../../helpers/common.js';
import { crashEnv, killAll, startWorkerProcess } from '../../helpers/processes.js';
import { MCP_LOG_SERVER, alive, logLines as mcpLogLines } from '../../helpers/mcp.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const secret = `planted-${randomUUID()}`;

/** The lines the servers of `env` wrote (both logs). */
function logLines(env: McpAgentEnv): string[] {
  return [env.mcpLog, `${env.mcpLog}.vault`].flatMap((file) => mcpLogLines(file));
}

/** The `call ...` lines the servers of `env` wrote. */
const calls = (env: McpAgentEnv) => logLines(env).filter((line) => line.startsWith('call '));

/** The process ids of the server processes that started (`start <pid>`). */
const serverPids = (env: McpAgentEnv) =>
  logLines(env)
    .flatMap((line) => /^start (\d+)$/.exec(line)?.[1] ?? [])
    .map(Number);

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The log server over Streamable HTTP on a free port, once it listens; its URL. */
async function startHttpServer(logFile: string, started: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', MCP_LOG_SERVER], {
    env: { ...process.env, MCP_HTTP_PORT: '0', MCP_LOG: logFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let output = '';
  const port = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`log server exited (${code}): ${output}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

describe.each(['stdio', 'http'] as const)(
  'MCP over %s, worker and client in separate processes',
  (transport) => {
    const dir = tempDir(`mcp-processes-${transport}`);
    const httpServers: ChildProcess[] = [];
    let env: McpAgentEnv;
    let client: AgentClient;

    beforeAll(async () => {
      env = {
        ...crashEnv({ definition: 'mcp', toolHeartbeatTimeoutMs: 2_000 }),
        mcpLog: join(dir, 'calls.log'),
      };
      if (transport === 'http') env.mcpUrl = await startHttpServer(env.mcpLog, httpServers);
      await startWorkerProcess(env, 'A', { [MCP_WORKER_SECRET]: secret });
      client = await createAgentClient(mcpAgentOptions({ ...env, label: 'client' }));
    }, 60_000);

    afterAll(async () => {
      await killAll();
      await client?.close();
      for (const child of httpServers) child.kill('SIGKILL');
      // Stdio servers of a killed worker may outlive it (a call of `slow` holds them).
      if (env) for (const pid of serverPids(env)) killQuietly(pid);
    });

    it('a denied MCP tool is never called, though the model names it', async () => {
      const session = await client.createSession();
      const before = calls(env).length;
      const response = await session.send('call mcp__vault__write_note {"text":"forbidden"}');
      // Nothing reached the server (its log), and the call ended denied.
      expect(logLines(env).join('\n')).not.toContain('forbidden');
      expect(calls(env)).toHaveLength(before);
      expect(response.status).toBe('completed');
      expect(response.toolCalls).toMatchObject([
        { toolName: 'mcp__vault__write_note', status: 'denied' },
      ]);
      expect(response.text()).toBe("got: Denied by permissionRules.deny 'mcp__vault'");
      await session.close();
    }, 60_000);

    it('an ask for an MCP write, approved from the CLI, runs the tool once', async () => {
      const session = await client.createSession();
      const pending = session.send('call mcp__notes__write_note {"text":"approved-once"}');
      const requestId = await pendingAsk(session, 30_000, 'the ask for write_note');
      // Asked, not yet run.
      expect(calls(env).filter((line) => line.includes('approved-once'))).toEqual([]);
      const approved = await runCli(['approve', session.id, requestId]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toMatch(
        new RegExp(
          `^approved ${requestId} in session ${session.id} \\(digest [0-9a-f]{12}, the pending request's\\)\n$`,
        ),
      );

      const response = await pending;
      expect(response.status).toBe('completed');
      expect(response.toolCalls).toMatchObject([
        { toolName: 'mcp__notes__write_note', status: 'success' },
      ]);
      expect(response.text()).toBe('got: wrote approved-once');
      expect(calls(env).filter((line) => line.includes('approved-once'))).toEqual([
        'call write_note {"text":"approved-once"}',
      ]);
      // Over HTTP, the calls reached the one server the test started, and no other.
      if (transport === 'http') expect(serverPids(env)).toEqual([httpServers[0]!.pid]);
      await session.close();
    }, 60_000);

    it("a PostToolUse redaction is what the model's next request reads", async () => {
      const session = await client.createSession();
      const response = await session.send('call mcp__notes__read_note {"id":"r1"}');
      expect(response.status).toBe('completed');
      // The server answered `note r1: secret=s3cr3t-value`; the model saw only the redacted text.
      expect(calls(env)).toContain('call read_note {"id":"r1"}');
      expect(response.text()).toBe('got: note r1: secret=***');
      const conversation = await session.conversation();
      const results = conversation.flatMap((m) => (m.role === 'tool' ? m.results : []));
      expect(results.map((r) => r.model)).toEqual(['note r1: secret=***']);
      await session.close();
    }, 60_000);

    it('an abort mid-call reaches the server as a cancellation; the send ends aborted', async () => {
      const session = await client.createSession();
      const cancelledBefore = logLines(env).filter((l) => l === 'cancelled slow').length;
      const slowBefore = calls(env).filter((l) => l.startsWith('call slow')).length;
      const pending = session.send('call mcp__notes__slow {}');
      await waitFor(
        () => calls(env).filter((l) => l.startsWith('call slow')).length > slowBefore,
        30_000,
        'the call of slow to reach the server',
      );
      expect(await session.abort(new Error('stop the slow call'))).toBe(true);
      // The server is told (MCP's notifications/cancelled), then the send ends.
      await waitFor(
        () => logLines(env).filter((l) => l === 'cancelled slow').length > cancelledBefore,
        15_000,
        "the server's 'cancelled slow'",
      );
      const response = await pending;
      expect(response.status).toBe('aborted');
      expect(response.toolCalls).toMatchObject([
        { toolName: 'mcp__notes__slow', status: 'cancelled' },
      ]);
      await session.close();
    }, 60_000);

    if (transport === 'stdio') {
      it('the server process killed between calls: the next call starts a new one and succeeds', async () => {
        const session = await client.createSession();
        expect((await session.send('call mcp__notes__read_note {"id":"k1"}')).text()).toBe(
          'got: note k1: secret=***',
        );
        const notesPids = () =>
          mcpLogLines(env.mcpLog)
            .flatMap((line) => /^start (\d+)$/.exec(line)?.[1] ?? [])
            .map(Number);
        const running = notesPids().filter(alive);
        expect(running).toHaveLength(1);
        process.kill(running[0]!, 'SIGKILL');
        await waitFor(() => !alive(running[0]!), 10_000, 'the server process to die');

        const response = await session.send('call mcp__notes__read_note {"id":"k2"}');
        expect(response.toolCalls).toMatchObject([{ status: 'success' }]);
        expect(response.text()).toBe('got: note k2: secret=***');
        const now = notesPids().filter(alive);
        expect(now).toHaveLength(1);
        expect(now[0]).not.toBe(running[0]);
        expect(calls(env).filter((l) => l.includes('"k2"'))).toEqual([
          'call read_note {"id":"k2"}',
        ]);
        await session.close();
      }, 60_000);

      it("a secret of the worker's environment is not in the server's; PATH (the tool environment) is", async () => {
        // The worker process has the secret; every server process it started reported its env.
        const session = await client.createSession();
        expect((await session.send('call mcp__notes__read_note {"id":"e1"}')).text()).toBe(
          'got: note e1: secret=***',
        );
        await session.close();
        const lines = mcpLogLines(env.mcpLog);
        expect(lines).toContain(`env ${MCP_WORKER_SECRET}=unset`);
        expect(lines).toContain('env PATH=set');
        expect(lines).not.toContain(`env ${MCP_WORKER_SECRET}=set`);
      }, 60_000);
    }

    it('the worker killed with SIGKILL mid-call: a new worker takes over, the call is not run again, the model reads why; the session goes on', async () => {
      const session = await client.createSession();
      const slowCalls = () => calls(env).filter((l) => l.startsWith('call slow'));
      const before = slowCalls().length;
      // 8 s: long enough to be cut, short enough that a second run would end and be seen.
      const pending = session.send('call mcp__notes__slow {"ms":8000}');
      await waitFor(
        () => slowCalls().length > before,
        30_000,
        'the call of slow to reach the server',
      );
      await killAll();
      await startWorkerProcess(env, 'B', { [MCP_WORKER_SECRET]: secret });

      const response = await pending;
      // One call reached the server: the new worker did not run it again.
      expect(slowCalls()).toHaveLength(before + 1);
      expect(response.status).toBe('completed');
      expect(response.toolCalls).toMatchObject([{ toolName: 'mcp__notes__slow', status: 'error' }]);
      // The model read why.
      expect(response.text()).toMatch(
        /^got: Tool mcp__notes__slow failed to run: .*began the tool, then was lost.*the tool is not run again/,
      );

      // The session goes on, on the new worker.
      const next = await session.send('call mcp__notes__read_note {"id":"after"}');
      expect(next.text()).toBe('got: note after: secret=***');
      expect(slowCalls()).toHaveLength(before + 1);
      await session.close();
    }, 90_000);

    it('the worker killed with SIGKILL mid-call of a read-only tool: the new worker runs it again and the model reads its result', async () => {
      const session = await client.createSession();
      const id = `lost-${transport}`;
      const readCalls = () => calls(env).filter((l) => l.includes(`"${id}"`));
      // 5 s: long enough to be cut, so the first run never answers.
      const pending = session.send(`call mcp__notes__read_note {"id":"${id}","ms":5000}`);
      await waitFor(
        () => readCalls().length > 0,
        30_000,
        'the call of read_note to reach the server',
      );
      await killAll();
      await startWorkerProcess(env, 'B', { [MCP_WORKER_SECRET]: secret });

      const response = await pending;
      // Read-only (`readOnlyHint`): the retried attempt ran it again, and it answered.
      expect(readCalls()).toHaveLength(2);
      expect(response.toolCalls).toMatchObject([
        { toolName: 'mcp__notes__read_note', status: 'success' },
      ]);
      expect(response.text()).toBe(`got: note ${id}: secret=***`);
      await session.close();
    }, 90_000);
  },
);
