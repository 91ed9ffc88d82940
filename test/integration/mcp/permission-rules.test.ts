/**
 * `advanced.permissionRules` on MCP tools, on a real server with a real MCP server process
 * (`test/fixtures/mcp-log-server.ts`, which writes down every call that reaches it): a `deny`
 * pattern keeps a call from the server even under `bypass-permissions`; a bare server in
 * `allow` runs a write tool without asking under the default preset; an `ask` pattern waits
 * for a person, who approves it. Each decision is on the send's stream as `decidedBy: 'rules'`.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent,
  type Agent,
  type AdvancedOptions,
  type PendingPermission,
  type Session,
  type StreamedEvent,
} from '../../../src/index.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';
import { logServer, loggedCalls, promptedToolModel } from '../../helpers/mcp.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const dir = tempDir('mcp-rules');
const logFile = join(dir, 'calls.log');
const calls = () => loggedCalls(logFile);

/** An agent whose model calls the tool its prompt names (`call <tool> <json>`). */
function agentWith(name: string, advanced: AdvancedOptions): Promise<Agent> {
  return createAgent({
    name,
    model: promptedToolModel(),
    tools: [],
    mcpServers: { notes: logServer({ MCP_LOG: logFile }) },
    advanced: {
      ...advanced,
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue(name) },
    },
  });
}

/** Send `prompt`, reading its stream; `onAsk` answers an ask of a person. */
async function sendReading(
  session: Session,
  prompt: string,
  onAsk?: (permissionRequestId: string) => Promise<void>,
) {
  const call = session.send(prompt);
  const events: StreamedEvent[] = [];
  for await (const event of call.stream()) {
    events.push(event);
    if (event.type === 'permission-asked' && event.askedOf === 'person') {
      if (!onAsk) throw new Error(`unexpected ask of a person for ${event.toolName}`);
      await onAsk(event.permissionRequestId!);
    }
  }
  const decided = events.flatMap((e) =>
    e.type === 'permission-decided'
      ? [{ decidedBy: e.decidedBy, behavior: e.behavior, rule: e.rule, toolName: e.toolName }]
      : [],
  );
  return { response: await call, decided };
}

let guarded: Agent;
let open: Agent;

beforeAll(async () => {
  [guarded, open] = await Promise.all([
    agentWith('mcp-rules-guarded', {
      permission: 'bypass-permissions',
      permissionRules: { deny: ['mcp__notes__write_*'], ask: ['mcp__notes__slow'] },
    }),
    agentWith('mcp-rules-open', { permissionRules: { allow: ['mcp__notes'] } }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([guarded?.shutdown(), open?.shutdown()]);
});

describe('permissionRules on MCP tools', () => {
  it('a deny pattern keeps the call from the server even under bypass-permissions, naming the rule', async () => {
    const session = await guarded.createSession();
    const before = calls().length;
    const { response, decided } = await sendReading(
      session,
      'call mcp__notes__write_note {"text":"hello"}',
    );
    expect(response.status).toBe('completed');
    expect(response.toolCalls[0]).toMatchObject({
      toolName: 'mcp__notes__write_note',
      status: 'denied',
      reason: "Denied by permissionRules.deny 'mcp__notes__write_*'",
    });
    expect(response.text()).toBe("got: Denied by permissionRules.deny 'mcp__notes__write_*'");
    expect(decided).toEqual([
      {
        decidedBy: 'rules',
        behavior: 'deny',
        rule: { list: 'deny', pattern: 'mcp__notes__write_*' },
        toolName: 'mcp__notes__write_note',
      },
    ]);
    expect(calls().length).toBe(before);
    // A tool no rule names is the preset's: bypass-permissions runs it.
    const read = await sendReading(session, 'call mcp__notes__read_note {"id":"n1"}');
    expect(read.response.toolCalls[0]).toMatchObject({ status: 'success' });
    expect(read.decided).toEqual([
      {
        decidedBy: 'preset',
        behavior: 'allow',
        rule: undefined,
        toolName: 'mcp__notes__read_note',
      },
    ]);
    expect(calls().slice(before)).toEqual(['call read_note {"id":"n1"}']);
    await session.close();
  });

  it('a bare server in allow runs its write tool without asking under the default preset', async () => {
    const session = await open.createSession();
    const before = calls().length;
    const { response, decided } = await sendReading(
      session,
      'call mcp__notes__write_note {"text":"allowed"}',
    );
    expect(response.toolCalls[0]).toMatchObject({ status: 'success' });
    expect(response.text()).toBe('got: wrote allowed');
    expect(decided).toEqual([
      {
        decidedBy: 'rules',
        behavior: 'allow',
        rule: { list: 'allow', pattern: 'mcp__notes' },
        toolName: 'mcp__notes__write_note',
      },
    ]);
    expect(calls().slice(before)).toEqual(['call write_note {"text":"allowed"}']);
    await session.close();
  });

  it('an ask pattern waits for a person even under bypass-permissions; approved, the call runs once', async () => {
    const session = await guarded.createSession();
    const before = calls().length;
    let pending: PendingPermission[] = [];
    const { response, decided } = await sendReading(
      session,
      'call mcp__notes__slow {"ms":1}',
      async (requestId) => {
        pending = await session.pendingPermissions();
        // The tool has not run while it waits.
        expect(calls().length).toBe(before);
        await session.approve(requestId);
      },
    );
    expect(pending).toEqual([
      expect.objectContaining({
        toolName: 'mcp__notes__slow',
        message: "Asked by permissionRules.ask 'mcp__notes__slow'",
      }),
    ]);
    expect(response.toolCalls[0]).toMatchObject({ status: 'success' });
    expect(response.text()).toBe('got: slow done');
    expect(decided).toEqual([
      {
        decidedBy: 'rules',
        behavior: 'ask',
        rule: { list: 'ask', pattern: 'mcp__notes__slow' },
        toolName: 'mcp__notes__slow',
      },
      { decidedBy: 'person', behavior: 'allow', rule: undefined, toolName: 'mcp__notes__slow' },
    ]);
    expect(calls().slice(before)).toEqual(['call slow {"ms":1}']);
    await session.close();
  });
});
