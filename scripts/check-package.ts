/**
 * CI check of the package as a user gets it (run by `.ci/run` after `npm run build`):
 *
 * 1. `dist/workflow-bundle.js` is what bundling `dist/workflows` gives now, and its manifest
 *    matches the files (the build's bundle is the sources' bundle).
 * 2. `npm pack` ships that very file and manifest, byte for byte.
 * 3. The tarball installs in a fresh folder outside the repo (`npm install <tgz>`; npm 7 and
 *    later install the `zod` and `ai` peers too), a TypeScript script there that defines a
 *    tool with its own `zod` type-checks against the package's types, and run with node it
 *    starts an agent whose worker loads the shipped bundle (`workflowBundle.from` is
 *    `package`, the path is the installed file) and runs the tool in a session; and the
 *    `durable-agent-sdk/codec-server` subpath encodes and decodes a payload over HTTP, and the
 *    `durable-agent-sdk/ui` subpath serves the session list behind its token.
 * 4. Sub-agents across two processes of the installed package, as a user splits an app: a
 *    definition file both import (`subagent-agent.ts`: a top session that delegates through
 *    `Task` to the sub-agent `writer`, with `scriptedModel` keyed on `request.agentPath`, and
 *    a PreToolUse hook, inherited by the sub-agent, that logs each call's `agentPath`),
 *    type-checked with the first agent; a worker process (`createAgentWorker`), then a client
 *    process (`createAgentClient`) that sends the prompt, finds the writer's `Write` ask (the
 *    default preset asks a person) in the parent's `pendingPermissions()` with path
 *    `main/writer`, and approves it through the parent's handle. Checked: the send completed
 *    with the text the sub-agent's result gives, `notes.md` (with the writer's content) is
 *    the workspace's only file and the hook saw one `Write`, the hook saw `main` and
 *    `main/writer` once each, and the worker stopped cleanly when its stdin closed.
 * 5. MCP servers, as a user of the installed package meets them: before the optional peer
 *    `@modelcontextprotocol/sdk` is installed, `createAgent` with `mcpServers` fails with a
 *    `ConfigError` naming the package (skipped, with its ok line, when the folder already has
 *    the SDK from another dependency); then, with the SDK and `server-everything` installed at
 *    the repo's devDependencies' versions, `mcp-agent.ts` (type-checked with the first agent,
 *    before the SDK was there) runs the docs' quick-start server through `npx`: the scripted
 *    model calls `mcp__everything__echo` (allowed by `permissionRules`) and answers with the
 *    result. Checked: the send completed, the model got the echo, the PreToolUse hook saw
 *    server `everything` and tool `echo`, and the server's processes (the app's own
 *    descendants in `ps` while the hook ran) are gone within 5 s of `agent.close()`.
 * 6. The installed package's cluster command runs (`npx tsx
 *    node_modules/durable-agent-sdk/scripts/cluster.ts`): the tarball ships the `deploy/`
 *    files it reads, as in the repo; `certs` makes a CA; and when this clone has built the
 *    cluster's binaries (`npx tsx scripts/cluster.ts build`) and PostgreSQL is installed, `start`
 *    from the installed package brings a cluster up (its binaries found through
 *    `DURABLE_AGENT_CACHE_DIR`), `check` finds it usable, and `stop --clean` removes it.
 *
 *   npm run build && npx tsx scripts/check-package.ts [--keep]
 *
 * Uses the Temporal server at `TEMPORAL_ADDRESS`, else starts a dev server of its own.
 * Needs the npm registry (or npm's cache) for the package's dependencies. Exit 1 on a
 * failed check; `--keep` leaves the temporary folder for a look.
 */
