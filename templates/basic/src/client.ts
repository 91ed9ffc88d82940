/**
 * The client: starts a session, sends one prompt, prints the answer and closes the session.
 * It runs no hooks: the worker does (start it first).
 *
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 npm run client -- "What is this project called?"
 */
import { createAgentClient } from 'durable-agent-sdk';
import agent from './agent.js';

const prompt = process.argv[2] ?? 'What is this project called?';
const client = await createAgentClient(agent);
try {
  const session = await client.createSession();
  const response = await session.send(prompt);
  console.log(response.text());
  await session.close();
} finally {
  await client.close();
}
