/**
 * The README's offline quick start (examples/readme-offline.ts), run as written. It uses the
 * default task queue and TEMPORAL_ADDRESS from the global setup; no other test uses the
 * default task queue.
 */
import { readFileSync } from 'node:fs';
import { afterEach, expect, it, vi } from 'vitest';
import { offlineQuickStart } from '../../../examples/readme-offline.js';
import type { ConversationMessage } from '../../../src/common/conversation.js';
import { Session } from '../../../src/client/session.js';

afterEach(() => {
  vi.restoreAllMocks();
});

it('the README offline quick start reads README.md through a tool and answers', async () => {
  // The example returns only the answer: read the session's conversation as it closes (the
  // real close() runs right after), to see what the tool and the hook did.
  const conversations: ConversationMessage[][] = [];
  const close = Session.prototype.close;
  vi.spyOn(Session.prototype, 'close').mockImplementation(async function (this: Session) {
    conversations.push(await this.conversation());
    return close.call(this);
  });

  expect(await offlineQuickStart()).toBe('It says hello.');

  expect(conversations).toHaveLength(1);
  const [user, call, tool, answer] = conversations[0]!;
  // The UserPromptSubmit hook's rewrite reached the model.
  expect(user).toEqual({ role: 'user', content: '[tenant:acme]\nWhat does the README say?' });
  expect(call).toMatchObject({
    role: 'assistant',
    toolCalls: [{ toolName: 'Read', input: { file_path: 'README.md' } }],
  });
  // Read ran and the model got the file's text.
  expect(tool?.role).toBe('tool');
  const [result] = tool?.role === 'tool' ? tool.results : [];
  expect(result?.status).toBe('success');
  const firstLine = readFileSync('README.md', 'utf8').split('\n')[0]!;
  expect(firstLine).toBe('# durable-agent-sdk');
  expect(result?.model).toContain(firstLine);
  expect(answer).toEqual({ role: 'assistant', text: 'It says hello.', toolCalls: [] });
  expect(conversations[0]).toHaveLength(4);
}, 60_000);
