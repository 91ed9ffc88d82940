/**
 * The README's Quick start, verbatim except the import paths (and wrapped in a test).
 * It uses the default task queue and TEMPORAL_ADDRESS from the global setup.
 */
import { expect, it, vi } from 'vitest';
import { createAgent, HookEvent } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';

it('README Quick start runs as written', async () => {
  const log = vi.spyOn(console, 'log');
  // ---- verbatim from README.md ----
  const agent = await createAgent({
    model: scriptedModel(['Hello!']), // or a model id such as 'gpt-4o' with apiKey (coming)
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
  const session = await agent.createSession();
  const response = await session.send('hi');
  console.log(response.status, response.text()); // completed Hello!
  await session.close(); // SessionEnd runs once, however often close() is called
  await agent.shutdown();
  // ---- end ----
  expect(log).toHaveBeenCalledWith('completed', 'Hello!');
}, 60_000);
