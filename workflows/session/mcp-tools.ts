/**
 * The MCP tools a session starts with: listed once, when the session opens, on a worker of
 * its version; the list (schemas included) is in history as the activity's result, kept in
 * the state and carried over continue-as-new, and answered by the `mcpTools` query. Model
 * steps offer exactly it; calls outside it never reach a server (`prompt/tool-pipeline.ts`).
 * Workflow code.
 *
 * @module
 */
import { isCancellation } from '@temporalio/workflow';
import type { McpToolList } from '../../src/common/mcp.js';
import { listMcpToolsActivity } from '../activity-options.js';
import { failureMessage } from './failures.js';
import type { SessionState } from './state.js';
import { identityFields, withRefusalRetries } from './version-refusal.js';

/** How long workers of other versions may refuse the listing before it counts as failed, ms. */
const LIST_REFUSAL_BUDGET_MS = 60_000;

/**
 * List the definition's MCP tools into `state.mcpTools`, when it has MCP servers. A server
 * that is down is recorded as unavailable (its tools are not offered); a listing that fails
 * altogether records every server so, and the session goes on without MCP tools.
 * Rethrows only cancellation.
 */
export async function listSessionMcpTools(state: SessionState): Promise<void> {
  const servers = state.input.mcpServers;
  if (!servers?.length) return;
  const { sessionId, agentName } = state.input;
  const { version, fingerprint } = identityFields(state.input);
  const input = {
    sessionId,
    agentName,
    ...(version !== undefined ? { version } : {}),
    ...(fingerprint !== undefined ? { fingerprint } : {}),
  };
  try {
    state.mcpTools = await withRefusalRetries(
      state.input,
      { task: 'the listing of MCP tools' },
      LIST_REFUSAL_BUDGET_MS,
      (eager) => listMcpToolsActivity(state.taskQueue, eager)(input),
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    const message = `listing failed: ${failureMessage(error)}`;
    const none: McpToolList = {
      tools: [],
      unavailable: servers.map((server) => ({ server, message })),
      digest: '',
    };
    state.mcpTools = none;
  }
}