import { packBuild } from './pack-build.js';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startDevServer, type DevServer } from '../src/server/dev-server.js';
import {
  WORKFLOW_BUNDLE_FILE,
  WORKFLOW_BUNDLE_MANIFEST_FILE,
  bundleWorkflowSources,
  checkPrebuiltBundle,
} from '../src/worker/workflow-code.js';
import {
  DYNAMIC_CONFIG_FILE,
  SCHEMA_SETUP_SCRIPT,
  SERVER_CONFIG_FILE,
  TEMPORAL_SERVER_VERSION,
  freeClusterPort,
} from './cluster.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(repo, 'dist');
const keep = process.argv.includes('--keep');
const execFileAsync = promisify(execFile);
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** What a new user writes first: an agent with a custom tool, on a running server. */
const FIRST_AGENT = `import { realpathSync } from 'node:fs';
const importStarted = performance.now();
const { z } = await import('zod');
const { createAgent, defineTool } = await import('durable-agent-sdk');
const { scriptedModel, toolCall } = await import('durable-agent-sdk/testing');
const subpaths = {
  server: typeof (await import('durable-agent-sdk/server')).startDevServer,
  payloads: typeof (await import('durable-agent-sdk/payloads')).encryptionCodec,
};
const importMs = Math.round(performance.now() - importStarted);

let toolRan = false;
const weather = defineTool({
  name: 'Weather',
  description: 'Current weather of a city',
  kind: 'readonly',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    toolRan = true;
    return \`Sunny in \${city}\`;
  },
});
const started = performance.now();
const agent = await createAgent({
  model: scriptedModel([toolCall('Weather', { city: 'Paris' }), 'Sunny in Paris, said the tool.']),
  tools: [weather],
  advanced: { temporal: { address: process.env.TEMPORAL_ADDRESS! } },
});
const createAgentMs = Math.round(performance.now() - started);
const response = await agent.send('Weather in Paris?');
// The ui subpath: the session page lists the session that just ran, behind its token.
const { createSessionUi } = await import('durable-agent-sdk/ui');
const ui = await createSessionUi({ client: agent.client.temporal, taskQueue: agent.worker.taskQueue });
const refused = (await fetch(ui.url + '/')).status;
const listed = await fetch(ui.url + '/', { headers: { Authorization: 'Bearer ' + ui.token } });
const uiPage = { refused, status: listed.status, listsSession: (await listed.text()).includes('data-testid="session-row"') };
await ui.close();
await agent.close();
// The codec-server subpath: an encode and a decode round trip over HTTP.
const { createCodecServer } = await import('durable-agent-sdk/codec-server');
const { randomBytes } = await import('node:crypto');
const codec = await createCodecServer({
  keys: { currentKeyId: 'k1', keys: { k1: randomBytes(32) } },
  token: 'check-package-token-0123456789',
});
const call = async (path: string, body: unknown) => {
  const res = await fetch(codec.url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer check-package-token-0123456789' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { payloads: { metadata: Record<string, string>; data?: string }[] };
};
const plain = { payloads: [{ metadata: { encoding: btoa('json/plain') }, data: btoa('"hi"') }] };
const sealed = await call('/encode', plain);
const opened = await call('/decode', sealed);
await codec.close();
const codecRoundTrip =
  sealed.payloads[0]?.data !== plain.payloads[0]!.data && JSON.stringify(opened) === JSON.stringify(plain);
const source = agent.worker.workflowBundle;
console.log(
  JSON.stringify({
    importMs,
    createAgentMs,
    status: response.status,
    text: response.text(),
    toolRan,
    subpaths,
    codecRoundTrip,
    uiPage,
    workflowBundle: 'codePath' in source ? { ...source, codePath: realpathSync(source.codePath) } : source,
  }),
);
`;

/**
 * The sub-agent app, as a user splits it: one definition file both processes import (the
 * fingerprint includes the hook sources, so the worker and the client must share it), a
 * worker process and a client process. The top session delegates through `Task` to `writer`,
 * whose `Write` asks a person (the default preset); the PreToolUse hook, which the sub-agent
 * inherits, appends each call's `agentPath` and tool to `hook.log`.
 */
const SUBAGENT_AGENT = `import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { HookEvent, type AgentOptions } from 'durable-agent-sdk';
import { scriptedModel, toolCall } from 'durable-agent-sdk/testing';

// Both processes get the same folder and task queue from the environment.
const dir = process.env.PACK_SUBAGENT_DIR!;
const workspace = join(dir, 'workspace');
const hookLog = join(dir, 'hook.log');

export const definition: AgentOptions = {
  name: 'pack-check-subagents',
  model: scriptedModel((request) => {
    const last = request.messages.at(-1);
    if (request.agentPath === 'main/writer') {
      if (last?.role !== 'tool') return toolCall('Write', { file_path: 'notes.md', content: 'from the writer' });
      return \`writer got: \${String(last.results[0]?.status)}\`;
    }
    if (last?.role === 'tool') return \`parent got: \${String(last.results[0]?.model)}\`;
    return toolCall('Task', { description: 'write the notes', prompt: 'Write notes.md', subagent_type: 'writer' });
  }),
  workspaceRoots: [workspace],
  advanced: {
    hooks: {
      [HookEvent.PreToolUse]: [
        async (input) => {
          appendFileSync(hookLog, \`\${input.agentPath ?? 'main'} \${input.toolName}\\n\`);
          return { action: 'continue' };
        },
      ],
    },
    subagents: {
      agents: { writer: { description: 'Writes notes', prompt: 'You write.', tools: ['Write'] } },
    },
    temporal: { address: process.env.TEMPORAL_ADDRESS!, taskQueue: process.env.PACK_SUBAGENT_QUEUE! },
  },
};
`;

