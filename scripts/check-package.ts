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
 * 4. The installed package's cluster command runs (`npx tsx
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
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
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

function fail(message: string): never {
  console.error(`check-package: FAILED: ${message}`);
  process.exit(1);
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
      files: ['first-agent.ts'],
    }),
  );
  // The repo's TypeScript, on the app's files: the app's zod must fit defineTool's types.
  run(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
  ok('first-agent.ts (defineTool with the app’s own zod) type-checks against the package');

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

  // 4. The cluster command of the installed package.
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
    // fail() exits at once: the cluster is stopped before any failure is reported.
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
