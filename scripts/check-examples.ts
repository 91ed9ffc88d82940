/**
 * CI check of the scenario folders in `examples/` as a user gets them (run after `npm run
 * build`): `npm pack` once, then for each example its folder is copied outside the repo, its
 * `durable-agent-sdk` dependency pointed at the tarball (`npm install <tgz>`, which installs
 * the example's own dependencies too), its TypeScript checked with `tsc --noEmit`, and its
 * scripts run as its README says, end to end, against a Temporal server:
 *
 * - two-process-approval: the worker, the client, `durable-agent pending` and `approve`;
 * - encryption: `npm start`, `durable-agent inspect` with and without the key, and
 *   `npm run codec-server` decoding a sealed payload behind its token;
 * - session-inbox and browser-chat: their pages driven in headless Chromium
 *   (`/usr/bin/chromium`, or `CHROMIUM_PATH`);
 * - cluster: `npm run cluster -- start --tls` and the agent over mTLS, only where this clone
 *   built the cluster's binaries and PostgreSQL is installed (else it says it skipped).
 *
 * About 170 s for the five on the 2-core machine (npm's cache warm).
 *
 *   npm run build && npx tsx scripts/check-examples.ts [--keep] [name ...]
 *
 * Uses the Temporal server at `TEMPORAL_ADDRESS`, else starts a dev server of its own. Needs
 * the npm registry (or npm's cache). Exit 1 on a failed check; `--keep` leaves the temporary
 * folder for a look; names run only those examples.
 */
import { packBuild } from './pack-build.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { freePort, startDevServer, type DevServer } from '../src/server/dev-server.js';
import { launchChromium } from '../test/helpers/chromium.js';
import { TEMPORAL_SERVER_VERSION, freeClusterPort } from './cluster.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const only = args.filter((arg) => !arg.startsWith('--'));

/** One example: its folder under `examples/` and how a user drives it. */
interface Example {
  name: string;
  drive(app: App): Promise<string>;
  /** Why it cannot run on this machine, if it cannot: the check says so and passes it by. */
  skip?(): string | undefined;
}

/** A copied, installed example folder and what runs there. */
interface App {
  dir: string;
  env: NodeJS.ProcessEnv;
  /** `npm run <script> [-- args]` in the folder, as a process group of its own. */
  start(script: string, scriptArgs?: string[], extraEnv?: NodeJS.ProcessEnv): Running;
  /** A command to completion in the folder; its stdout. Throws on a non-zero exit. */
  run(command: string, commandArgs: string[], extraEnv?: NodeJS.ProcessEnv): string;
}

interface Running {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects after `ms` or on exit. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  exit: Promise<number | null>;
  stop(): Promise<number | null>;
}

class CheckFailed extends Error {}

function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailed(message);
}

const running = new Set<Running>();

