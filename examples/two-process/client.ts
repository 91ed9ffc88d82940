/**
 * The client half: starts a session, sends one prompt, prints what happened, closes the
 * session. It runs no hooks: the worker does (start it first), and the client reads what
 * they decided from the session.
 *
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx examples/two-process/client.ts ["a prompt"]
 */
import { createAgentClient } from '../../src/index.js';
import agent, { say, taskQueue } from './agent.js';

if (!process.env.TEMPORAL_ADDRESS) {
  console.error(
    'Set TEMPORAL_ADDRESS to the Temporal server the worker uses, e.g. TEMPORAL_ADDRESS=127.0.0.1:7233 ' +
      '(README: "Worker and client in two processes").',
  );
  process.exit(2);
}

const prompt = process.argv[2] ?? 'What is this package called?';
const client = await createAgentClient(agent);
try {
  const session = await client.createSession();
  say(
    'client',
    `session ${session.id} started on task queue ${taskQueue} at ${process.env.TEMPORAL_ADDRESS}`,
  );
  say('client', `> ${prompt}`);
  const response = await session.send(prompt);
  say('client', `< [${response.status}] ${response.text()}`);
  for (const call of response.toolCalls)
    say('client', `tool call: ${call.toolName} ${call.status}`);
  const closed = await session.close();
  say('client', `close(): ${JSON.stringify(closed)}`);
  const timeline = await session.timeline();
  say(
    'client',
    `what the worker's hooks decided: ${timeline
      .map((e) => `${e.event}${e.toolName ? ` ${e.toolName}` : ''} ${e.outcome}`)
      .join(', ')}`,
  );
} finally {
  await client.close();
}
