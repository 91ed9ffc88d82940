/**
 * Audit logs of a long session: a real session of BENCH_AUDIT_TURNS turns (default 1,000)
 * run on one dev server with a scripted model, each turn a Read with a PreToolUse hook that
 * gives a reason and a PostToolUse hook, every 100th turn a Write a person approves; then
 * `durable-agent audit-export` (every run, from the server), `audit-verify` offline and
 * `audit-verify --session` (the entries made again from the server's history) run as child
 * processes, each timed with its peak memory (maxRSS, by /usr/bin/time), beside
 * `durable-agent --version` (the process's floor: Node, tsx, the CLI's modules).
 *
 *   npm run bench:audit
 *   BENCH_AUDIT_TURNS=100 npm run bench:audit
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createAgent, HookEvent } from '../src/index.js';
import { startDevServer } from '../src/server/dev-server.js';
import { scriptedModel, toolCall } from '../src/testing/index.js';
import { fmt, printTable } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..');
const TURNS = Number(process.env.BENCH_AUDIT_TURNS ?? 1000);
const ASK_EVERY = 100;
const work = mkdtempSync(join(tmpdir(), 'bench-audit-'));
writeFileSync(join(work, 'notes.txt'), 'n'.repeat(400));

const server = process.env.TEMPORAL_ADDRESS
  ? undefined
  : await startDevServer({ cacheDir: join(repoRoot, '.temporal') });
const address = process.env.TEMPORAL_ADDRESS ?? server!.address;
console.log(`Temporal at ${address}; ${new Date().toISOString()}; ${TURNS} turns`);

const agent = await createAgent({
  model: scriptedModel((request) => {
    const last = request.messages.filter((m) => m.role === 'user').at(-1);
    const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
    if (request.step > 0) return `done: ${text.slice(0, 40)}`;
    if (text.startsWith('write')) {
      return toolCall('Write', { file_path: 'out.txt', content: text.slice(0, 80) });
    }
    return toolCall('Read', { file_path: 'notes.txt' });
  }),
  workspaceRoots: [work],
  advanced: {
    hooks: {
      [HookEvent.PreToolUse]: [
        async (input) => ({ action: 'continue', reason: `audit: ${input.toolName}` }),
      ],
      [HookEvent.PostToolUse]: [async () => ({ action: 'continue' })],
    },
    temporal: { address, taskQueue: `bench-audit-${randomUUID()}` },
  },
});

const session = await agent.createSession({ sessionId: `bench-audit-${randomUUID()}` });
const started = Date.now();
for (let turn = 1; turn <= TURNS; turn++) {
  if (turn % ASK_EVERY === 0) {
    const response = session.send(`write turn ${turn}`);
    for (;;) {
      const [pending] = await session.pendingPermissions();
      if (pending) {
        await session.approve(pending.requestId);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await response;
  } else {
    await session.send(`turn ${turn}: read the notes`.padEnd(200, '.'));
  }
  if (turn % 100 === 0) console.log(`  turn ${turn} (${fmt((Date.now() - started) / 1000)} s)`);
}
const sessionSeconds = (Date.now() - started) / 1000;

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const keyFile = join(work, 'key.pem');
const pubFile = join(work, 'key.pub.pem');
const logFile = join(work, 'audit.jsonl');
writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
writeFileSync(pubFile, publicKey.export({ type: 'spki', format: 'pem' }));

/** One CLI run under /usr/bin/time: wall seconds and peak RSS (MB). */
async function timed(args: string[]): Promise<{ seconds: number; maxRssMb: number }> {
  const { stderr } = await promisify(execFile)(
    '/usr/bin/time',
    [
      '-f',
      'BENCH %e %M',
      process.execPath,
      '--import',
      'tsx',
      'src/cli/main.ts',
      ...args,
      ...(args[0] === '--version' ? [] : ['--address', address, '--timeout', '10m']),
    ],
    { cwd: repoRoot, env: { ...process.env, DEBUG: '' }, maxBuffer: 1 << 30 },
  );
  const line = stderr.split('\n').find((l) => l.startsWith('BENCH '));
  if (!line) throw new Error(`no timing in: ${stderr}`);
  const [, seconds, kb] = line.split(' ');
  return { seconds: Number(seconds), maxRssMb: Number(kb) / 1024 };
}

const floor = await timed(['--version']);
const exported = await timed(['audit-export', session.id, '--key', keyFile, '--out', logFile]);
const offline = await timed(['audit-verify', logFile, '--pub', pubFile]);
const online = await timed(['audit-verify', logFile, '--pub', pubFile, '--session', session.id]);

const lines = readFileSync(logFile, 'utf8').trim().split('\n');
const header = JSON.parse(lines[0]!) as { runIds: string[] };
const kinds = new Map<string, number>();
for (const line of lines.slice(1, -1)) {
  const kind = (JSON.parse(line) as { kind: string }).kind;
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
}

console.log(
  `\nsession: ${TURNS} turns in ${fmt(sessionSeconds)} s, ${header.runIds.length} runs; ` +
    `log: ${lines.length - 2} entries, ${fmt(statSync(logFile).size / 1024 / 1024, 2)} MB ` +
    `(${[...kinds].map(([kind, n]) => `${kind} ${n}`).join(', ')})`,
);
printTable(
  `Audit log of a ${TURNS}-turn session (CLI child processes, /usr/bin/time)`,
  ['command', 'wall s', 'maxRSS MB', 'over the floor, s', 'over the floor, MB'],
  [
    ['durable-agent --version (floor)', floor, '', ''] as const,
    ['audit-export <session> (every run, from the server)', exported],
    ['audit-verify --pub (offline: chain, signature)', offline],
    ['audit-verify --pub --session (against the server)', online],
  ].map(([name, run]) => {
    const r = run as { seconds: number; maxRssMb: number };
    return [
      name as string,
      fmt(r.seconds, 2),
      fmt(r.maxRssMb, 0),
      r === floor ? '' : fmt(r.seconds - floor.seconds, 2),
      r === floor ? '' : fmt(r.maxRssMb - floor.maxRssMb, 0),
    ];
  }),
);

await agent.shutdown();
await server?.stop();
