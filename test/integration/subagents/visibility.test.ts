/**
 * What people see of a session whose `Task` calls started sub-agents. `durable-agent inspect`: the parent's
 * timeline shows the call's run from the child workflow's events (its permission, result and
 * duration, the sub-agent's session and status), and each sub-agent's own timeline nested
 * under the call, two levels deep (a sub-agent that delegates in turn); the CLI runs as a child
 * process against the test run's server. The session page: the `Task` call links to its
 * sub-agent's page, which names its path and links back to its parent's. And
 * `session.timeline({ subagents: true })`: the sub-agents' dispatches in time order. The
 * session page shows each sub-agent's turns nested under its Task call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, HookEvent, type Agent, type Session } from '../../../src/index.js';
import { scriptedModel, toolCall } from '../../../src/testing/index.js';
import { createSessionUi } from '../../../src/ui/index.js';
import { runCli } from '../../helpers/cli-process.js';
import { temporalAddress, uniqueTaskQueue } from '../../helpers/common.js';

/** The top session asks the lead, the lead asks the helper, the helper answers. */
const model = scriptedModel((request) => {
  const last = request.messages.at(-1);
  const answered = last?.role === 'tool' ? String(last.results[0]?.model) : undefined;
  switch (request.agentPath) {
    case 'main/lead/helper':
      return 'helped';
    case 'main/lead':
      return answered !== undefined
        ? `lead got: ${answered}`
        : toolCall('Task', { description: 'Help', prompt: 'help me', subagent_type: 'helper' });
    default:
      return answered !== undefined
        ? `top got: ${answered}`
        : toolCall('Task', { description: 'Lead it', prompt: 'lead', subagent_type: 'lead' });
  }
});

let agent: Agent;
let session: Session;

beforeAll(async () => {
  agent = await createAgent({
    name: 'subagents-inspect',
    model,
    advanced: {
      hooks: { [HookEvent.UserPromptSubmit]: [async () => ({ action: 'continue' })] },
      subagents: {
        maxDepth: 2,
        agents: {
          lead: { description: 'Leads', prompt: 'You lead.', subagents: ['helper'] },
          helper: { description: 'Helps', prompt: 'You help.' },
        },
      },
      temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('subagents-inspect') },
    },
  });
  session = await agent.createSession();
  const response = await session.send('go');
  expect(response.text()).toBe('top got: lead got: helped');
  await session.close();
}, 120_000);

afterAll(() => agent?.shutdown());

interface Timeline {
  sessionId: string;
  subagent?: { agentPath: string; parentSessionId: string; depth: number };
  dispatches: Array<{ event: string }>;
  toolCalls: Array<{
    toolUseId: string;
    toolName: string;
    executedInput?: Record<string, unknown>;
    result?: { status: string };
    child?: { agentPath: string; sessionId: string; status: string; toolCalls?: number };
  }>;
  subagents?: Record<string, Timeline>;
}

