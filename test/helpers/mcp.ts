/**
 * What the MCP tests share: the log server fixture as a stdio server, its log, the scripted
 * model that calls the tool its prompt names, and process checks. No vitest here: worker
 * processes (test/fixtures/mcp-agent.ts) use it too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../src/common/json.js';
import type { McpStdioServerConfig } from '../../src/index.js';
import { scriptedModel, toolCall, type RecordedModelRequest } from '../../src/testing/index.js';

/** test/fixtures/mcp-log-server.ts: a real MCP server that writes down every call. */
export const MCP_LOG_SERVER = fileURLToPath(
  new URL('../fixtures/mcp-log-server.ts', import.meta.url),
);

/** The log server over stdio (run by tsx), with `env` (`MCP_LOG`, `MCP_SCHEMA_FILE`, ...). */
export function logServer(env: Record<string, string>): McpStdioServerConfig {
  return { command: process.execPath, args: ['--import', 'tsx', MCP_LOG_SERVER], env };
}

/** The lines of a log server's log (none before it wrote one). */
export function logLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** The `call <tool> <json args>` lines of a log server's log: the calls that reached it. */
export function loggedCalls(file: string): string[] {
  return logLines(file).filter((line) => line.startsWith('call '));
}

/**
 * A scripted model whose prompt `call <tool> <json>` makes it call that tool, then answer
 * `got: <what the model read>` (and `suffix`'s text after it, when given); another prompt is
 * answered `echo:<prompt>`. `onRequest` sees every request first.
 */
export function promptedToolModel(
  options: {
    onRequest?: (request: RecordedModelRequest) => void;
    suffix?: (request: RecordedModelRequest) => string;
  } = {},
) {
  return scriptedModel((request) => {
    options.onRequest?.(request);
    const last = request.messages.at(-1);
    if (last?.role === 'tool') {
      return `got: ${String(last.results[0]?.model ?? '')}${options.suffix?.(request) ?? ''}`;
    }
    const prompt = typeof request.prompt === 'string' ? request.prompt : '';
    const [, tool, args] = /^call (\S+) (.*)$/.exec(prompt) ?? [];
    return tool ? toolCall(tool, JSON.parse(args!) as JsonObject) : `echo:${prompt}`;
  });
}

/** Whether process `pid` is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
