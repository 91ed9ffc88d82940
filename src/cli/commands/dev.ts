/**
 * `durable-agent dev`: the embedded Temporal dev server and a worker for an agent module,
 * until a signal.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAgentModule } from '../agent-module.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import type { AgentOptions } from '../../definition/options.js';
import type { DevServer } from '../../server/dev-server.js';
import type { AgentWorker } from '../../worker/worker.js';

/** The signals that stop `dev`. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * `dev`: the embedded dev server and a worker for the module's agent until a signal (the
 * worker stops first, so in-flight activities finish) or until the worker fails.
 * @returns the exit code.
 */
export async function dev(args: CommandArgs, io: CliOutput): Promise<number> {
  if (args.addressGiven) {
    throw new CliError('dev starts its own server: --address does not apply', { usage: true });
  }
  const modulePath = resolve(args.args[0]!);
  if (!existsSync(modulePath)) throw new CliError(`no such file: ${args.args[0]}`);
  const options = await loadAgentModule(modulePath, args.args[0]!);
  const [{ startDevServer }, { createAgentWorker }] = await Promise.all([
    import('../../server/dev-server.js'),
    import('../../agent/agent.js'),
  ]);

  // The dev server installs signal handlers that kill it and exit at once; ours stop the
  // worker first, so in-flight activities finish. The server's 'exit' hook stays as a net.
  const before = new Map(STOP_SIGNALS.map((s) => [s, new Set(process.rawListeners(s))]));
  const server = await startDevServer({
    namespace: args.namespace,
    ...(args.ui ? { ui: true } : {}),
    ...(args.db !== undefined ? { dbFilename: resolve(args.db) } : {}),
    log: (line) => io.err(line),
  });
  for (const signal of STOP_SIGNALS) {
    for (const listener of process.rawListeners(signal)) {
      if (!before.get(signal)!.has(listener)) {
        process.removeListener(signal, listener as (...a: unknown[]) => void);
      }
    }
  }
  const stopping = stopRequested(server);

  let worker;
  try {
    worker = await createAgentWorker(devWorkerOptions(options, args, server));
  } catch (error) {
    await server.stop();
    throw error;
  }
  printRouting(args, io, server, worker);

  const crashed = worker.done.then(
    () => ({ failed: false, why: 'the worker stopped' }),
    (error: unknown) => ({ failed: true, why: `the worker failed: ${oneLine(error)}` }),
  );
  const end = await Promise.race([
    stopping.then((signal) => ({ failed: false, why: signal })),
    crashed,
  ]);
  if (end.failed) {
    await server.stop();
    throw new CliError(end.why);
  }
  io.err(`stopping (${end.why}) ...`);
  await worker.shutdown().catch(() => undefined);
  await server.stop();
  io.err('stopped');
  return 0;
}

/**
 * Resolves with the first stop signal's name; a second signal while stopping stops the
 * server now and leaves (exit 130).
 */
function stopRequested(server: DevServer): Promise<string> {
  let requested!: (signal: string) => void;
  const stopping = new Promise<string>((resolveStop) => (requested = resolveStop));
  // A second signal while stopping: stop the server now and leave.
  const forceStop = () => void server.stop().finally(() => process.exit(130));
  const onSignal = (signal: NodeJS.Signals) => {
    for (const s of STOP_SIGNALS) {
      process.removeListener(s, onSignal);
      process.once(s, forceStop);
    }
    requested(signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return stopping;
}

/** The module's agent options, on the dev server (plain) and `--versioning`. */
function devWorkerOptions(
  options: AgentOptions,
  args: CommandArgs,
  server: DevServer,
): AgentOptions {
  return {
    ...options,
    advanced: {
      ...options.advanced,
      temporal: {
        ...options.advanced?.temporal,
        ...(args.versioning !== undefined ? { versioning: args.versioning } : {}),
        address: server.address,
        namespace: args.namespace,
        // The dev server is plain: the module's and the environment's TLS are not for it.
        envConfig: false,
        tls: false,
        apiKey: undefined,
        metadata: undefined,
      },
    },
  };
}

/** What runs where: the server, its UI, the worker's task queue and routing. */
function printRouting(
  args: CommandArgs,
  io: CliOutput,
  server: DevServer,
  worker: AgentWorker,
): void {
  io.out(`Temporal dev server: ${server.address} (namespace ${args.namespace})`);
  if (server.uiUrl) io.out(`Web UI: ${server.uiUrl}`);
  io.out(`Worker: ${args.args[0]} on task queue '${worker.taskQueue}'`);
  io.out(
    worker.versioning === 'deployments'
      ? `Routing: Worker Deployment version '${worker.agentName}.${worker.version}' (sessions pinned)`
      : `Routing: unversioned (versioning off)`,
  );
  io.out(`Try: durable-agent sessions --address ${server.address}`);
  io.out('Press Ctrl-C to stop.');
}
