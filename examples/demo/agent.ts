/**
 * The demo's agent definition, shared by the demo (client side) and its worker processes:
 * the seed page's recipes as hooks, the seed's permission policy, and a model (scripted by
 * default, a real one when OPENAI_API_KEY or OPENAI_BASE_URL is set).
 *
 * Hooks record what they did as JSON lines in an events file, so the demo can check, across
 * worker processes, what was blocked, redacted and stamped, and how often SessionStart and
 * SessionEnd ran.
 *
 * @module
 */
import { appendFileSync } from 'node:fs';
import { HookEvent, type AgentOptions, type AgentModel } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';

/** What the demo processes share through the environment. */
export interface DemoEnv {
  address: string;
  taskQueue: string;
  workspace: string;
  eventsFile: string;
}

/** One line of the events file. */
export type DemoEvent =
  | { kind: 'session-start' }
  | { kind: 'session-end'; reason: string }
  | { kind: 'audit'; tool: string; input: unknown }
  | { kind: 'blocked'; command: string }
  | { kind: 'redacted'; tool: string }
  | { kind: 'stamped'; file: string }
  | { kind: 'tool-ran'; tool: string; input: unknown }
  | { kind: 'tool-failed'; tool: string; error: string };

/** The prompt the demo sends first. */
export const DEMO_PROMPT =
  'Audit this repository: read the code and its .env, clean the build folder, look for TODOs, ' +
  'and write your findings to NOTES.md.';

const dangerous = [/rm\s+-rf/, /mkfs/, /dd\s+if=/];

/** The scripted run: what a careful-but-reckless model would do with DEMO_PROMPT. */
function scriptedTurns(step: number, lastUserText: string): ScriptedTurn {
  if (!lastUserText.includes('Audit this repository')) {
    return 'I changed one file, NOTES.md, after your approval. The rm -rf was blocked.';
  }
  const turns: ScriptedTurn[] = [
    {
      text: 'Reading the code and configuration first.',
      toolCalls: [
        { toolName: 'Read', input: { file_path: 'src/app.ts' } },
        { toolName: 'Read', input: { file_path: '.env' } },
      ],
    },
    {
      text: 'Cleaning the build folder.',
      toolCalls: [{ toolName: 'Bash', input: { command: 'rm -rf build && echo cleaned' } }],
    },
    { toolCalls: [{ toolName: 'Grep', input: { pattern: 'TODO' } }] },
    {
      toolCalls: [
        {
          toolName: 'Write',
          input: {
            file_path: 'NOTES.md',
            content:
              '# Audit notes\n\n- src/app.ts: one TODO (input validation).\n- .env holds a secret key: keep it out of git.\n',
          },
        },
      ],
    },
    'Done: NOTES.md lists one TODO and the secret in .env. I could not clean the build folder: the command was blocked.',
  ];
  return turns[step] ?? 'Done.';
}

/** The model: a real one when configured, else the scripted run. */
export function demoModel(): {
  model: string | AgentModel;
  apiKey?: string;
  baseUrl?: string;
  real: boolean;
} {
  const baseUrl = process.env.OPENAI_BASE_URL;
  const apiKey = process.env.OPENAI_API_KEY;
  if (apiKey || baseUrl) {
    return {
      model: process.env.DEMO_MODEL ?? 'gpt-4o-mini',
      ...(apiKey ? { apiKey } : {}),
      ...(baseUrl ? { baseUrl } : {}),
      real: true,
    };
  }
  return {
    model: scriptedModel((request) => {
      const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
      const text =
        lastUser && lastUser.role === 'user' && typeof lastUser.content === 'string'
          ? lastUser.content
          : '';
      return scriptedTurns(request.step, text);
    }),
    real: false,
  };
}

/** The demo agent: the seed's recipes, durably. */
export function demoAgentOptions(env: DemoEnv): AgentOptions {
  const record = (event: DemoEvent) => appendFileSync(env.eventsFile, JSON.stringify(event) + '\n');
  const { model, apiKey, baseUrl } = demoModel();
  return {
    model,
    ...(apiKey ? { apiKey } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    workspaceRoots: [env.workspace],
    advanced: {
      hooks: {
        [HookEvent.SessionStart]: [
          async () => {
            record({ kind: 'session-start' });
            return { action: 'continue' };
          },
        ],
        // The tenant tag on every prompt (seed: 修改用户输入).
        [HookEvent.UserPromptSubmit]: [
          async (input) => ({
            action: 'continue',
            modifiedInput: { userPrompt: `[tenant:acme]\n${String(input.userPrompt ?? '')}` },
          }),
        ],
        [HookEvent.PreToolUse]: [
          // Audit log (seed: 快速开始).
          async (input) => {
            record({ kind: 'audit', tool: String(input.toolName), input: input.toolInput });
            return { action: 'continue' };
          },
          // Dangerous command block (seed: 阻止工具调用).
          async (input) => {
            if (input.toolName !== 'Bash') return { action: 'continue' };
            const command = String(input.toolInput?.command ?? '');
            if (dangerous.some((pattern) => pattern.test(command))) {
              record({ kind: 'blocked', command });
              return { action: 'abort', reason: `危险命令被阻止: ${command}` };
            }
            return { action: 'continue' };
          },
          // The Write stamp (seed: 修改工具输入).
          async (input) => {
            if (input.toolName !== 'Write') return { action: 'continue' };
            record({ kind: 'stamped', file: String(input.toolInput?.file_path ?? '') });
            return {
              action: 'continue',
              modifiedInput: {
                ...input.toolInput,
                content: `// Generated\n${String(input.toolInput?.content ?? '')}`,
              },
            };
          },
        ],
        [HookEvent.PostToolUse]: [
          async (input) => {
            record({ kind: 'tool-ran', tool: String(input.toolName), input: input.toolInput });
            return { action: 'continue' };
          },
          // SECRET_KEY redaction (seed: 修改工具输出).
          async (input) => {
            if (input.toolName !== 'Read') return { action: 'continue' };
            const output = String(input.toolOutput);
            const redacted = output.replace(/SECRET_KEY=\w+/g, 'SECRET_KEY=***');
            if (redacted !== output) record({ kind: 'redacted', tool: 'Read' });
            return { action: 'continue', modifiedOutput: redacted };
          },
        ],
        // Failure logger (seed: 快速开始).
        [HookEvent.PostToolUseFailure]: [
          async (input) => {
            record({
              kind: 'tool-failed',
              tool: String(input.toolName),
              error: String(input.error?.message ?? ''),
            });
            return { action: 'continue' };
          },
        ],
        [HookEvent.SessionEnd]: [
          async (input) => {
            record({ kind: 'session-end', reason: String(input.reason) });
            return { action: 'continue' };
          },
        ],
      },
      // The seed's policy: read-only tools run, everything else asks a person.
      permission: async (request) => (request.kind === 'readonly' ? 'allow' : 'ask'),
      temporal: {
        address: env.address,
        taskQueue: env.taskQueue,
        dispatchHeartbeatTimeoutMs: 2_000,
        shutdownGraceTimeMs: 2_000,
        stickyQueueScheduleToStartTimeoutMs: 1_000,
        // The demo is an application: it lets the worker install Temporal's runtime with the
        // SDK's quiet logger (a library left to itself does not: see the option's docs).
        runtime: 'if-absent',
      },
    },
  };
}
