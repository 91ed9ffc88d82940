/**
 * The main job: an agent session on a real Temporal server, guarded by the seed page's
 * hooks, surviving a crash of its worker while a person's approval is pending.
 *
 *   npm run demo [-- --interactive] [-- --ui] [-- --keep] [-- --record-fixture FILE]
 *
 * Uses the embedded dev server (or TEMPORAL_ADDRESS), a scripted model (or a real one when
 * OPENAI_API_KEY / OPENAI_BASE_URL is set), and a real workspace in a temporary folder,
 * removed at the end unless `--keep`. Exits 0 only if every check held; 2 for a bad option.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils.js';
import {
  createAgentClient,
  type AgentClient,
  type Session,
  type TimelineEntry,
} from '../../src/index.js';
import { startDevServer, type DevServer } from '../../src/server/dev-server.js';
import { goldenFromHistories } from '../../src/testing/golden.js';
import { messageOf } from '../../src/common/errors.js';
import { DEMO_PROMPT, demoAgentOptions, demoModel, type DemoEnv, type DemoEvent } from './agent.js';
import {
  activityPayloadsHolding,
  changesOf,
  describeEntry,
  dispatchKey,
  type DispatchChange,
} from './report.js';
import { createDemoWorkspace, PLANTED_SECRET } from './workspace.js';

const USAGE = `usage: npm run demo [-- OPTIONS]     (or: npx tsx examples/demo/main.ts [OPTIONS])

A real agent session on Temporal, guarded by the recipes of docs/hooks.md. While a person's
approval waits, the demo kills the worker with SIGKILL and starts another; the session
finishes, and the demo checks what the hooks did. Exits 0 only if every check held.

options:
  --interactive          answer the permission request yourself (y/N) instead of approving it
  --ui                   also start the Temporal Web UI (embedded server only)
  --keep                 keep the temporary workspace and the hooks' events file
  --record-fixture FILE  write the session's Temporal history to FILE (JSON)
  -h, --help             print this help and exit

environment:
  TEMPORAL_ADDRESS       use this Temporal server instead of starting an embedded one
  OPENAI_API_KEY, OPENAI_BASE_URL, DEMO_MODEL
                         drive the session with a real model (default: a scripted one)`;

const flags = parseFlags();
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const started = Date.now();
const tty = process.stdout.isTTY === true;
const say = (line: string) => {
  if (tty) process.stdout.write('\r\x1b[K');
  console.log(`[${String(Date.now() - started).padStart(6)} ms] ${line}`);
};

const fromSource = import.meta.url.endsWith('.ts');

const workers = new Set<ChildProcess>();
/** Timeline entries printed so far (the timeline is the session's, across prompts). */
let printed = 0;
let server: DevServer | undefined;
/** Temporary folders of this run, removed at the end unless `--keep`. */
const temporary: string[] = [];
/** The last lines: how to inspect the session just run. */
let inspectHint: string[] = [];
const cleanup = async () => {
  for (const child of workers) child.kill('SIGKILL');
  await server?.stop();
  if (flags.keep) {
    if (temporary.length > 0) console.log(`\nKept (--keep): ${temporary.join(', ')}`);
  } else {
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  }
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

let ok = false;
try {
  ok = await main();
} catch (error) {
  say(`demo failed: ${messageOf(error)}`);
} finally {
  await cleanup();
}
for (const line of inspectHint) console.log(line);
process.exit(ok ? 0 : 1);

/** The command line's options; `--help` prints the usage and exits 0, a bad option exits 2. */
function parseFlags() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        interactive: { type: 'boolean', default: false },
        ui: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        'record-fixture': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    console.error(`demo: ${messageOf(error)}\n\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return parsed.values;
}

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
  temporary.push(workspace);
  const eventsDir = mkdtempSync(join(tmpdir(), 'durable-agent-demo-events-'));
  temporary.push(eventsDir);
  const eventsFile = join(eventsDir, 'events.jsonl');
  writeFileSync(eventsFile, '');
  say(`workspace: ${workspace} (a git repo with src/, build/ and a .env holding SECRET_KEY)`);
  const env: DemoEnv = { address, taskQueue: `demo-${randomUUID()}`, workspace, eventsFile };

  let worker = await startWorker(env, 'worker-1');
  const client = await createAgentClient(demoAgentOptions(env));
  const session = await client.createSession();
  say(`session ${session.id} started (workflow ${session.workflowId})`);

  // How long a session's workflow task waits for the worker that ran it last (here: the one
  // killed) before any worker may take it.
  const stickyMs =
    demoAgentOptions(env).advanced?.temporal?.stickyQueueScheduleToStartTimeoutMs ?? 3_000;
  let crashed = false;
  say(`> ${DEMO_PROMPT}`);
  const first = await follow(
    client,
    session,
    session.send(DEMO_PROMPT),
    async (requestId, toolName) => {
      if (!crashed) {
        crashed = true;
        say(
          `permission asked for ${toolName}: killing ${worker.name} (pid ${worker.child.pid}) with SIGKILL while the request waits`,
        );
        worker.child.kill('SIGKILL');
        await new Promise((resolve) => worker.child.once('exit', resolve));
        say(
          `${worker.name} killed; the request waits in the session's workflow, not in a process. ` +
            `A new worker takes over the session when the old one's tasks time out ` +
            `(about ${seconds(stickyMs)}: the session's next workflow task waits that long for ${worker.name})`,
        );
        say('starting worker-2 (a new process: it loads the SDK and the workflow code) ...');
        worker = await startWorker(env, 'worker-2');
      }
      const answerStarted = Date.now();
      if (flags.interactive) {
        const rl = createInterface({ input: process.stdin, output: process.stdout });
        const answer = await rl.question(`Allow ${toolName}? [y/N] `);
        rl.close();
        if (/^y/i.test(answer.trim())) await session.approve(requestId);
        else await session.deny(requestId, { message: 'A person said no.' });
        say(`answer recorded by ${worker.name}`);
      } else {
        say(
          `approving ${toolName} (run with --interactive to answer yourself); ` +
            `the answer waits until ${worker.name} has the session ...`,
        );
        await session.approve(requestId);
        say(
          `approval recorded by ${worker.name} after ${seconds(Date.now() - answerStarted)}; ${toolName} runs now`,
        );
      }
    },
  );
  say(`< [${first.status}] ${first.text()}`);
  const followUp = 'What did you change?';
  say(`> ${followUp}`);
  const second = await follow(client, session, session.send(followUp), async (requestId) =>
    session.deny(requestId),
  );
  say(`< [${second.status}] ${second.text()}`);

  const conversation = JSON.stringify(await session.conversation());
  const closed = await session.close();
  const again = await session.close();
  await printSettled(client, session, await session.timeline());
  say(`close(): ${JSON.stringify(closed)}; close() again: ${JSON.stringify(again)}`);
  const history = await historyOf(client, session);
  if (flags['record-fixture']) {
    writeFileSync(flags['record-fixture'], historyToJSON(history) + '\n');
    say(`history recorded to ${flags['record-fixture']}`);
  }
  inspectHint = inspectCommand(session, address, history);
  await client.close();
  worker.child.kill('SIGTERM');

  return summarize({
    events: readEvents(eventsFile),
    workspace,
    conversation,
    crashed,
    real,
    secretHeldBy: activityPayloadsHolding(history, PLANTED_SECRET),
  });
}

