/**
 * An agent on a multi-process Temporal cluster (frontend, history, matching and worker
 * services on PostgreSQL), reached by the variables `npm run cluster -- start` prints:
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and, with --tls, the mTLS certificate paths.
 */
import { createAgent, HookEvent } from 'durable-agent-sdk';
import { scriptedModel, toolCall } from 'durable-agent-sdk/testing';

if (!process.env.TEMPORAL_ADDRESS) {
  console.error('Start the cluster first: eval "$(npm run -s cluster -- start --tls)"');
  process.exit(2);
}

const agent = await createAgent({
  name: 'cluster-example',
  // Scripted, so no API key is needed: read package.json, then answer from it. With a
  // provider: model: 'gpt-4o-mini' and OPENAI_API_KEY.
  model: scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (last?.role !== 'tool') return toolCall('Read', { file_path: 'package.json' });
    const name = /"name":\s*"([^"]+)"/.exec(last.results[0]?.model ?? '')?.[1] ?? 'unknown';
    return `This app is ${name}.`;
  }),
  workspaceRoots: [process.cwd()],
  advanced: {
    hooks: {
      [HookEvent.PreToolUse]: [
        async (input) => {
          console.log(`PreToolUse ${input.toolName} ${JSON.stringify(input.toolInput)}`);
          return { action: 'continue' };
        },
      ],
    },
    // Address, namespace and TLS come from the TEMPORAL_* variables (Temporal's names).
    temporal: { taskQueue: process.env.EXAMPLE_TASK_QUEUE || 'cluster-example' },
  },
});
try {
  const session = await agent.createSession();
  console.log(`session ${session.id} on ${process.env.TEMPORAL_ADDRESS}`);
  const response = await session.send('What is this app called?');
  console.log(`[${response.status}] ${response.text()}`);
  await session.close();
  console.log('session closed');
} finally {
  await agent.close();
}