describe('inspect of a session with sub-agents', () => {
  it('--json nests each sub-agent timeline under the Task call that started it', async () => {
    const run = await runCli(['inspect', session.id, '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const top = JSON.parse(run.stdout) as Timeline;
    const [task] = top.toolCalls;
    expect(task).toMatchObject({
      toolName: 'Task',
      executedInput: { description: 'Lead it', prompt: 'lead', subagent_type: 'lead' },
      result: { status: 'success' },
      child: { agentPath: 'main/lead', status: 'completed', toolCalls: 1 },
    });
    const lead = top.subagents?.[task!.toolUseId];
    expect(lead?.sessionId).toBe(task!.child!.sessionId);
    expect(lead).toMatchObject({
      subagent: { agentPath: 'main/lead', parentSessionId: session.id, depth: 1 },
    });
    expect(lead?.dispatches.map((d) => d.event)).toEqual(['UserPromptSubmit']);
    const [leadTask] = lead!.toolCalls;
    expect(leadTask?.child).toMatchObject({ agentPath: 'main/lead/helper', status: 'completed' });
    const helper = lead!.subagents?.[leadTask!.toolUseId];
    expect(helper?.sessionId).toBe(leadTask!.child!.sessionId);
    expect(helper?.toolCalls).toEqual([]);
    expect(helper?.subagents).toBeUndefined();
  }, 60_000);

  it('prints each sub-agent indented under its parent, with the call line naming it', async () => {
    const run = await runCli(['inspect', session.id]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const lead = lines.findIndex((line) => /^ {2}sub-agent main\/lead \(Task call /.test(line));
    const helper = lines.findIndex((line) =>
      /^ {6}sub-agent main\/lead\/helper \(Task call /.test(line),
    );
    expect(lead).toBeGreaterThan(0);
    expect(helper).toBeGreaterThan(lead);
    // The call's own line in the parent's tool calls, and the sub-agent's header indented.
    expect(run.stdout).toMatch(
      / {4}sub-agent main\/lead: session \S+, completed, 1 tool call\(s\)/,
    );
    expect(lines[lead + 1]).toMatch(/^ {4}session \S+\/\d+-\S+ \(workflow session-/);
    expect(lines[helper + 1]).toMatch(/^ {8}session \S+ \(workflow session-/);
    expect(lines[helper + 2]).toBe(
      `        sub-agent main/lead/helper of session ${lines[lead + 1]!.split(' ')[5]}`,
    );
  }, 60_000);
});

describe('session.timeline() of a session with sub-agents', () => {
  it("with subagents: true, nests each sub-agent's dispatches in time order, tagged with its path", async () => {
    const own = await session.timeline();
    expect(own.map((e) => e.event)).toEqual(['UserPromptSubmit']);
    expect(own[0]).not.toHaveProperty('agentPath');
    const all = await session.timeline({ subagents: true });
    expect(all.map((e) => [e.agentPath ?? 'main', e.event])).toEqual([
      ['main', 'UserPromptSubmit'],
      ['main/lead', 'UserPromptSubmit'],
      ['main/lead/helper', 'UserPromptSubmit'],
    ]);
    expect(all[1]?.sessionId).toMatch(new RegExp(`^${session.id}/\\d+-`));
    expect(all[2]?.sessionId?.startsWith(`${all[1]!.sessionId}/`)).toBe(true);
  }, 60_000);
});

describe('the session page of a session with sub-agents', () => {
  it("links the Task call to its sub-agent's page, and the sub-agent's page back to its parent", async () => {
    const ui = await createSessionUi({ client: agent.client.temporal, timeoutMs: 10_000 });
    try {
      const page = async (path: string) => {
        const response = await fetch(`${ui.url}${path}`, {
          headers: { authorization: `Bearer ${ui.token}` },
        });
        expect(response.status).toBe(200);
        return await response.text();
      };
      const top = await page(`/sessions/${encodeURIComponent(session.id)}`);
      const link =
        /data-testid="subagent" data-status="completed">sub-agent <a href="([^"]+)">main\/lead<\/a>/.exec(
          top,
        );
      expect(link, 'the Task call links its sub-agent').not.toBeNull();
      // The sub-agents' turns nested under the Task calls, the helper's inside the lead's.
      const nested = top.indexOf('data-testid="subagent-turns" data-path="main/lead"');
      const deeper = top.indexOf('data-testid="subagent-turns" data-path="main/lead/helper"');
      expect(nested).toBeGreaterThan(0);
      expect(deeper).toBeGreaterThan(nested);
      expect(top.slice(deeper)).toContain('helped');
      const lead = await page(link![1]!);
      expect(lead).toContain('sub-agent <b>main/lead</b> of session');
      expect(lead).toContain(`href="/sessions/${encodeURIComponent(session.id)}"`);
      // The lead's own Task call links the helper, one level down.
      expect(lead).toMatch(
        /data-testid="subagent" data-status="completed">sub-agent <a href="[^"]+">main\/lead\/helper<\/a>/,
      );
    } finally {
      await ui.close();
    }
  }, 60_000);
});
