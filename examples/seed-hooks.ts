/**
 * Every snippet of the hooks page (hooks.zh.md), with only the import path changed. Type-
 * checked in CI; each behaviour has a test in test/integration/ (hooks-contract, agent-loop).
 */
import { createAgent, HookEvent, type HookCallback } from '../src/index.js';

export async function quickStart() {
  const agent = await createAgent({
    model: 'gpt-4o',
    apiKey: process.env.OPENAI_API_KEY!,
    advanced: {
      hooks: {
        [HookEvent.PreToolUse]: [
          async (input) => {
            console.log('[工具调用]', input.toolName, input.toolInput);
            return { action: 'continue' };
          },
        ],
        [HookEvent.PostToolUseFailure]: [
          async (input) => {
            console.error('[工具失败]', input.toolName, input.error);
            return { action: 'continue' };
          },
        ],
      },
    },
  });
  return agent;
}

export const promptHooks = {
  [HookEvent.UserPromptSubmit]: [
    async (input) => {
      const prompt = String(input.userPrompt ?? '');
      return {
        action: 'continue',
        modifiedInput: {
          userPrompt: `[tenant:acme]\n${prompt}`,
        },
      };
    },
  ],
} satisfies Record<string, HookCallback[]>;

export const writeStamp = {
  [HookEvent.PreToolUse]: [
    async (input) => {
      if (input.toolName !== 'Write') {
        return { action: 'continue' };
      }
      return {
        action: 'continue',
        modifiedInput: {
          ...input.toolInput,
          content: `// Generated\n${String(input.toolInput?.content ?? '')}`,
        },
      };
    },
  ],
} satisfies Record<string, HookCallback[]>;

const dangerous = [/rm\s+-rf/, /mkfs/, /dd\s+if=/];

export const dangerousBlock = {
  [HookEvent.PreToolUse]: [
    async (input) => {
      if (input.toolName !== 'Bash') {
        return { action: 'continue' };
      }
      const command = String(input.toolInput?.command ?? '');
      if (dangerous.some((pattern) => pattern.test(command))) {
        return {
          action: 'abort',
          reason: `危险命令被阻止: ${command}`,
        };
      }
      return { action: 'continue' };
    },
  ],
} satisfies Record<string, HookCallback[]>;

export const redaction = {
  [HookEvent.PostToolUse]: [
    async (input) => {
      if (input.toolName !== 'Read') {
        return { action: 'continue' };
      }
      return {
        action: 'continue',
        modifiedOutput: String(input.toolOutput).replace(/SECRET_KEY=\w+/g, 'SECRET_KEY=***'),
      };
    },
  ],
} satisfies Record<string, HookCallback[]>;

export async function permissionPolicy(model: string, apiKey: string) {
  const agent = await createAgent({
    model,
    apiKey,
    advanced: {
      permission: async (request) => {
        if (request.kind === 'readonly') {
          return 'allow';
        }
        return 'ask';
      },
    },
  });
  return agent;
}

async function sendToMonitoring(_input: unknown): Promise<void> {}

export const nonCritical: HookCallback = async (input) => {
  try {
    await sendToMonitoring(input);
  } catch (error) {
    console.error('Hook 上报失败', error);
  }
  return { action: 'continue' };
};