function startProcess(
  script: string,
  scriptArgs: string[],
  dir: string,
  env: NodeJS.ProcessEnv,
): Running {
  const npmArgs = ['run', '--silent', script, ...(scriptArgs.length ? ['--', ...scriptArgs] : [])];
  const child = spawn('npm', npmArgs, {
    cwd: dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // 'close', not 'exit': npm ends at a signal at once, its script's processes (holding the
  // same pipes) when they are done.
  const exit = new Promise<number | null>((resolve) => child.once('close', resolve));
  let exited = false;
  void exit.then(() => (exited = true));
  const handle: Running = {
    child,
    output: () => out,
    exit,
    async waitFor(pattern, ms = 60_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const match = pattern.exec(out);
        if (match) return match;
        if (exited) throw new CheckFailed(`npm run ${script} exited before ${pattern}:\n${out}`);
        if (Date.now() > deadline) {
          throw new CheckFailed(`npm run ${script}: no ${pattern} in ${ms} ms:\n${out}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      if (!exited) {
        const signalGroup = (signal: NodeJS.Signals) => {
          try {
            process.kill(-child.pid!, signal);
          } catch {
            // The group is gone already.
          }
        };
        signalGroup('SIGTERM');
        const timer = setTimeout(() => !exited && signalGroup('SIGKILL'), 15_000);
        await exit;
        clearTimeout(timer);
      }
      running.delete(handle);
      return exit;
    },
  };
  running.add(handle);
  return handle;
}

const examples: Example[] = [
  {
    name: 'two-process-approval',
    async drive(app) {
      const worker = app.start('worker');
      await worker.waitFor(/\[worker\] polling task queue/);
      const client = app.start('client');
      const [, sessionId, requestId] = await client.waitFor(
        /approve it: npx durable-agent approve (\S+) (\S+)/,
      );
      const pending = app.run('npx', ['durable-agent', 'pending', sessionId!]);
      expect(
        pending.includes(requestId!) && pending.includes('Write'),
        `durable-agent pending did not list ${requestId}:\n${pending}`,
      );
      app.run('npx', ['durable-agent', 'approve', sessionId!, requestId!]);
      const code = await client.exit;
      expect(code === 0, `the client exited ${code}:\n${client.output()}`);
      expect(
        client.output().includes('[client] [completed] The Write call ended') &&
          client.output().includes('[client] tool call Write: success'),
        `the client did not finish with the approved Write:\n${client.output()}`,
      );
      expect(existsSync(join(app.dir, 'NOTES.md')), 'the approved Write made no NOTES.md');
      await worker.waitFor(/\[worker\] PostToolUse Write/, 10_000);
      // SIGTERM goes to the process group, as Ctrl-C does: npm ends by the signal, the worker
      // after its in-flight work.
      await worker.stop();
      expect(
        worker.output().includes('[worker] stopped'),
        `the worker did not stop cleanly on SIGTERM:\n${worker.output()}`,
      );
      return `worker and client ran; durable-agent pending listed the Write, approve let it run`;
    },
  },
  {
    name: 'encryption',
    async drive(app) {
      const keys = { DURABLE_AGENT_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` };
      const main = app.start('start', [], keys);
      const code = await main.exit;
      const out = main.output();
      expect(code === 0, `npm start exited ${code}:\n${out}`);
      expect(
        /encodings binary\/encrypted; the secret in the clear: no/.test(out) &&
          /the codec server decoded \d+ payloads; the prompt is #\d+/.test(out),
        `npm start did not show a sealed history opened by the codec server:\n${out}`,
      );
      const sessionId = /^session (\S+)/m.exec(out)?.[1];
      const sealed = /^sealed prompt payload: (.+)$/m.exec(out)?.[1];
      expect(sessionId && sealed, `npm start printed no session id or payload:\n${out}`);

      const inspected = app.run('npx', ['durable-agent', 'inspect', sessionId, '--json'], keys);
      const timeline = JSON.parse(inspected) as { prompts?: { prompt: string }[] };
      expect(
        timeline.prompts?.[0]?.prompt === 'Remember my card 4111-1111-1111-1111.',
        `durable-agent inspect with the key did not show the prompt:\n${inspected}`,
      );
      let refused = '';
      try {
        app.run('npx', ['durable-agent', 'inspect', sessionId], {
          DURABLE_AGENT_ENCRYPTION_KEYS: '',
        });
      } catch (error) {
        refused = String((error as { stderr?: string }).stderr);
      }
      expect(refused.includes('k1'), `inspect without the key did not name k1: ${refused}`);

      // The standing codec server the Web UI is pointed at, with the same ring.
      const token = randomBytes(24).toString('base64url');
      const port = await freePort();
      const codec = app.start('codec-server', ['--port', String(port)], {
        ...keys,
        DURABLE_AGENT_CODEC_TOKEN: token,
      });
      const [, url] = await codec.waitFor(/codec server: (http:\S+)/);
      const decode = (auth: string) =>
        fetch(`${url}/decode`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            Authorization: auth,
            // The CLI's server serves one namespace, named in the header as the Web UI sends it.
            'X-Namespace': 'default',
          },
          body: JSON.stringify({ payloads: [JSON.parse(sealed)] }),
        });
      const denied = await decode('Bearer wrong-token-0123456789');
      const opened = (await (await decode(`Bearer ${token}`)).json()) as {
        payloads?: { data: string }[];
      };
      const text = Buffer.from(opened.payloads?.[0]?.data ?? '', 'base64').toString();
      expect(denied.status === 401, `the codec server answered ${denied.status} to a bad token`);
      expect(text.includes('4111-1111'), `npm run codec-server did not decode the prompt: ${text}`);
      await codec.stop();
      return (
        'the history was sealed, inspect read it with the key and named k1 without it, ' +
        'npm run codec-server decoded the prompt with its token (401 without)'
      );
    },
  },
  {
    name: 'session-inbox',
    async drive(app) {
      const main = app.start('start');
      const [, sessionId] = await main.waitFor(/^session (\S+): its Write call waits/m);
      const [, url] = await main.waitFor(/open the inbox and approve it: (http\S+)/);
      // A person in headless Chromium: open the printed address, type a name, press Approve.
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(url!);
        await page.getByTestId('name').fill('alice');
        const card = page.locator('[data-testid=request][data-tool=Write]');
        await card.getByTestId('approve').click();
        const code = await main.exit;
        const out = main.output();
        expect(code === 0, `npm start exited ${code}:\n${out}`);
        expect(
          out.includes('[completed] The Write call ended') &&
            out.includes('tool call Write: success'),
          `the approved Write did not run:\n${out}`,
        );
      } finally {
        await browser.close();
      }
      expect(existsSync(join(app.dir, 'TODO.md')), 'the approved Write made no TODO.md');
      const inspected = app.run('npx', ['durable-agent', 'inspect', sessionId!]);
      expect(
        inspected.includes('person ui:alice'),
        `inspect does not show ui:alice as who approved:\n${inspected}`,
      );
      return 'the inbox page in headless Chromium approved the Write as ui:alice; it ran';
    },
  },
  {
    name: 'browser-chat',
    async drive(app) {
      const server = app.start('start');
      const [, url] = await server.waitFor(/chat on (http\S+) \(session/);
      const browser = await launchChromium();
      let shown: string;
      try {
        const page = await browser.newPage();
        await page.goto(url!);
        await page.locator('#prompt').fill('What is in this folder?');
        await page.locator('#send').click();
        const done = page.locator('.done');
        await done.waitFor({ timeout: 60_000 });
        shown = await page.locator('#log').innerText();
        const status = await done.getAttribute('data-status');
        const pieces = Number(/\((\d+) pieces streamed\)/.exec(shown)?.[1] ?? 0);
        expect(status === 'completed', `the page ended with ${status}:\n${shown}`);
        expect(
          shown.includes('running Glob') &&
            shown.includes('Glob: success') &&
            /This folder holds \d+ entries\./.test(shown),
          `the page did not show the tool and the reply:\n${shown}`,
        );
        expect(pieces > 1, `the reply reached the page in ${pieces} piece(s), not streamed`);
      } finally {
        await browser.close();
      }
      await server.stop();
      expect(server.output().includes('stopped'), `npm start did not stop:\n${server.output()}`);
      return 'headless Chromium sent a prompt and showed the tool call and the streamed reply';
    },
  },
  {
    name: 'cluster',
    skip() {
      const binaries = join(repo, '.temporal', 'cluster', `v${TEMPORAL_SERVER_VERSION}`, 'bin');
      if (!existsSync(join(binaries, 'server'))) {
        return 'cluster binaries not built (npx tsx scripts/cluster.ts build)';
      }
      if (!existsSync('/usr/lib/postgresql'))
        return 'no PostgreSQL (apt-get install -y postgresql)';
      return undefined;
    },
    async drive(app) {
      // The binaries this clone built; a folder PostgreSQL's user can reach (not under tmp).
      const clusterEnv = { DURABLE_AGENT_CACHE_DIR: join(repo, '.temporal') };
      const clusterDir = mkdtempSync(join(tmpdir(), 'durable-agent-examples-cluster-'));
      const port = await freeClusterPort();
      try {
        const exports = app.run(
          'npm',
          [
            'run',
            '-s',
            'cluster',
            '--',
            'start',
            '--tls',
            '--dir',
            clusterDir,
            '--port',
            String(port),
          ],
          clusterEnv,
        );
        // What `eval "$(npm run -s cluster -- start --tls)"` sets.
        const exported = Object.fromEntries(
          [...exports.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]),
        );
        expect(
          exported.TEMPORAL_ADDRESS === `127.0.0.1:${port}` &&
            exported.TEMPORAL_TLS_CLIENT_CERT_PATH,
          `cluster start printed no TLS exports:\n${exports}`,
        );
        const main = app.start('start', [], exported);
        const code = await main.exit;
        const out = main.output();
        expect(code === 0, `npm start exited ${code}:\n${out}`);
        expect(
          out.includes('PreToolUse Read {"file_path":"package.json"}') &&
            out.includes('[completed] This app is durable-agent-example-cluster.') &&
            out.includes('session closed'),
          `the session on the cluster did not run as the README says:\n${out}`,
        );
        const sessionId = /^session (\S+)/m.exec(out)?.[1];
        const listed = app.run(
          'npx',
          ['durable-agent', 'sessions', '--agent', 'cluster-example'],
          exported,
        );
        expect(
          sessionId && listed.includes(sessionId),
          `durable-agent sessions did not list ${sessionId}:\n${listed}`,
        );
      } finally {
        app.run(
          'npm',
          ['run', '-s', 'cluster', '--', 'stop', '--dir', clusterDir, '--clean'],
          clusterEnv,
        );
      }
      return 'cluster start --tls from the installed package; the session ran over mTLS; sessions listed it; stop --clean';
    },
  },
];

