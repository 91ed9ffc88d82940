/**
 * Sub-agents call the MCP tools of the session that started them, through the same gate:
 * the session's recorded list (a sub-agent lists none of its own), its hooks inherited, and,
 * when a sub-agent's definition lists its `tools`, only the MCP tools those names or patterns
 * match (the others are neither offered to its model nor run). A real Temporal server and a
 * real MCP server process (`test/fixtures/mcp-log-server.ts` over stdio, which writes down
 * every call that reaches it).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent, type HookInput } from '../../../src/index.js';
import { ConfigError } from '../../../src/common/errors.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { logServer, loggedCalls, promptedToolModel } from '../../helpers/mcp.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const dir = tempDir('mcp-subagents');
const logFile = join(dir, 'calls.log');
const calls = () => loggedCalls(logFile);

let agent: Agent;
const seen: Array<Pick<HookInput, 'toolName' | 'agentPath' | 'mcpServer' | 'mcpTool'>> = [];
/** The tools each model request offered, with the prompt that started its send. */
const offered: Array<{ prompt: string; tools: string[] }> = [];

/** The prompt of a `Task` call starting `subagent` with the task `prompt`. */
const task = (subagent: string, prompt: string) =>
  `call Task ${JSON.stringify({ subagent_type: subagent, description: 'a task', prompt })}`;

beforeAll(async () => {
  agent = await createAgent({
    name: 'mcp-subagents',
    model: promptedToolModel({
      onRequest: (request) =>
        offered.push({
          prompt: typeof request.prompt === 'string' ? request.prompt : '',
          tools: request.toolNames,
        }),
    }),
    tools: [],
    mcpServers: { notes: logServer({ MCP_LOG: logFile }) },
    advanced: {
      // The default preset: read-only tools (read_note, Task) run; write_note asks.
      permissionRules: { allow: ['mcp__notes__write_note'] },
      subagents: {
        agents: {
          reader: { description: 'Reads notes', prompt: 'You read notes.' },
          limited: {
            description: 'Reads one kind of note',
            prompt: 'You read notes only.',
            tools: ['mcp__notes__read_note'],
          },
        },
      },
      hooks: {
        PreToolUse: [
          async ({ toolName, agentPath, mcpServer, mcpTool }) => {
            seen.push({ toolName, agentPath, mcpServer, mcpTool });
            return { action: 'continue' };
          },
        ],
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('mcp-subagents') },
    },
  });
}, 120_000);

afterAll(async () => {
  await agent?.shutdown();
});

describe('MCP tools in sub-agents', () => {
  it("a sub-agent without a tools list calls the session's MCP tools, through the hooks it inherits", async () => {
    const session = await agent.createSession();
    const response = await session.send(task('reader', 'call mcp__notes__read_note {"id":"r1"}'));
    expect(response.status).toBe('completed');
    // The sub-agent read the note and answered; the session read the sub-agent's answer.
    expect(response.text()).toBe('got: got: note r1: secret=s3cr3t-value');
    expect(calls()).toEqual(['call read_note {"id":"r1"}']);
    expect(seen).toEqual([
      // The top session's inputs carry no agentPath.
      { toolName: 'Task' },
      {
        toolName: 'mcp__notes__read_note',
        agentPath: 'main/reader',
        mcpServer: 'notes',
        mcpTool: 'read_note',
      },
    ]);
    // Its model was offered the session's MCP tools.
    const child = offered.find((o) => o.prompt.startsWith('call mcp__notes__read_note'));
    expect(child?.tools).toEqual(
      expect.arrayContaining([
        'mcp__notes__read_note',
        'mcp__notes__write_note',
        'mcp__notes__slow',
      ]),
    );
    await session.close();
  });

  it('a sub-agent whose tools list names one MCP tool is offered that one; another never reaches the server', async () => {
    const session = await agent.createSession();
    const before = calls().length;
    const refused = await session.send(
      task('limited', 'call mcp__notes__write_note {"text":"from a limited sub-agent"}'),
    );
    expect(refused.status).toBe('completed');
    expect(refused.text()).toBe("got: got: Unknown tool 'mcp__notes__write_note'");
    expect(calls().length).toBe(before);
    const child = offered.find((o) => o.prompt.startsWith('call mcp__notes__write_note'));
    expect(child?.tools).toEqual(['mcp__notes__read_note']);

    const allowed = await session.send(task('limited', 'call mcp__notes__read_note {"id":"l1"}'));
    expect(allowed.text()).toBe('got: got: note l1: secret=s3cr3t-value');
    expect(calls().slice(before)).toEqual(['call read_note {"id":"l1"}']);
    await session.close();
  });

  it("refuses at createAgent a sub-agent's MCP tool of a server the agent does not have", async () => {
    const created = createAgent({
      name: 'mcp-subagents-bad',
      model: promptedToolModel(),
      tools: [],
      mcpServers: { notes: logServer({ MCP_LOG: logFile }) },
      advanced: {
        subagents: {
          agents: {
            bad: { description: 'd', prompt: 'p', tools: ['mcp__github__*'] },
          },
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('mcp-subagents-bad') },
      },
    });
    await expect(created).rejects.toThrow(ConfigError);
    await expect(created).rejects.toThrow(
      "advanced.subagents.agents.bad.tools: 'mcp__github__*' names MCP server 'github', which mcpServers does not have (it has: notes)",
    );
  });
});