/** The worker process: prints `ready` once it polls, stops when its stdin closes. */
const SUBAGENT_WORKER = `import { createAgentWorker } from 'durable-agent-sdk';
import { definition } from './subagent-agent.js';

const worker = await createAgentWorker(definition);
console.log(\`ready \${JSON.stringify({ taskQueue: worker.taskQueue, version: worker.version })}\`);
for await (const _ of process.stdin);
await worker.shutdown();
`;

/**
 * The client process: starts a session, sends the prompt, waits for the sub-agent's ask in
 * the parent's pendingPermissions(), approves it through the parent's handle, and prints
 * what it saw as one JSON line.
 */
const SUBAGENT_CLIENT = `import { createAgentClient, type PendingPermission } from 'durable-agent-sdk';
import { definition } from './subagent-agent.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms: Record<string, number> = {};
let last = performance.now();
const lap = (name: string) => {
  ms[name] = Math.round(performance.now() - last);
  last = performance.now();
};
const client = await createAgentClient(definition);
lap('createAgentClient');
const session = await client.createSession();
lap('createSession');
const call = session.send('write the notes');
let pending: PendingPermission[] = [];
for (const waitUntil = Date.now() + 20_000; Date.now() < waitUntil; await sleep(100)) {
  if ((pending = await session.pendingPermissions()).length > 0) break;
}
lap('ask');
const asks = pending.map(({ toolName, agentPath, sessionId, requestId }) => ({ toolName, agentPath, sessionId, requestId }));
// Approve only the ask expected; anything else is reported, and the send is given up on.
const expected = pending.length === 1 && pending[0]!.agentPath === 'main/writer' && pending[0]!.toolName === 'Write';
if (expected) await session.approve(pending[0]!.requestId);
let timer: ReturnType<typeof setTimeout> | undefined;
const timedOut = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), expected ? 30_000 : 2_000)));
const response = await Promise.race([call, timedOut]);
clearTimeout(timer);
lap('send');
const pendingAfter = (await session.pendingPermissions()).length;
await session.close();
await client.close();
lap('close');
console.log(
  JSON.stringify({
    ms,
    sessionId: session.id,
    asks,
    approved: expected,
    pendingAfter,
    send: response ? { status: response.status, text: response.text() } : 'no answer in time',
  }),
);
`;

/** An agent with `mcpServers` in a folder without `@modelcontextprotocol/sdk`: what it throws. */
const MCP_MISSING = `import { ConfigError, createAgent } from 'durable-agent-sdk';
import { scriptedModel } from 'durable-agent-sdk/testing';

let outcome: { thrown: string; code?: string; configError: boolean; message: string } | 'started';
try {
  const agent = await createAgent({
    model: scriptedModel(['never asked']),
    tools: [],
    mcpServers: { everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] } },
    advanced: { temporal: { address: process.env.TEMPORAL_ADDRESS! } },
  });
  await agent.close();
  outcome = 'started';
} catch (error) {
  const e = error as Error & { code?: string };
  outcome = { thrown: e.name, code: e.code, configError: error instanceof ConfigError, message: e.message };
}
console.log(JSON.stringify(outcome));
`;

/**
 * The docs' MCP quick start, cut to one call: the scripted model calls the everything
 * server's echo, then answers with what it got; the PreToolUse hook records the call's server
 * and tool, and this process's descendants running the server (it runs while a session is
 * open), which must be gone soon after `agent.close()`.
 */
