/**
 * The main job: an agent session on a real Temporal server, guarded by the seed page's
 * hooks, surviving a crash of its worker while a person's approval is pending.
 *
 *   npm run demo [-- --interactive] [-- --ui] [-- --record-fixture FILE]
 *
 * Uses the embedded dev server (or TEMPORAL_ADDRESS), a scripted model (or a real one when
 * OPENAI_API_KEY / OPENAI_BASE_URL is set), and a real workspace in a temporary folder.
 * Exits 0 only if every check held.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { createAgentClient, type Session, type TimelineEntry } from '../index.js';
import { startDevServer, type DevServer } from '../server/dev-server.js';
import { DEMO_PROMPT, demoAgentOptions, demoModel, type DemoEnv, type DemoEvent } from './agent.js';
import { createDemoWorkspace, PLANTED_SECRET } from './workspace.js';

const { values: flags } = parseArgs({
  options: {
    interactive: { type: 'boolean', default: false },
    ui: { type: 'boolean', default: false },
    'record-fixture': { type: 'string' },
  },
});
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const started = Date.now();
const tty = process.stdout.isTTY === true;
const say = (line: string) => {
  if (tty) process.stdout.write('\r\x1b[K');
  console.log(`[${String(Date.now() - started).padStart(6)} ms] ${line}`);
};

const workers = new Set<ChildProcess>();
/** Timeline entries printed so far (the timeline is the session's, across prompts). */
let printed = 0;
let server: DevServer | undefined;
const cleanup = async () => {
  for (const child of workers) child.kill('SIGKILL');
  await server?.stop();
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

let ok = false;
try {
  ok = await main();
} catch (error) {
  say(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  await cleanup();
}
process.exit(ok ? 0 : 1);

async function main(): Promise<boolean> {
  const { real } = demoModel();
  say(
    `durable-agent-sdk demo: model ${real ? 'from OPENAI_* settings' : 'scripted (no API key needed)'}`,
  );
  let address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    say('starting the embedded Temporal dev server ...');
    server = await startDevServer({ cacheDir: join(repoRoot, '.temporal'), ui: flags.ui === true });
    address = server.address;
    say(
      `Temporal at ${address}${server.uiUrl ? `, Web UI at ${server.uiUrl}` : ''} (CLI: ${server.cliOrigin})`,
    );
  } else {
    say(`Temporal at ${address} (TEMPORAL_ADDRESS)`);
  }
  const workspace = createDemoWorkspace();
  const eventsFile = join(
    mkdtempSync(join(tmpdir(), 'durable-agent-demo-events-')),
    'events.jsonl',
  );
  writeFileSync(eventsFile, '');
  say(`workspace: ${workspace} (a git repo with src/, build/ and a .env holding SECRET_KEY)`);
  const env: DemoEnv = { address, taskQueue: `demo-${randomUUID()}`, workspace, eventsFile };

  let worker = await startWorker(env, 'worker-1');
  const client = await createAgentClient(demoAgentOptions(env));
  const session = await client.createSession();
  say(`session ${session.id} started (workflow ${session.workflowId})`);

  let crashed = false;
  say(`> ${DEMO_PROMPT}`);
  const first = await follow(session, session.send(DEMO_PROMPT), async (requestId, toolName) => {
    if (!crashed) {
      crashed = true;
      say(
        `permission asked for ${toolName}: killing ${worker.name} with SIGKILL while the request waits`,
      );
      worker.child.kill('SIGKILL');
      await new Promise((resolve) => worker.child.once('exit', resolve));
      worker = await startWorker(env, 'worker-2');
      say(`${worker.name} started; the pending request survived in the workflow`);
    }
    if (flags.interactive) {
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      const answer = await rl.question(`Allow ${toolName}? [y/N] `);
      rl.close();
      if (/^y/i.test(answer.trim())) await session.approve(requestId);
      else await session.deny(requestId, { message: 'A person said no.' });
    } else {
      say(`approving ${toolName} (run with --interactive to answer yourself)`);
      await session.approve(requestId);
    }
  });
  say(`< [${first.status}] ${first.text()}`);
  const followUp = 'What did you change?';
  say(`> ${followUp}`);
  const second = await follow(session, session.send(followUp), async (requestId) =>
    session.deny(requestId),
  );
  say(`< [${second.status}] ${second.text()}`);

  const conversation = JSON.stringify(await session.conversation());
  const closed = await session.close();
  const again = await session.close();
  printSettled(await session.timeline());
  say(`close(): ${JSON.stringify(closed)}; close() again: ${JSON.stringify(again)}`);
  if (flags['record-fixture']) {
    const history = await client.temporal.workflow.getHandle(session.workflowId).fetchHistory();
    writeFileSync(flags['record-fixture'], historyToJSON(history) + '\n');
    say(`history recorded to ${flags['record-fixture']}`);
  }
  await client.close();
  worker.child.kill('SIGTERM');

  return summarize({ events: readEvents(eventsFile), workspace, conversation, crashed, real });
}

interface Summary {
  events: DemoEvent[];
  workspace: string;
  conversation: string;
  crashed: boolean;
  real: boolean;
}

function summarize({ events, workspace, conversation, crashed, real }: Summary): boolean {
  const count = (kind: DemoEvent['kind']) => events.filter((e) => e.kind === kind).length;
  const notes = join(workspace, 'NOTES.md');
  const writes = events.filter((e) => e.kind === 'tool-ran' && e.tool === 'Write').length;
  console.log('\nSummary');
  console.log(`  tool calls audited:   ${count('audit')}`);
  for (const e of events)
    if (e.kind === 'blocked') console.log(`  blocked:              ${e.command}`);
  console.log(`  outputs redacted:     ${count('redacted')}`);
  for (const e of events)
    if (e.kind === 'stamped') console.log(`  stamped:              ${e.file}`);
  console.log(`  tool failures logged: ${count('tool-failed')}`);
  const checks: Array<[string, boolean, boolean]> = [
    // [what, held, required even with a real model]
    ['SessionStart ran once', count('session-start') === 1, true],
    ['SessionEnd ran once', count('session-end') === 1, true],
    [`the secret never reached the model`, !conversation.includes(PLANTED_SECRET), true],
    ['the worker was killed mid-session and the session finished', crashed, !real],
    [
      'rm -rf was blocked and build/ is intact',
      count('blocked') >= 1 && existsSync(join(workspace, 'build', 'app.js')),
      !real,
    ],
    ['the .env read was redacted', count('redacted') >= 1, !real],
    [
      'NOTES.md was written once, after approval, with the stamp',
      writes === 1 && existsSync(notes) && readFileSync(notes, 'utf8').startsWith('// Generated\n'),
      !real,
    ],
  ];
  console.log('\nChecks');
  let allHeld = true;
  for (const [what, held, required] of checks) {
    const mark = held ? 'ok  ' : required ? 'FAIL' : 'n/a ';
    if (!held && required) allHeld = false;
    console.log(`  [${mark}] ${what}`);
  }
  console.log(allHeld ? '\nAll checks held.' : '\nSome checks FAILED.');
  return allHeld;
}

/** Print each hook dispatch as it lands; hand pending permission requests to `onAsk`. */
async function follow<T>(
  session: Session,
  pending: Promise<T>,
  onAsk: (requestId: string, toolName: string) => Promise<void>,
): Promise<T> {
  let done = false;
  const handled = new Set<string>();
  const frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
  let frame = 0;
  const watcher = (async () => {
    while (!done) {
      try {
        printSettled(await session.timeline());
        for (const request of await session.pendingPermissions()) {
          if (handled.has(request.requestId)) continue;
          handled.add(request.requestId);
          say(
            `  ? permission request ${request.requestId.slice(0, 8)}: ${request.toolName} ${JSON.stringify(request.input).slice(0, 80)}`,
          );
          await onAsk(request.requestId, request.toolName);
        }
      } catch {
        // The worker may be down for a moment (we killed it): keep watching.
      }
      if (tty) process.stdout.write(`\r${frames[frame++ % frames.length]} working ...`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  })();
  try {
    return await pending;
  } finally {
    done = true;
    await watcher;
    printSettled(await session.timeline().catch(() => [] as TimelineEntry[]));
  }
}

/** Print the entries not printed yet, up to the first dispatch still running. */
function printSettled(timeline: readonly TimelineEntry[]): void {
  for (const entry of timeline.slice(printed)) {
    if (entry.pending) return;
    say(describeEntry(entry));
    printed++;
  }
}

function describeEntry(entry: TimelineEntry): string {
  const decision =
    entry.decidedBy !== undefined
      ? `${entry.outcome} (callback #${entry.decidedBy + 1})`
      : entry.outcome;
  const reason = entry.reason ? `  ${entry.reason.slice(0, 70)}` : '';
  return `  hook ${entry.event.padEnd(18)} ${(entry.toolName ?? '').padEnd(6)} ${decision.padEnd(22)} ${entry.durationMs.toFixed(1).padStart(6)} ms${reason}`;
}

function readEvents(file: string): DemoEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as DemoEvent);
}

async function startWorker(
  env: DemoEnv,
  name: string,
): Promise<{ name: string; child: ChildProcess }> {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = join(here, fromSource ? 'worker.ts' : 'worker.js');
  const child = spawn(process.execPath, [...(fromSource ? ['--import', 'tsx'] : []), entry], {
    env: { ...process.env, DEMO_ENV: JSON.stringify(env) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready`)));
  });
  say(`${name} (pid ${child.pid}) polls task queue ${env.taskQueue}`);
  return { name, child };
}
