/**
 * The MCP fixtures of scripts/record-histories.ts: a session of an agent with an MCP server
 * (`test/fixtures/mcp-log-server.ts` over stdio) that lists its tools when it opens, calls a
 * read-only tool, is refused a name outside its list, has a write tool asked and approved,
 * and continues as new after two prompts (the list carried to the next run). Saved as
 * `mcp-session-run1.json` and `mcp-session-run2.json`.
 *
 * @module
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { JsonObject } from '../src/common/json.js';
import { createAgent, HookEvent } from '../src/index.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';

/** The MCP scenarios, by the name the script takes. */
export const MCP_FIXTURES = ['mcp-session'] as const;

/** What the recording needs from the script: the server, a client of it, where to write. */
export interface McpRecording {
  address: string;
  client: Client;
  /** test/fixtures/histories/ */
  out: string;
  repoRoot: string;
  want: (name: string) => boolean;
}

/** Record the wanted MCP scenarios. */
export async function recordMcpHistories(rec: McpRecording): Promise<void> {
  if (!rec.want('mcp-session')) return;
  const logDir = mkdtempSync(join(tmpdir(), 'record-mcp-'));
  // Each prompt's first step calls the tool it names (`call <tool> <json>`), then answers.
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return `got: ${last.results[0]?.model ?? ''}`;
    const prompt = typeof request.prompt === 'string' ? request.prompt : '';
    const [, tool, args] = /^call (\S+) (.*)$/.exec(prompt) ?? [];
    return toolCall(tool!, JSON.parse(args!) as JsonObject);
  });
  const agent = await createAgent({
    name: 'record-mcp',
    model,
    tools: [],
    mcpServers: {
      notes: {
        command: process.execPath,
        args: ['--import', 'tsx', join(rec.repoRoot, 'test', 'fixtures', 'mcp-log-server.ts')],
        env: { MCP_LOG: join(logDir, 'calls.log') },
      },
    },
    advanced: {
      hooks: { [HookEvent.PreToolUse]: [async () => ({ action: 'continue' })] },
      continueAsNewAfterPrompts: 2,
      temporal: { address: rec.address, taskQueue: 'record-histories-mcp' },
    },
  });
  try {
    const s = await agent.createSession({ sessionId: 'fixture-mcp-session' });
    const handle = () => rec.client.workflow.getHandle(s.workflowId);
    const first = (await handle().describe()).runId;
    await s.send('call mcp__notes__read_note {"id":"n1"}');
    await s.send('call mcp__notes__drop_table {"name":"users"}');
    while ((await handle().describe()).runId === first) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // The write tool asks a person under the default preset; approved.
    const sending = s.send('call mcp__notes__write_note {"text":"hello"}');
    let asks = await s.pendingPermissions();
    while (asks.length === 0) {
      await new Promise((r) => setTimeout(r, 50));
      asks = await s.pendingPermissions();
    }
    await s.approve(asks[0]!.requestId);
    await sending;
    await s.close();
    await save(rec, 'mcp-session-run1', s.workflowId, first);
    await save(rec, 'mcp-session-run2', s.workflowId);
  } finally {
    await agent.shutdown();
  }
}

async function save(rec: McpRecording, name: string, workflowId: string, runId?: string) {
  const history = await rec.client.workflow.getHandle(workflowId, runId).fetchHistory();
  writeFileSync(join(rec.out, `${name}.json`), historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length ?? 0} events`);
}