const MCP_AGENT = `import { execFileSync } from 'node:child_process';
import { createAgent, HookEvent } from 'durable-agent-sdk';
import { scriptedModel, toolCall } from 'durable-agent-sdk/testing';

/** This process's descendants whose command line names server-everything. */
function serverProcesses(): { pid: number; args: string }[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .trim()
    .split('\\n')
    .map((line) => {
      const [pid, ppid, ...args] = line.trim().split(/\\s+/);
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(' ') };
    });
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) if (mine.has(row.ppid) && !mine.has(row.pid)) grew = Boolean(mine.add(row.pid));
  }
  return rows
    .filter((row) => row.pid !== process.pid && mine.has(row.pid) && row.args.includes('server-everything'))
    .map(({ pid, args }) => ({ pid, args }));
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const message = process.env.PACK_MCP_MESSAGE!;
let toolResult: string | undefined;
const hookSaw: { toolName?: string; mcpServer?: string; mcpTool?: string }[] = [];
let running: { pid: number; args: string }[] = [];
const ms: Record<string, number> = {};
let last = performance.now();
const lap = (name: string) => {
  ms[name] = Math.round(performance.now() - last);
  last = performance.now();
};
const agent = await createAgent({
  model: scriptedModel((request) => {
    const lastMessage = request.messages.at(-1);
    if (lastMessage?.role !== 'tool') return toolCall('mcp__everything__echo', { message });
    toolResult = lastMessage.results[0]?.model;
    return \`the echo said: \${String(toolResult)}\`;
  }),
  tools: [],
  mcpServers: {
    everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
  },
  advanced: {
    permissionRules: { allow: ['mcp__everything__echo'] },
    hooks: {
      [HookEvent.PreToolUse]: [
        async (input) => {
          hookSaw.push({ toolName: input.toolName, mcpServer: input.mcpServer, mcpTool: input.mcpTool });
          running = serverProcesses();
          return { action: 'continue' };
        },
      ],
    },
    temporal: { address: process.env.TEMPORAL_ADDRESS! },
  },
});
lap('createAgent');
const response = await agent.send('Echo the message');
lap('send');
await agent.close();
lap('close');
let aliveAfterClose = running.filter(({ pid }) => alive(pid));
for (const waitUntil = Date.now() + 5_000; aliveAfterClose.length > 0 && Date.now() < waitUntil; ) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  aliveAfterClose = aliveAfterClose.filter(({ pid }) => alive(pid));
}
lap('serverGone');
console.log(
  JSON.stringify({
    ms,
    status: response.status,
    text: response.text(),
    toolCalls: response.toolCalls.map(({ toolName, status }) => ({ toolName, status })),
    toolResult,
    hookSaw,
    running,
    aliveAfterClose,
  }),
);
`;

/** A failed check: thrown by {@link fail}, so every `finally` on its way out runs first. */
class CheckFailed extends Error {}
// Reported once the stack has unwound (the temp folder removed, the dev server stopped).
process.on('uncaughtException', (error) => {
  if (!(error instanceof CheckFailed)) throw error;
  console.error(`check-package: FAILED: ${error.message}`);
  process.exit(1);
});
function fail(message: string): never {
  throw new CheckFailed(message);
}
function ok(message: string): void {
  console.log(`check-package: ok: ${message}`);
}
function commandExists(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/**
 * Step 4: the sub-agent app's worker process, then its client process, against `address`;
 * the folder `dir` holds the workspace and the hook's log. Returns what was wrong, or
 * undefined (after its `ok` line). The worker is stopped before it returns.
 */
async function runSubagentApp(
  app: string,
  dir: string,
  address: string,
): Promise<string | undefined> {
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: address,
    DURABLE_AGENT_WORKFLOW_BUNDLE: '',
    PACK_SUBAGENT_DIR: dir,
    PACK_SUBAGENT_QUEUE: `pack-check-subagents-${randomUUID()}`,
  };
  const started = performance.now();
  const worker = spawn(process.execPath, [join(app, 'out', 'subagent-worker.js')], {
    cwd: app,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let workerOutput = '';
  worker.stdout.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
  worker.stderr.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    worker.on('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      resolve();
    }),
  );
  const withWorker = (message: string) =>
    `${message}\n--- the worker process's output ---\n${workerOutput.trim()}`;
  let failure: string | undefined;
  let done = '';
  try {
    for (const waitUntil = Date.now() + 30_000; ; await sleep(50)) {
      if (/^ready /m.test(workerOutput)) break;
      if (exitCode !== undefined || Date.now() > waitUntil) {
        return (failure = withWorker(
          `the worker process (createAgentWorker) ${exitCode !== undefined ? `exited (${exitCode})` : 'did not print ready within 30 s'}`,
        ));
      }
    }
    const workerMs = Math.round(performance.now() - started);
    const clientStarted = performance.now();
    let printed: string;
    try {
      printed = (
        await execFileAsync(process.execPath, [join(app, 'out', 'subagent-client.js')], {
          cwd: app,
          env,
          encoding: 'utf8',
          timeout: 90_000,
        })
      ).stdout;
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string; message: string };
      return (failure = withWorker(
        `the client process (createAgentClient) failed: ${(e.stderr || e.stdout || e.message).trim()}`,
      ));
    }
    const clientMs = Math.round(performance.now() - clientStarted);
    const seen = JSON.parse(printed.trim().split('\n').at(-1) ?? '{}') as {
      sessionId: string;
      asks: { toolName: string; agentPath?: string; sessionId?: string; requestId: string }[];
      approved: boolean;
      pendingAfter: number;
      send: { status: string; text: string } | string;
      ms: Record<string, number>;
    };
    const [ask] = seen.asks;
    const expectedText = 'parent got: writer got: success';
    const workspace = join(dir, 'workspace');
    const files = readdirSync(workspace);
    const notes = files.includes('notes.md')
      ? readFileSync(join(workspace, 'notes.md'), 'utf8')
      : undefined;
    const hookLog = join(dir, 'hook.log');
    const hookLines = existsSync(hookLog) ? readFileSync(hookLog, 'utf8').trim().split('\n') : [];
    if (
      seen.asks.length !== 1 ||
      ask?.toolName !== 'Write' ||
      ask.agentPath !== 'main/writer' ||
      !ask.sessionId?.startsWith(`${seen.sessionId}/`) ||
      !ask.requestId.startsWith(`${ask.sessionId}#`)
    ) {
      failure =
        `the parent's pendingPermissions() did not list the sub-agent's Write ask once, with ` +
        `path main/writer and a child session of ${seen.sessionId}: ${JSON.stringify(seen.asks)}`;
    } else if (
      typeof seen.send === 'string' ||
      seen.send.status !== 'completed' ||
      seen.send.text !== expectedText
    ) {
      failure =
        `after the approval through the parent's handle, the send did not complete with ` +
        `'${expectedText}': ${JSON.stringify(seen.send)}`;
    } else if (seen.pendingAfter !== 0) {
      failure = `the parent's pendingPermissions() still lists ${seen.pendingAfter} ask(s) after the send completed`;
    } else if (files.join() !== 'notes.md' || notes !== 'from the writer') {
      failure =
        `the sub-agent's approved Write did not write notes.md once in the workspace: files ` +
        `${JSON.stringify(files)}, notes.md ${JSON.stringify(notes)}`;
    } else if (hookLines.join('|') !== 'main Task|main/writer Write') {
      failure =
        `the PreToolUse hook did not see the calls of main (Task) and main/writer (Write), ` +
        `once each: it saw ${JSON.stringify(hookLines)}`;
    }
    if (failure) return (failure = withWorker(failure));
    done =
      `two processes of the installed package: a worker (createAgentWorker, ready in ${workerMs} ms) ` +
      `and a client (createAgentClient, ${clientMs} ms; ${JSON.stringify(seen.ms)}); the top session's Task started the ` +
      `sub-agent writer, whose Write ask the parent's pendingPermissions() listed as main/writer ` +
      `and the parent's approve() answered; notes.md, the workspace's only file, has the writer's ` +
      `content, the inherited PreToolUse hook saw main (Task) and main/writer (Write) once ` +
      `each, the send completed ('${expectedText}')`;
  } finally {
    worker.stdin.end();
    await Promise.race([exited, sleep(10_000)]);
    if (exitCode === undefined) {
      worker.kill('SIGKILL');
      if (!failure)
        failure = withWorker('the worker process did not stop within 10 s of its stdin closing');
    } else if (exitCode !== 0 && !failure) {
      failure = withWorker(`the worker process exited ${exitCode} when its stdin closed`);
    }
  }
  if (failure) return failure;
  ok(done);
  return undefined;
}

