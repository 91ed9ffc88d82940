/**
 * The client: starts a session, sends a prompt whose tool call needs approval, prints the
 * command that approves it, and waits for the answer. It runs no hooks and no tools.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createAgentClient } from 'durable-agent-sdk';
import agent, { say } from './agent.js';

if (!process.env.TEMPORAL_ADDRESS) {
  console.error(
    'Set TEMPORAL_ADDRESS to the Temporal server the worker uses, e.g. 127.0.0.1:7233.',
  );
  process.exit(2);
}

const client = await createAgentClient(agent);
try {
  const session = await client.createSession();
  say('client', `session ${session.id}`);
  const reply = session.send('Write a note to NOTES.md');

  // The Write call waits in the workflow for a person; show who can answer it, and how.
  let pending = await session.pendingPermissions();
  while (pending.length === 0) {
    await sleep(200);
    pending = await session.pendingPermissions();
  }
  for (const request of pending) {
    say('client', `waiting for approval of ${request.toolName} ${JSON.stringify(request.input)}`);
    say('client', `approve it: npx durable-agent approve ${session.id} ${request.requestId}`);
  }

  const response = await reply;
  say('client', `[${response.status}] ${response.text()}`);
  for (const call of response.toolCalls)
    say('client', `tool call ${call.toolName}: ${call.status}`);
  await session.close();
} finally {
  await client.close();
}
