/**
 * The main job, minimal for now: a real session on an embedded Temporal server, guarded by
 * the seed page's prompt hook, with a scripted model (no account, no API key).
 *
 *   npm run demo
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgent, HookEvent } from '../index.js';
import { scriptedModel } from '../testing/index.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const started = Date.now();
const log = (line: string) =>
  console.log(`[${String(Date.now() - started).padStart(5)} ms] ${line}`);
let sessionEnds = 0;

log('starting an embedded Temporal dev server and a worker ...');
const agent = await createAgent({
  model: scriptedModel(['Hello! I am a durable agent.', 'Your tenant tag reached me intact.']),
  advanced: {
    hooks: {
      [HookEvent.SessionStart]: [
        async (input) => {
          log(`hook SessionStart      session=${input.sessionId}`);
          return { action: 'continue' };
        },
      ],
      [HookEvent.UserPromptSubmit]: [
        async (input) => {
          const prompt = String(input.userPrompt ?? '');
          log(`hook UserPromptSubmit  tagging prompt '${prompt}'`);
          return { action: 'continue', modifiedInput: { userPrompt: `[tenant:acme]\n${prompt}` } };
        },
      ],
      [HookEvent.SessionEnd]: [
        async (input) => {
          sessionEnds++;
          log(`hook SessionEnd        reason=${String(input.reason)}`);
          return { action: 'continue' };
        },
      ],
    },
    temporal: { embedded: { cacheDir: join(repoRoot, '.temporal') } },
  },
});
let ok = true;
try {
  log(
    `Temporal dev server at ${agent.address}; CLI from ${agent.embeddedServer?.cliOrigin ?? 'elsewhere'}`,
  );
  const session = await agent.createSession();
  for (const prompt of ['hi', 'what did you receive?']) {
    const response = await session.send(prompt);
    log(`send('${prompt}') -> ${response.status}: ${response.text()}`);
  }
  await session.close();
  await session.close(); // a retried close: SessionEnd must not run again
  const timeline = await session.timeline();
  log('timeline:');
  for (const entry of timeline) {
    log(
      `  #${entry.seq} ${entry.event.padEnd(17)} ${entry.outcome.padEnd(8)} ${entry.durationMs} ms`,
    );
  }
  ok = sessionEnds === 1;
  log(`SessionEnd ran ${sessionEnds} time(s): ${ok ? 'ok' : 'FAILED'}`);
} finally {
  await agent.shutdown();
}
process.exit(ok ? 0 : 1);
