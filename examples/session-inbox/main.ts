/**
 * The session page (`durable-agent-sdk/ui`) beside an agent whose tool call waits for a
 * person: the page's inbox lists the request, and approving it there lets the call run.
 */
import { createAgent } from 'durable-agent-sdk';
import { scriptedModel, toolCall } from 'durable-agent-sdk/testing';
import { createSessionUi } from 'durable-agent-sdk/ui';

if (!process.env.TEMPORAL_ADDRESS) {
  console.error('Set TEMPORAL_ADDRESS to a running Temporal server, e.g. 127.0.0.1:7233.');
  process.exit(2);
}

const agent = await createAgent({
  name: 'session-inbox-example',
  // Scripted, so no API key is needed: the model asks to write TODO.md, then reports how the
  // call ended. With a provider: model: 'gpt-4o-mini' and OPENAI_API_KEY.
  model: scriptedModel((request) => {
    if (request.step === 0) {
      return toolCall('Write', { file_path: 'TODO.md', content: '- read the inbox\n' });
    }
    const last = request.messages.at(-1);
    const result = last?.role === 'tool' ? last.results[0] : undefined;
    return `The Write call ended: ${result?.model ?? 'no result'}`;
  }),
  workspaceRoots: [process.cwd()],
  advanced: {
    // The 'default' preset: read-only tools run, Write and Edit and Bash ask a person.
    permission: 'default',
    // Unanswered for 10 minutes, the request becomes a deny and this script ends.
    permissionTimeoutMs: 10 * 60_000,
    temporal: { taskQueue: process.env.EXAMPLE_TASK_QUEUE || 'session-inbox-example' },
  },
});

// The page reads sessions through the agent's Temporal client (its codecs open encrypted
// payloads); taskQueue limits the list to this agent's sessions.
const ui = await createSessionUi({
  client: agent.client.temporal,
  taskQueue: agent.worker.taskQueue,
  port: Number(process.env.PORT ?? 0),
});
try {
  const session = await agent.createSession();
  const reply = session.send('Start a TODO list');
  console.log(`session ${session.id}: its Write call waits for a person`);
  console.log(
    `open the inbox and approve it: ${ui.url}/inbox?token=${encodeURIComponent(ui.token)}`,
  );
  const response = await reply;
  console.log(`[${response.status}] ${response.text()}`);
  for (const call of response.toolCalls) console.log(`tool call ${call.toolName}: ${call.status}`);
  await session.close();
} finally {
  await ui.close();
  await agent.close();
}
