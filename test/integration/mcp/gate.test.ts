/**
 * MCP tools through the one gate, on a real server with a real MCP server process (the
 * official SDK's `McpServer` over stdio, `test/fixtures/mcp-log-server.ts`, which writes down
 * every call that reaches it): the session lists the tools when it opens and the model is
 * offered them with the server's schemas; a call runs PreToolUse -> permission -> the server
 * -> PostToolUse; a denied call and a name outside the list never reach the server; a tool
 * changed since the session listed it is refused, naming the change; a worker secret does
 * not reach the server's environment.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent, type AgentOptions, type HookInput } from '../../../src/index.js';
import type { McpToolList } from '../../../src/common/mcp.js';
import { Queries } from '../../../src/common/messages.js';
import { sessionWorkflowId } from '../../../src/common/workflow-io.js';
import {
  formatGateReport,
  gateDeploy,
  scriptedModel,
  toolCall,
} from '../../../src/testing/index.js';
import { rawClient, temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { logLines, logServer, loggedCalls, promptedToolModel } from '../../helpers/mcp.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const dir = tempDir('mcp-gate');
const logFile = join(dir, 'calls.log');
const schemaFile = join(dir, 'schema');
const calls = () => loggedCalls(logFile);

let agent: Agent;
let options: AgentOptions;
const seen: Array<Pick<HookInput, 'event' | 'toolName' | 'mcpServer' | 'mcpTool'>> = [];
const sawCall = (input: HookInput) => {
  const { event, toolName, mcpServer, mcpTool } = input;
  seen.push({ event, toolName, mcpServer, mcpTool });
};
const offered: string[][] = [];

beforeAll(async () => {
  process.env.MCP_GATE_WORKER_SECRET = 'do-not-leak';
  // Each prompt's first step calls the tool its prompt names (`call <tool> <json>`).
  const model = promptedToolModel({ onRequest: (request) => offered.push(request.toolNames) });
  options = {
    name: 'mcp-gate',
    model,
    tools: [],
    mcpServers: {
      notes: logServer({
        MCP_LOG: logFile,
        MCP_SCHEMA_FILE: schemaFile,
        MCP_REPORT_ENV: 'MCP_GATE_WORKER_SECRET,PATH',
      }),
    },
    advanced: {
      hooks: {
        PreToolUse: [
          async (input) => {
            sawCall(input);
            return { action: 'continue' };
          },
        ],
        PostToolUse: [
          async (input) => {
            sawCall(input);
            // Redaction in PostToolUse reaches the model.
            const redacted = String(input.toolOutput).replace(/secret=\S+/, 'secret=***');
            return { action: 'continue', modifiedOutput: redacted };
          },
        ],
      },
      permission: async ({ toolName, input }) =>
        toolName === 'mcp__notes__write_note' && input.text === 'forbidden' ? 'deny' : 'allow',
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('mcp-gate') },
    },
  };
  agent = await createAgent(options);
}, 120_000);

afterAll(async () => {
  await agent?.shutdown();
  delete process.env.MCP_GATE_WORKER_SECRET;
});

describe('MCP tools through the one gate', () => {
  it('a read-only MCP tool runs through PreToolUse, the server and PostToolUse; the model reads the redacted output', async () => {
    const session = await agent.createSession();
    const response = await session.send('call mcp__notes__read_note {"id":"n1"}');
    expect(response.status).toBe('completed');
    expect(response.text()).toBe('got: note n1: secret=***');
    expect(calls()).toEqual(['call read_note {"id":"n1"}']);
    // The hooks saw the call, with its server and the tool's own name.
    const mcp = { toolName: 'mcp__notes__read_note', mcpServer: 'notes', mcpTool: 'read_note' };
    expect(seen.filter((s) => s.toolName === 'mcp__notes__read_note')).toEqual([
      { event: 'PreToolUse', ...mcp },
      { event: 'PostToolUse', ...mcp },
    ]);
    // The model was offered the server's tools by their MCP names.
    expect(offered[0]).toEqual(
      expect.arrayContaining([
        'mcp__notes__read_note',
        'mcp__notes__write_note',
        'mcp__notes__slow',
      ]),
    );
    // The session recorded the list it started with, schemas included.
    const client = await rawClient();
    try {
      const list: McpToolList | null = await client.workflow
        .getHandle(sessionWorkflowId(session.id))
        .query(Queries.mcpTools);
      expect(list?.tools.find((t) => t.name === 'mcp__notes__read_note')).toMatchObject({
        server: 'notes',
        tool: 'read_note',
        kind: 'readonly',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
      });
      expect(list?.unavailable).toEqual([]);
    } finally {
      await client.connection.close();
    }
    await session.close();
  });

  it('a denied MCP tool and a name outside the list never reach the server', async () => {
    const session = await agent.createSession();
    const before = calls().length;
    const denied = await session.send('call mcp__notes__write_note {"text":"forbidden"}');
    expect(denied.status).toBe('completed');
    expect(denied.toolCalls[0]).toMatchObject({
      toolName: 'mcp__notes__write_note',
      status: 'denied',
    });
    const unlisted = await session.send('call mcp__notes__drop_table {"name":"users"}');
    expect(unlisted.toolCalls[0]).toMatchObject({ status: 'error' });
    expect(unlisted.text()).toContain("server 'notes' offers 'read_note', 'write_note', 'slow'");
    const noServer = await session.send('call mcp__other__x {}');
    expect(noServer.text()).toContain("no MCP server 'other'");
    expect(calls().length).toBe(before);
    await session.close();
  });

  it('a tool changed since the session listed it is refused, naming the change; a new session sees the new tool', async () => {
    const session = await agent.createSession();
    writeFileSync(schemaFile, 'v2');
    try {
      // The server restarts (its process killed) and comes back with write_note changed.
      const pids = readFileSync(logFile, 'utf8').match(/^start (\d+)$/gm) ?? [];
      for (const line of pids) {
        try {
          process.kill(Number(line.split(' ')[1]), 'SIGKILL');
        } catch {
          // already gone
        }
      }
      const before = calls().length;
      const changed = await session.send('call mcp__notes__write_note {"text":"ok"}');
      expect(changed.toolCalls[0]).toMatchObject({ status: 'error' });
      expect(changed.text()).toMatch(
        /^got: MCP tool 'mcp__notes__write_note' changed since this session listed it; not called: .*title/,
      );
      expect(calls().length).toBe(before);
      // read_note did not change: it runs on the restarted server.
      const response = await session.send('call mcp__notes__read_note {"id":"n2"}');
      expect(response.text()).toBe('got: note n2: secret=***');
      expect(calls().length).toBe(before + 1);
      // A session opened now lists the new tool, and calls it.
      const fresh = await agent.createSession();
      const wrote = await fresh.send('call mcp__notes__write_note {"text":"ok","title":"t"}');
      expect(wrote.text()).toBe('got: wrote ok');
      expect(calls().at(-1)).toBe('call write_note {"text":"ok","title":"t"}');
      await fresh.close();
    } finally {
      writeFileSync(schemaFile, 'v1');
    }
    await session.close();
  });

  it("a worker secret is not in the server's environment; PATH (the tool environment) is", () => {
    const lines = readFileSync(logFile, 'utf8');
    expect(lines).toContain('env MCP_GATE_WORKER_SECRET=unset');
    expect(lines).toContain('env PATH=set');
    expect(lines).not.toContain('env MCP_GATE_WORKER_SECRET=set');
  });
});

describe('the deploy gate', () => {
  it('says which MCP tool list each session used', async () => {
    const report = await gateDeploy({ agent: options, client: agent.client });
    const listed = report.sessions.filter((s) => s.mcpTools);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed[0]!.mcpTools!.tools.map((t) => t.name)).toEqual([
      'mcp__notes__read_note',
      'mcp__notes__write_note',
      'mcp__notes__slow',
    ]);
    expect(formatGateReport(report)).toMatch(
      /\n {2}MCP tools: 3 \(notes: read_note, write_note, slow\), list [0-9a-f]{12}\n/,
    );
  });
});

describe('a server down when the session opens', () => {
  it('its tools are not offered; a call names the server; the session goes on', async () => {
    const down = await createAgent({
      name: 'mcp-gate-down',
      model: scriptedModel([toolCall('mcp__gone__anything', {}), 'went on']),
      tools: [],
      mcpServers: { gone: { command: join(dir, 'no-such-command') } },
      advanced: {
        permission: 'bypass-permissions',
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('mcp-gate-down') },
      },
    });
    try {
      const session = await down.createSession();
      const response = await session.send('go');
      expect(response.status).toBe('completed');
      expect(response.text()).toBe('went on');
      expect(response.toolCalls[0]).toMatchObject({ status: 'error' });
      const conversation = await session.conversation();
      const result = conversation.flatMap((m) => (m.role === 'tool' ? m.results : []))[0];
      expect(result?.model).toContain("server 'gone' was unavailable when this session started");
      await session.close();
    } finally {
      await down.shutdown();
    }
  });
});

describe("a call past the tool's budget", () => {
  it('is cancelled at the server (MCP notifications/cancelled) and ends in a timeout result', async () => {
    const slowLog = join(dir, 'slow.log');
    const timed = await createAgent({
      name: 'mcp-gate-timeout',
      model: scriptedModel([toolCall('mcp__notes__slow', {}), 'went on']),
      tools: [],
      mcpServers: { notes: logServer({ MCP_LOG: slowLog }) },
      advanced: {
        permission: 'bypass-permissions',
        toolTimeoutMs: 1_500,
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('mcp-gate-timeout') },
      },
    });
    try {
      const session = await timed.createSession();
      const response = await session.send('go');
      expect(response.status).toBe('completed');
      expect(response.text()).toBe('went on');
      expect(response.toolCalls[0]).toMatchObject({
        toolName: 'mcp__notes__slow',
        status: 'error',
      });
      const conversation = await session.conversation();
      const result = conversation.flatMap((m) => (m.role === 'tool' ? m.results : []))[0];
      expect(result?.model).toMatch(/timed out after 1500 ms|exceeded 1500ms/);
      // The server was told: its handler saw the request's signal abort (before any close).
      const cancelled = () => logLines(slowLog).includes('cancelled slow');
      await waitFor(cancelled, 10_000, "the server's cancel");
      expect(loggedCalls(slowLog)).toEqual(['call slow {}']);
      await session.close();
    } finally {
      await timed.shutdown();
    }
  });
});
