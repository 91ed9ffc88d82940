/** The README's offline quick start, type-checked in CI and run by a test. */
import { createAgent, HookEvent } from '../src/index.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';

export async function offlineQuickStart(): Promise<string> {
  const agent = await createAgent({
    model: scriptedModel([toolCall('Read', { file_path: 'README.md' }), 'It says hello.']),
    workspaceRoots: [process.cwd()],
    advanced: {
      hooks: {
        [HookEvent.UserPromptSubmit]: [
          async (input) => ({
            action: 'continue',
            modifiedInput: { userPrompt: `[tenant:acme]\n${String(input.userPrompt ?? '')}` },
          }),
        ],
      },
    },
  });
  try {
    const session = await agent.createSession();
    const text = (await session.send('What does the README say?')).text();
    await session.close();
    return text;
  } finally {
    await agent.shutdown();
  }
}
