/**
 * `durable-agent ui`: the session page (src/ui) on the command's connection, until a signal.
 *
 * @module
 */
import { DEFAULT_UI_PORT, UI_TOKEN_VARIABLE } from '../cli-defaults.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { openClient } from '../client.js';

/**
 * `ui`: the session page (src/ui) on this command's connection and key ring, until a signal.
 * The token is `DURABLE_AGENT_UI_TOKEN`'s, else a random one; both are printed in the URL.
 */
export async function sessionUi(args: CommandArgs, io: CliOutput): Promise<number> {
  const token = process.env[UI_TOKEN_VARIABLE];
  if (token !== undefined && token.length < 16) {
    throw new CliError(`${UI_TOKEN_VARIABLE} must have at least 16 characters`);
  }
  const { client, connection } = await openClient(args);
  const port = args.port ?? DEFAULT_UI_PORT;
  let ui;
  try {
    const { createSessionUi } = await import('../../ui/index.js');
    ui = await createSessionUi({
      client,
      port,
      host: args.host ?? '127.0.0.1',
      timeoutMs: args.timeoutMs,
      ...(token ? { token } : {}),
      ...(args.limit !== undefined ? { limit: args.limit } : {}),
      ...(args.taskQueue !== undefined ? { taskQueue: args.taskQueue } : {}),
      ...(args.identity !== undefined ? { identity: args.identity } : {}),
    });
  } catch (error) {
    await connection.close().catch(() => undefined);
    if ((error as { code?: unknown }).code === 'EADDRINUSE') {
      throw new CliError(`port ${port} is in use: pass another --port`, { cause: error });
    }
    throw new CliError(oneLine(error), { cause: error });
  }
  io.out(`session page: ${ui.loginUrl}`);
  io.out(
    `(namespace ${args.namespace} at ${args.address}; open the address once: the token is then kept in a cookie` +
      `${token ? '' : `; set ${UI_TOKEN_VARIABLE} to choose it`})`,
  );
  io.out('Press Ctrl-C to stop.');
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const signal = await new Promise<string>((resolveSignal) => {
    for (const s of signals) process.once(s, () => resolveSignal(s));
  });
  io.err(`stopping (${signal}) ...`);
  await ui.close();
  await connection.close().catch(() => undefined);
  return 0;
}
