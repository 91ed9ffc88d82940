/**
 * Worker and client in one process: `createAgent` runs both, on the Temporal server at
 * TEMPORAL_ADDRESS, else on an embedded dev server it starts and stops.
 *
 *   npm start
 */
import { createAgent } from 'durable-agent-sdk';
import agent from './agent.js';

const prompt = process.argv[2] ?? 'What is this project called?';
const running = await createAgent(agent);
try {
  const session = await running.createSession();
  console.log((await session.send(prompt)).text());
  await session.close();
} finally {
  await running.shutdown();
}