/** Runs `out/<name>.js` of the app with node against `address`; its last line, parsed. */
function runAppScript<T>(app: string, name: string, address: string, env: NodeJS.ProcessEnv): T {
  let printed: string;
  try {
    printed = execFileSync(process.execPath, [join(app, 'out', `${name}.js`)], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, ...env, TEMPORAL_ADDRESS: address, DURABLE_AGENT_WORKFLOW_BUNDLE: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    fail(`${name}.js failed: ${(e.stderr || e.stdout || e.message).trim()}`);
  }
  return JSON.parse(printed.trim().split('\n').at(-1) ?? '{}') as T;
}

/**
 * Step 5: an agent with `mcpServers` in the app, before `@modelcontextprotocol/sdk` is
 * installed (a `ConfigError` naming it), then after installing it and `server-everything` at
 * the repo's devDependencies' versions (the docs' quick-start server through npx, one echo).
 */
function runMcpApp(app: string, address: string): void {
  const sdk = '@modelcontextprotocol/sdk';
  const hoisted = join(app, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json');
  if (existsSync(hoisted)) {
    const { version } = JSON.parse(readFileSync(hoisted, 'utf8')) as { version: string };
    ok(
      `MCP without its SDK not tried: the app folder already has ${sdk} ${version} from another ` +
        'dependency of the package',
    );
  } else {
    const outcome = runAppScript<
      { thrown: string; code?: string; configError: boolean; message: string } | 'started'
    >(app, 'mcp-missing', address, {});
    if (outcome === 'started') {
      fail(`createAgent with mcpServers started without ${sdk} installed: no ConfigError`);
    }
    if (
      !outcome.configError ||
      outcome.code !== 'CONFIG_INVALID' ||
      !outcome.message.includes(sdk)
    ) {
      fail(
        `createAgent with mcpServers and no ${sdk} did not throw a ConfigError naming the ` +
          `package: ${JSON.stringify(outcome)}`,
      );
    }
    ok(
      `without ${sdk} (an optional peer, not installed), createAgent with mcpServers threw ` +
        `${outcome.thrown} (${outcome.code}): ${outcome.message.slice(0, outcome.message.lastIndexOf(' (') >>> 0)}`,
    );
  }

  const { devDependencies } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  const wanted = [sdk, '@modelcontextprotocol/server-everything'].map((name) => {
    if (!devDependencies[name]) fail(`the repo's package.json has no devDependency ${name}`);
    return `${name}@${devDependencies[name]}`;
  });
  const installStarted = performance.now();
  run('npm', ['install', ...wanted, '--no-audit', '--no-fund', '--loglevel=error'], app);
  const installMs = Math.round(performance.now() - installStarted);
  const message = `hello from the packed package ${randomUUID().slice(0, 8)}`;
  const seen = runAppScript<{
    ms: Record<string, number>;
    status: string;
    text: string;
    toolCalls: { toolName: string; status: string }[];
    toolResult?: string;
    hookSaw: { toolName?: string; mcpServer?: string; mcpTool?: string }[];
    running: { pid: number; args: string }[];
    aliveAfterClose: { pid: number; args: string }[];
  }>(app, 'mcp-agent', address, { PACK_MCP_MESSAGE: message });
  const echo = `Echo: ${message}`;
  const [call] = seen.toolCalls;
  const [hook] = seen.hookSaw;
  if (seen.status !== 'completed' || seen.text !== `the echo said: ${echo}`) {
    fail(
      `the MCP session did not complete with the echo ('the echo said: ${echo}'): ` +
        JSON.stringify(seen),
    );
  }
  if (seen.toolResult !== echo || seen.toolCalls.length !== 1 || call?.status !== 'success') {
    fail(
      `mcp__everything__echo did not run once with the result '${echo}': result ` +
        `${JSON.stringify(seen.toolResult)}, calls ${JSON.stringify(seen.toolCalls)}`,
    );
  }
  if (
    seen.hookSaw.length !== 1 ||
    hook?.toolName !== 'mcp__everything__echo' ||
    hook.mcpServer !== 'everything' ||
    hook.mcpTool !== 'echo'
  ) {
    fail(
      `the PreToolUse hook did not see one call of server everything, tool echo: ` +
        JSON.stringify(seen.hookSaw),
    );
  }
  if (seen.running.length === 0) {
    fail(
      'no process of the app named server-everything while the hook ran: the stdio server ' +
        'was not found in ps (or ran elsewhere)',
    );
  }
  if (seen.aliveAfterClose.length > 0) {
    fail(
      `the MCP server's processes were still running 5 s after agent.close(): ` +
        JSON.stringify(seen.aliveAfterClose),
    );
  }
  ok(
    `with ${wanted.join(' and ')} installed (${installMs} ms), an agent of the installed package ` +
      `ran the quick-start server through npx: mcp__everything__echo returned '${echo}', the ` +
      `PreToolUse hook saw server everything, tool echo, the send completed; the server's ` +
      `${seen.running.length} process(es) (${seen.running.map(({ pid }) => pid).join(', ')}) ` +
      `were gone after agent.close() (${JSON.stringify(seen.ms)})`,
  );
}

// 1. The build's bundle is the sources' bundle.
const manifestPath = join(dist, WORKFLOW_BUNDLE_MANIFEST_FILE);
const built = checkPrebuiltBundle(manifestPath);
if (!built.ok) fail(`dist has no usable workflow bundle (${built.reason}): run npm run build`);
const builtBundle = readFileSync(built.codePath);
const fresh = (await bundleWorkflowSources(join(dist, 'workflows', 'index.js'))).code;
if (sha256(fresh) !== sha256(builtBundle)) {
  fail(
    `dist/${WORKFLOW_BUNDLE_FILE} is not what bundling dist/workflows gives now: run npm run build`,
  );
}
ok(
  `dist/${WORKFLOW_BUNDLE_FILE} equals a fresh bundle of dist/workflows (sha256 ${sha256(fresh).slice(0, 12)})`,
);

const tmp = mkdtempSync(join(tmpdir(), 'durable-agent-pack-'));
let server: DevServer | undefined;
try {
  // 2. The tarball ships that bundle. --ignore-scripts: check this build, not a new one.
  const tarball = packBuild(repo, tmp);
  const packed = basename(tarball);
  const extracted = join(tmp, 'extracted');
  mkdirSync(extracted);
  run('tar', ['-xzf', tarball, '-C', extracted], tmp);
  for (const file of [WORKFLOW_BUNDLE_FILE, WORKFLOW_BUNDLE_MANIFEST_FILE]) {
    const inTarball = join(extracted, 'package', 'dist', file);
    if (!existsSync(inTarball)) fail(`${packed} has no dist/${file}`);
    if (!readFileSync(inTarball).equals(readFileSync(join(dist, file)))) {
      fail(`dist/${file} in ${packed} differs from the built one`);
    }
  }
  ok(`${packed} ships dist/${WORKFLOW_BUNDLE_FILE} and its manifest as built`);

  // 3. A fresh folder outside the repo, as a user would make it.
  const app = join(tmp, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'pack-check-app', private: true, type: 'module' }, null, 2),
  );
  const installStarted = performance.now();
  run('npm', ['install', tarball, '--no-audit', '--no-fund', '--loglevel=error'], app);
  const installMs = Math.round(performance.now() - installStarted);
  const installed = join(app, 'node_modules', 'durable-agent-sdk');
  const peers = ['zod', 'ai'].map((name) => {
    const top = join(app, 'node_modules', name, 'package.json');
    if (!existsSync(top)) fail(`npm install did not install the peer ${name} at the top level`);
    if (existsSync(join(installed, 'node_modules', name))) {
      fail(`${name} is installed a second time under durable-agent-sdk/node_modules`);
    }
    return `${name} ${(JSON.parse(readFileSync(top, 'utf8')) as { version: string }).version}`;
  });
  ok(
    `npm install <tgz> in a fresh folder (${installMs} ms) installed the peers: ${peers.join(', ')}`,
  );

  writeFileSync(join(app, 'first-agent.ts'), FIRST_AGENT);
  writeFileSync(join(app, 'subagent-agent.ts'), SUBAGENT_AGENT);
  writeFileSync(join(app, 'subagent-worker.ts'), SUBAGENT_WORKER);
  writeFileSync(join(app, 'subagent-client.ts'), SUBAGENT_CLIENT);
  writeFileSync(join(app, 'mcp-missing.ts'), MCP_MISSING);
  writeFileSync(join(app, 'mcp-agent.ts'), MCP_AGENT);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        // Node's types from the repo (a user would add @types/node); nothing else of it.
        typeRoots: [join(repo, 'node_modules', '@types')],
        types: ['node'],
        outDir: 'out',
      },
      files: [
        'first-agent.ts',
        'subagent-agent.ts',
        'subagent-worker.ts',
        'subagent-client.ts',
        'mcp-missing.ts',
        'mcp-agent.ts',
      ],
    }),
  );
  // The repo's TypeScript, on the app's files: the app's zod must fit defineTool's types.
  try {
    run(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
  } catch (error) {
    const e = error as { stdout?: string; message: string };
    fail(
      `the app's files do not type-check against the package:\n${(e.stdout || e.message).trim()}`,
    );
  }
  ok(
    'first-agent.ts (defineTool with the app’s own zod) and the sub-agent app ' +
      '(subagent-agent.ts, subagent-worker.ts, subagent-client.ts) and the MCP scripts ' +
      '(mcp-missing.ts, mcp-agent.ts: no @modelcontextprotocol/sdk installed yet) type-check against the package',
  );

  let address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    server = await startDevServer({ cacheDir: join(repo, '.temporal') });
    address = server.address;
  }
  const output = execFileSync(process.execPath, [join(app, 'out', 'first-agent.js')], {
    cwd: app,
    encoding: 'utf8',
    env: { ...process.env, TEMPORAL_ADDRESS: address, DURABLE_AGENT_WORKFLOW_BUNDLE: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const result = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as {
    importMs: number;
    createAgentMs: number;
    status: string;
    text: string;
    toolRan: boolean;
    subpaths: Record<string, string>;
    codecRoundTrip: boolean;
    uiPage: { refused: number; status: number; listsSession: boolean };
    workflowBundle: { from: string; codePath?: string; reason?: string };
  };
  const expected = realpathSync(join(installed, 'dist', WORKFLOW_BUNDLE_FILE));
  if (result.workflowBundle.from !== 'package' || result.workflowBundle.codePath !== expected) {
    fail(`the installed worker did not load ${expected}: ${JSON.stringify(result.workflowBundle)}`);
  }
  if (
    result.status !== 'completed' ||
    !result.toolRan ||
    result.text !== 'Sunny in Paris, said the tool.'
  ) {
    fail(`the session in the fresh folder did not run the tool: ${JSON.stringify(result)}`);
  }
  if (result.subpaths.server !== 'function' || result.subpaths.payloads !== 'function') {
    fail(`a subpath export did not load: ${JSON.stringify(result.subpaths)}`);
  }
  if (!result.codecRoundTrip) {
    fail('durable-agent-sdk/codec-server did not encode and decode a payload over HTTP');
  }
  if (
    result.uiPage.refused !== 401 ||
    result.uiPage.status !== 200 ||
    !result.uiPage.listsSession
  ) {
    fail(
      `durable-agent-sdk/ui did not serve the session list behind its token: ${JSON.stringify(result.uiPage)}`,
    );
  }
  ok(
    `the installed worker loaded its shipped bundle; first createAgent ${result.createAgentMs} ms ` +
      `(imports ${result.importMs} ms), a session ran the zod-defined tool (server ${address}); ` +
      'the /server and /payloads subpaths load; durable-agent-sdk/codec-server round-tripped a payload; ' +
      'durable-agent-sdk/ui listed the session behind its token (401 without)',
  );

  // 4. Sub-agents across two processes of the installed package: a worker, and a client that
  // answers the sub-agent's ask through the parent's handle.
  const subagentDir = join(tmp, 'subagents');
  mkdirSync(join(subagentDir, 'workspace'), { recursive: true });
  const subagentFailure = await runSubagentApp(app, subagentDir, address);
  if (subagentFailure) fail(`sub-agents: ${subagentFailure}`);

  // 5. MCP: first without the optional peer @modelcontextprotocol/sdk, then with it.
  runMcpApp(app, address);

  // 6. The cluster command of the installed package.
  for (const file of [SERVER_CONFIG_FILE, DYNAMIC_CONFIG_FILE, SCHEMA_SETUP_SCRIPT]) {
    const shipped = join(installed, relative(repo, file));
    if (!existsSync(shipped)) fail(`${packed} has no ${relative(repo, file)}`);
    if (!readFileSync(shipped).equals(readFileSync(file))) {
      fail(`${relative(repo, file)} in ${packed} differs from the repo's`);
    }
  }
  const tsx = join(repo, 'node_modules', '.bin', 'tsx');
  const clusterScript = join(installed, 'scripts', 'cluster.ts');
  // Not under tmp: PostgreSQL (user postgres, when this runs as root) must pass every folder
  // above the cluster's; the cluster's own 0700 folder the script opens itself.
  const clusterDir = mkdtempSync(join(tmpdir(), 'durable-agent-pack-cluster '));
  run(tsx, [clusterScript, 'certs', '--dir', clusterDir], app);
  if (!existsSync(join(clusterDir, 'tls', 'ca.pem'))) {
    fail(`the installed cluster.ts certs made no ${join(clusterDir, 'tls', 'ca.pem')}`);
  }
  const cache = join(repo, '.temporal');
  const built = existsSync(join(cache, 'cluster', `v${TEMPORAL_SERVER_VERSION}`, 'bin', 'server'));
  const postgres = existsSync('/usr/lib/postgresql') || commandExists('initdb');
  if (!built || !postgres) {
    rmSync(clusterDir, { recursive: true, force: true });
    ok(
      `${packed} ships deploy/ for scripts/cluster.ts, whose certs ran from the installed ` +
        `package; start not tried (${built ? 'no PostgreSQL' : 'cluster binaries not built: npx tsx scripts/cluster.ts build'})`,
    );
  } else {
    const port = await freeClusterPort();
    const clusterEnv = { ...process.env, DURABLE_AGENT_CACHE_DIR: cache };
    // The cluster is stopped before any failure is reported.
    let failure: string | undefined;
    try {
      const exports = execFileSync(
        tsx,
        [clusterScript, 'start', '--tls', '--dir', clusterDir, '--port', String(port)],
        { cwd: app, encoding: 'utf8', env: clusterEnv, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const checked = execFileSync(tsx, [clusterScript, 'check', '--dir', clusterDir], {
        cwd: app,
        encoding: 'utf8',
        env: clusterEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      if (!exports.includes(`export TEMPORAL_ADDRESS='127.0.0.1:${port}'`)) {
        failure = `the installed cluster.ts start printed no TEMPORAL_ADDRESS export: ${exports}`;
      } else if (!checked.includes(': usable')) {
        failure = `the installed cluster.ts check did not find the cluster usable: ${checked}`;
      }
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string; message: string };
      failure = `the installed cluster.ts failed: ${(e.stderr || e.stdout || e.message).trim()}`;
    } finally {
      execFileSync(tsx, [clusterScript, 'stop', '--dir', clusterDir, '--clean'], {
        cwd: app,
        env: clusterEnv,
        stdio: 'ignore',
      });
    }
    if (failure) fail(failure);
    ok(
      `${packed} ships deploy/ for scripts/cluster.ts; from the installed package it ` +
        `made certificates, started a cluster (mTLS, port ${port}), checked it usable and removed it`,
    );
  }
} finally {
  await server?.stop();
  if (keep) console.log(`check-package: kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}
