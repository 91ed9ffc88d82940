/**
 * A chat page in the browser on one durable session: each prompt is sent to the session and
 * its events (tool calls, the model's text as it comes, the end) reach the page as
 * server-sent events while the send runs.
 */
import { createServer } from 'node:http';
import { createAgent } from 'durable-agent-sdk';
import { memoryStreams } from 'durable-agent-sdk/stream';
import { scriptedModel, toolCall } from 'durable-agent-sdk/testing';
import { page } from './page.js';

if (!process.env.TEMPORAL_ADDRESS) {
  console.error('Set TEMPORAL_ADDRESS to a running Temporal server, e.g. 127.0.0.1:7233.');
  process.exit(2);
}

const agent = await createAgent({
  name: 'browser-chat-example',
  // Scripted, so no API key is needed: each prompt lists the folder with Glob, then answers
  // in pieces 40 ms apart. With a provider: model: 'gpt-4o-mini' and OPENAI_API_KEY.
  model: scriptedModel(
    (request) => {
      const last = request.messages.at(-1);
      if (last?.role !== 'tool') return toolCall('Glob', { pattern: '*' });
      const files = (last.results[0]?.model ?? '').split('\n').filter(Boolean).length;
      return `This folder holds ${files} entries. Ask again and I will count them again.`;
    },
    { chunkDelayMs: 40 },
  ),
  workspaceRoots: [process.cwd()],
  advanced: {
    // The worker and this server share the process, so the in-memory transport carries the
    // events. With workers in other processes: redisStreams({ url }) here and on them.
    stream: { transport: memoryStreams() },
    temporal: { taskQueue: process.env.EXAMPLE_TASK_QUEUE || 'browser-chat-example' },
  },
});
const session = await agent.createSession();

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (url.pathname === '/') {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
    return;
  }
  const prompt = url.searchParams.get('prompt');
  if (url.pathname !== '/chat' || !prompt) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  void (async () => {
    // stream() yields the send's events in order and ends with `finish` (or `error`).
    for await (const event of session.send(prompt).stream()) {
      response.write(`data: ${JSON.stringify(event)}\n\n`);
    }
    response.end();
  })();
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  console.log(`chat on http://127.0.0.1:${port}/ (session ${session.id}); Ctrl-C stops`);
});

// `on`, not `once`: Ctrl-C reaches the process twice (from the terminal and through tsx).
// Temporal's runtime shuts the worker down at the signal too, so the session is left open
// (idle, durable): closing it would wait for SessionEnd on a worker that is stopping.
let stopping: Promise<void> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping ??= (async () => {
      server.close();
      server.closeAllConnections();
      await agent.close();
      console.log('stopped');
    })();
  });
}