const selected = examples.filter((e) => only.length === 0 || only.includes(e.name));
const tmp = mkdtempSync(join(tmpdir(), 'durable-agent-examples-'));
let server: DevServer | undefined;
let failed = 0;
const started = performance.now();
try {
  const tarball = packBuild(repo, tmp);

  let address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    server = await startDevServer({ cacheDir: join(repo, '.temporal') });
    address = server.address;
  }

  for (const example of selected) {
    const skipped = example.skip?.();
    if (skipped) {
      console.log(`check-examples: skipped: ${example.name}: ${skipped}`);
      continue;
    }
    const exampleStarted = performance.now();
    const dir = join(tmp, example.name);
    cpSync(join(repo, 'examples', example.name), dir, {
      recursive: true,
      filter: (source) => !source.includes('node_modules'),
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      EXAMPLE_TASK_QUEUE: `check-examples-${example.name}-${process.pid}`,
      // The installed package's own workflow bundle, not one a CI variable names.
      DURABLE_AGENT_WORKFLOW_BUNDLE: '',
    };
    const run = (command: string, commandArgs: string[], extraEnv?: NodeJS.ProcessEnv) =>
      execFileSync(command, commandArgs, {
        cwd: dir,
        env: { ...env, ...extraEnv },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 120_000,
      });
    try {
      run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund']);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      expect(
        manifest.dependencies['durable-agent-sdk']?.startsWith('file:'),
        'npm install <tgz> did not point durable-agent-sdk at the tarball',
      );
      run('npx', ['tsc', '--noEmit']);
      const app: App = {
        dir,
        env,
        run,
        start: (script, scriptArgs = [], extraEnv) =>
          startProcess(script, scriptArgs, dir, { ...env, ...extraEnv }),
      };
      const what = await example.drive(app);
      const seconds = ((performance.now() - exampleStarted) / 1000).toFixed(1);
      console.log(
        `check-examples: ok: ${example.name} (${seconds} s): tsc --noEmit clean; ${what}`,
      );
    } catch (error) {
      failed++;
      const e = error as { stderr?: string; stdout?: string; message: string };
      console.error(
        `check-examples: FAILED: ${example.name}: ${e.message}${e.stderr ? `\n${e.stderr}` : ''}${e.stdout ? `\n${e.stdout}` : ''}`,
      );
    } finally {
      for (const handle of [...running]) {
        await handle.stop();
      }
    }
  }
} finally {
  for (const handle of [...running]) await handle.stop();
  await server?.stop();
  if (keep) console.log(`check-examples: kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}
const total = ((performance.now() - started) / 1000).toFixed(1);
if (failed > 0) {
  console.error(`check-examples: ${failed} of ${selected.length} failed (${total} s)`);
  process.exit(1);
}
console.log(`check-examples: ${selected.length} examples ok (${total} s)`);
