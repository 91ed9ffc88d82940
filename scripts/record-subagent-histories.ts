/**
 * The sub-agent fixtures of scripts/record-histories.ts: sessions whose `Task` calls start
 * sub-agents (child `sessionWorkflow`s). Each scenario saves the parent's history as
 * `subagent-<scenario>.json` and each sub-agent's as `subagent-<scenario>-child<N>.json`, N
 * in the order the parent started them; the replay test replays them all, and checks that
 * every child a parent fixture started has its own fixture.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { z } from 'zod';
import type { JsonObject } from '../src/common/json.js';
import {
  createAgent,
  defineTool,
  HookEvent,
  Read,
  type HookMap,
  type Session,
} from '../src/index.js';
import {
  scriptedModel,
  toolCall,
  toolCalls,
  type RecordedModelRequest,
  type ScriptedTurn,
} from '../src/testing/index.js';

/** The sub-agent scenarios, by the name the script takes (`subagent-task`, ...). */
export const SUBAGENT_FIXTURES = [
  'subagent-task',
  'subagent-parallel',
  'subagent-refused',
  'subagent-ask',
  'subagent-abort',
  'subagent-timeout',
] as const;

/** What the recording needs from the script: the server, a client of it, where to write. */
export interface SubagentRecording {
  address: string;
  client: Client;
  /** test/fixtures/histories/ */
  out: string;
  repoRoot: string;
  want: (name: string) => boolean;
}

/** The Read input a sub-agent's PreToolUse holds until its signal aborts (abort, timeout). */
const WAIT_PATH = 'wait-for-abort';

/**
 * Record the wanted sub-agent scenarios. One agent (`maxConcurrent` 2) with two sub-agents:
 * `reader` (Read and the write-kind `Note`, which asks a person under the default preset)
 * and `waiter` (Read, a 2 s Task timeout). The top session's prompt names the scenario;
 * each sub-agent acts on its Task prompt.
 */
export async function recordSubagentHistories(rec: SubagentRecording): Promise<void> {
  if (!SUBAGENT_FIXTURES.some((name) => rec.want(name))) return;
  let childWaiting = false;
  const hooks = {
    [HookEvent.SessionStart]: [async () => ({ action: 'continue' })],
    [HookEvent.PreToolUse]: [
      async (input) => {
        const toolInput = input.toolInput as { file_path?: unknown } | undefined;
        if (input.agentPath !== undefined && toolInput?.file_path === WAIT_PATH) {
          childWaiting = true;
          const signal = input.abortSignal!;
          await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
        }
        return { action: 'continue' };
      },
    ],
    [HookEvent.SessionEnd]: [async () => ({ action: 'continue' as const })],
  } satisfies HookMap;
  const note = defineTool({
    name: 'Note',
    description: 'Notes a line (it keeps nothing)',
    kind: 'write',
    inputSchema: z.object({ text: z.string() }),
    execute: async () => 'noted',
  });
  const agent = await createAgent({
    name: 'record-subagents',
    model: scriptedModel(modelTurn),
    tools: [Read, note],
    workspaceRoots: [rec.repoRoot],
    advanced: {
      hooks,
      // The default preset: Task and Read run, Note asks a person.
      subagents: {
        maxConcurrent: 2,
        agents: {
          reader: { description: 'Reads files', prompt: 'You read.', tools: ['Read', 'Note'] },
          waiter: {
            description: 'Waits',
            prompt: 'You wait.',
            tools: ['Read'],
            timeoutMs: 2_000,
          },
        },
      },
      temporal: { address: rec.address, taskQueue: 'record-histories-subagents' },
    },
  });
  const record = async (name: string, run: (s: Session) => Promise<void>) => {
    if (!rec.want(name)) return;
    const s = await agent.createSession({ sessionId: `fixture-${name}` });
    await run(s);
    await s.close();
    await saveTree(rec, name, s.workflowId);
  };
  const untilChildWaits = async () => {
    while (!childWaiting) await new Promise((r) => setTimeout(r, 50));
    childWaiting = false;
  };
  try {
    // A Task whose sub-agent runs a hook and a tool call.
    await record('subagent-task', async (s) => void (await s.send('task')));
    // Two Task calls of one step, side by side.
    await record('subagent-parallel', async (s) => void (await s.send('parallel')));
    // Three Task calls of one step: the third is refused by maxConcurrent 2.
    await record('subagent-refused', async (s) => void (await s.send('refused')));
    // The sub-agent's Note asks; the ask is approved through the parent's handle.
    await record('subagent-ask', async (s) => {
      const sending = s.send('ask');
      let asks = await s.pendingPermissions();
      while (asks.length === 0) {
        await new Promise((r) => setTimeout(r, 50));
        asks = await s.pendingPermissions();
      }
      await s.approve(asks[0]!.requestId);
      await sending;
    });
    // The parent aborted while its sub-agent's PreToolUse waits.
    await record('subagent-abort', async (s) => {
      const sending = s.send('abort');
      await untilChildWaits();
      await s.abort(new Error('stop'));
      await sending;
    });
    // The sub-agent's PreToolUse waits past its Task timeout (2 s): it is cancelled.
    await record('subagent-timeout', async (s) => void (await s.send('timeout')));
  } finally {
    await agent.shutdown();
  }
}

/** The scripted model: the top session delegates as its prompt says, a sub-agent as its Task's. */
function modelTurn(request: RecordedModelRequest): ScriptedTurn {
  const first = request.messages.find((m) => m.role === 'user');
  const prompt = first?.role === 'user' && typeof first.content === 'string' ? first.content : '';
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return request.agentPath ? `${prompt} done` : 'parent done';
  if (request.agentPath) {
    if (prompt === 'read') return toolCall('Read', { file_path: 'README.md', limit: 3 });
    if (prompt === 'note') return toolCall('Note', { text: 'from the reader' });
    if (prompt === 'wait') return toolCall('Read', { file_path: WAIT_PATH });
    return `${prompt} answered`;
  }
  const task = (subagent_type: string, taskPrompt: string): [string, JsonObject] => [
    'Task',
    { description: taskPrompt, prompt: taskPrompt, subagent_type },
  ];
  switch (prompt) {
    case 'task':
      return toolCall(...task('reader', 'read'));
    case 'parallel':
      return toolCalls(task('reader', 'answer'), task('reader', 'read'));
    case 'refused':
      return toolCalls(task('reader', 'answer'), task('reader', 'answer'), task('reader', 'x'));
    case 'ask':
      return toolCall(...task('reader', 'note'));
    case 'abort':
      return toolCall(...task('reader', 'wait'));
    case 'timeout':
      return toolCall(...task('waiter', 'wait'));
    default:
      return 'no scenario';
  }
}

/** Save the history of session workflow `workflowId` and of each sub-agent it started. */
async function saveTree(rec: SubagentRecording, name: string, workflowId: string): Promise<void> {
  const history = await save(rec, name, workflowId);
  const children = (history.events ?? []).flatMap((e) => {
    const started = e.startChildWorkflowExecutionInitiatedEventAttributes;
    return started?.workflowId ? [started.workflowId] : [];
  });
  for (const [i, child] of children.entries()) await save(rec, `${name}-child${i + 1}`, child);
}

async function save(rec: SubagentRecording, name: string, workflowId: string) {
  const history = await rec.client.workflow.getHandle(workflowId).fetchHistory();
  writeFileSync(join(rec.out, `${name}.json`), historyToJSON(history) + '\n');
  console.log(`recorded ${name}: ${history.events?.length ?? 0} events`);
  return history;
}