function historyOf(client: AgentClient, session: Session): Promise<History> {
  return client.temporal.workflow.getHandle(session.workflowId).fetchHistory();
}

/**
 * The lines that end the demo: the CLI command that shows this session's hook timeline. The
 * embedded server stops with the demo, so its session's history is saved to a file first.
 */
function inspectCommand(session: Session, address: string, history: History): string[] {
  const cli = fromSource
    ? `npx tsx ${relative(process.cwd(), join(repoRoot, 'src', 'cli', 'main.ts'))}`
    : 'npx durable-agent';
  if (!server) {
    return [
      `\nInspect the session just run (its hook timeline, rebuilt from the Temporal history):`,
      `  ${cli} inspect ${session.id} --address ${address}`,
    ];
  }
  const dir = join(process.cwd(), '.durable-agent');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'demo-history.json');
  writeFileSync(file, historyToJSON(history) + '\n');
  return [
    `\nInspect the session just run (${session.id}; the embedded server stopped with the demo, ` +
      `so its Temporal history was saved):`,
    `  ${cli} inspect ${relative(process.cwd(), file)}`,
  ];
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

interface Summary {
  events: DemoEvent[];
  workspace: string;
  conversation: string;
  crashed: boolean;
  real: boolean;
  /** Where the Temporal history holds the planted secret (see `activityPayloadsHolding`). */
  secretHeldBy: string[];
}

function summarize({
  events,
  workspace,
  conversation,
  crashed,
  real,
  secretHeldBy,
}: Summary): boolean {
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
  if (secretHeldBy.length > 0) {
    console.log(
      `  raw secret in history: yes (${secretHeldBy.join(', ')}): ` +
        'a PostToolUse redaction protects the model only',
    );
    console.log(
      "  encrypted history:    off here; createAgent({ encryption: 'env', ... }) seals it (docs/security.md)",
    );
  }
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
  client: AgentClient,
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
        await printSettled(client, session, await session.timeline());
        for (const request of await session.pendingPermissions()) {
          if (handled.has(request.requestId)) continue;
          handled.add(request.requestId);
          say(
            `  ? permission request ${request.requestId}: ${request.toolName} (${request.toolKind}) ` +
              `on ${request.affectedPaths.join(', ') || '(no paths)'}, input ${JSON.stringify(request.input)}`,
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
    await printSettled(
      client,
      session,
      await session.timeline().catch(() => [] as TimelineEntry[]),
    );
  }
}

/**
 * Print the entries not printed yet, up to the first dispatch still running. What a
 * `continue` changed is read from the session's history, where each dispatch's input and its
 * callbacks' outputs are recorded.
 */
async function printSettled(
  client: AgentClient,
  session: Session,
  timeline: readonly TimelineEntry[],
): Promise<void> {
  let end = printed;
  while (end < timeline.length && !timeline[end]!.pending) end++;
  if (end === printed) return;
  let changes = new Map<string, DispatchChange>();
  if (timeline.slice(printed, end).some((entry) => entry.outcome === 'continue')) {
    const history = await historyOf(client, session).catch(() => undefined);
    if (history) changes = changesOf(goldenFromHistories(session.id, [history]));
  }
  for (; printed < end; printed++) {
    const entry = timeline[printed]!;
    say(describeEntry(entry, changes.get(dispatchKey(timeline, printed))));
  }
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
  const starting = Date.now();
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
  say(
    `${name} (pid ${child.pid}) polls task queue ${env.taskQueue} (ready after ${seconds(Date.now() - starting)})`,
  );
  return { name, child };
}
