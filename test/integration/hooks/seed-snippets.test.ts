/** The seed page's snippets at agent level: redact, block, prefix, log failures. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createAgent, HookEvent, builtinTools, type Agent } from '../../../src/index.js';
import { scriptedModel, toolCalls } from '../../../src/testing/index.js';
import { temporalAddress, uniqueTaskQueue, waitFor } from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const agents: Agent[] = [];
afterAll(async () => {
  for (const a of agents) await a.shutdown();
});
describe('the seed snippets at agent level', () => {
  it('redact Read output, block a dangerous Bash, prefix an asked Write, log failures with an Error', async () => {
    const ws = tempDir('edge-seed');
    writeFileSync(join(ws, '.env'), 'SECRET_KEY=abc123\n');
    const dangerous = [/rm\s+-rf/, /mkfs/, /dd\s+if=/];
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const agent = await createAgent({
      model: scriptedModel([
        toolCalls(
          ['Read', { file_path: '.env' }],
          ['Bash', { command: 'rm -rf /tmp/nothing-here' }],
          ['Write', { file_path: 'a.ts', content: 'x' }],
          ['Read', { file_path: 'missing' }],
        ),
        'done',
      ]),
      workspaceRoots: [ws],
      tools: builtinTools(),
      advanced: {
        hooks: {
          [HookEvent.PreToolUse]: [
            async () => {
              return { action: 'continue' };
            },
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
          [HookEvent.PostToolUseFailure]: [
            async (input) => {
              console.error('[工具失败]', input.toolName, input.error);
              return { action: 'continue' };
            },
          ],
          [HookEvent.PostToolUse]: [
            async (input) => {
              if (input.toolName !== 'Read') {
                return { action: 'continue' };
              }
              return {
                action: 'continue',
                modifiedOutput: String(input.toolOutput).replace(
                  /SECRET_KEY=\w+/g,
                  'SECRET_KEY=***',
                ),
              };
            },
          ],
        },
        permission: async (request) => {
          if (request.kind === 'readonly') {
            return 'allow';
          }
          return 'ask';
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('edge-seed') },
      },
    });
    agents.push(agent);
    try {
      const session = await agent.createSession();
      const p = session.send('go');
      await waitFor(async () => (await session.pendingPermissions()).length === 1, 10_000, 'ask');
      const [r] = await session.pendingPermissions();
      // Only the Write asks, and it asks about the input PreToolUse prefixed.
      expect(r).toMatchObject({
        toolName: 'Write',
        input: { file_path: 'a.ts', content: '// Generated\nx' },
      });
      await session.approve(r!.requestId);
      const resp = await p;
      const results = (await session.conversation()).flatMap((m) =>
        m.role === 'tool' ? m.results : [],
      );
      await session.close();
      expect(resp.status).toBe('completed');
      expect(results.map((x) => [x.toolName, x.status, x.model])).toEqual([
        ['Read', 'success', 'SECRET_KEY=***\n'],
        ['Bash', 'error', '危险命令被阻止: rm -rf /tmp/nothing-here'],
        ['Write', 'success', expect.stringMatching(/^Wrote 14 bytes to /)],
        ['Read', 'error', "Read failed: No such file or directory: 'missing'"],
      ]);
      expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('// Generated\nx');
      const failureLogs = consoleError.mock.calls.filter((call) => call[0] === '[工具失败]');
      expect(failureLogs).toHaveLength(1);
      expect(failureLogs[0]?.[1]).toBe('Read');
      expect(failureLogs[0]?.[2]).toBeInstanceOf(Error);
    } finally {
      consoleError.mockRestore();
    }
  }, 30_000);
});
